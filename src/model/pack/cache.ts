/**
 * The repack cache: `gguf pack MODEL.gguf --cache` packs into `<cache dir>/q4nx/<key>/`, where the
 * cache dir is src/cache/defaultDir.ts's ($NPU_OFFLOAD_CACHE_DIR, $XDG_CACHE_HOME/npu-offload or
 * ~/.cache/npu-offload, never the cwd) and the key is the first 16 hex digits of the sha256 of the
 * GGUF's real path: one slot per model file, so a changed file is rebuilt in place rather than piling
 * up. Every hit is checked again, from metadata only: the stamp (converter, architecture, source,
 * tokenizer), the declared-scale guard over the cached config.json, config.json against what this
 * build derives, and the presence of model.q4nx (its header must parse) and tokenizer.json. Any
 * failure rebuilds the slot (pack writes a temp dir and swaps it in).
 */
import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { withSlotLock } from './slotLock.js';
import { defaultCacheDir } from '../../cache/defaultDir.js';
import { messageOf, UsageError } from '../../errors/index.js';
import { readRegularFile } from '../../io/files.js';
import { ensureDir } from '../../io/write.js';
import { openGguf } from '../gguf/reader.js';
import { scanDeclaredScales } from '../gguf/scaleGuard.js';
import type { GgufFile } from '../gguf/types.js';
import { readQ4nxHeader } from '../q4nx/container.js';
import { packGguf, planPack, tokenizerFile, type PackProgress, type PackResult } from './pack.js';
import { STAMP_FILE, checkStamp, currentStamp, fileSha256, formatStamp, sourceIdentity } from './stamp.js';
import { parseJsonFile } from '../../ir/jsonText.js';

/** The directory that holds cached model directories: `<cache dir>/q4nx`. */
export function q4nxCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(defaultCacheDir(env), 'q4nx');
}

/** The cache key of a GGUF: 16 hex digits of the sha256 of its real path. */
export function cacheKey(ggufPath: string): string {
  let real: string;
  try { real = realpathSync(ggufPath); } catch { throw new UsageError(`cannot read ${ggufPath}: no such file`); }
  return createHash('sha256').update(real).digest('hex').slice(0, 16);
}

/** Options of packCached. */
export interface CachedPackOptions {
  readonly tokenizer?: string;
  /** The q4nx cache root; q4nxCacheRoot() by default. */
  readonly cacheRoot?: string;
  readonly onProgress?: (p: PackProgress) => void;
}

/** What packCached did: a hit, or a (re)build and why. */
export interface CachedPackResult {
  readonly dir: string;
  readonly hit: boolean;
  /** Why the slot was (re)built; empty on a hit. */
  readonly reasons: readonly string[];
  readonly pack: PackResult | null;
  readonly warnings: readonly string[];
}

/** Why a cached directory cannot be reused (empty when it can), from metadata and small files only. */
export function cachedDirProblems(dir: string, f: GgufFile, ggufPath: string, tokenizerSha256: string | undefined | null): string[] {
  if (!existsSync(dir)) return ['not cached yet'];
  const plan = planPack(f, ggufPath);
  const verdict = checkStamp(dir, { architecture: plan.architecture, source: sourceIdentity(ggufPath), ...(tokenizerSha256 !== undefined ? { tokenizerSha256 } : {}) });
  const problems = verdict.status === 'current' ? [] : [`stamp ${verdict.status}: ${verdict.reasons.join('; ')}`];
  let config: unknown;
  try { config = parseJsonFile(readRegularFile(join(dir, 'config.json')).toString('utf8'), join(dir, 'config.json')); } catch { problems.push('config.json is missing, not JSON or nested too deep'); }
  if (typeof config === 'object' && config !== null && !Array.isArray(config)) {
    const { fatal } = scanDeclaredScales(f.metadata, config);
    if (fatal.length > 0) problems.push(`declared-scale scan failed: ${fatal.join('; ')}`);
    const have = config as Record<string, unknown>;
    for (const [k, v] of Object.entries(plan.config)) {
      if (k !== 'q4nx_source' && JSON.stringify(have[k]) !== JSON.stringify(v)) problems.push(`config.json ${k} is ${JSON.stringify(have[k])}, not ${JSON.stringify(v)}`);
    }
  } else if (config !== undefined) problems.push('config.json is not a JSON object');
  try { readQ4nxHeader(join(dir, 'model.q4nx')); } catch (e) { problems.push(`model.q4nx: ${messageOf(e)}`); }
  if (verdict.stamp?.tokenizerSha256 && !existsSync(join(dir, 'tokenizer.json'))) problems.push('tokenizer.json is missing');
  return problems;
}

/**
 * Packs a GGUF into its cache slot, or reuses the slot when every check passes. One process at a time
 * checks and fills a slot; another waits for it and then finds the hit.
 */
export function packCached(ggufPath: string, opts: CachedPackOptions = {}): CachedPackResult {
  const root = opts.cacheRoot ?? q4nxCacheRoot();
  const dir = join(root, cacheKey(ggufPath));
  // A non-qwen3 model or a dropped critical scale is refused before the cache is touched at all.
  const f = openGguf(ggufPath);
  try { planPack(f, ggufPath); } finally { f.close(); }
  ensureDir(root);
  return withSlotLock(dir, () => packSlot(ggufPath, dir, opts));
}

function packSlot(ggufPath: string, dir: string, opts: CachedPackOptions): CachedPackResult {
  const tokenizer = opts.tokenizer === undefined ? null : tokenizerFile(opts.tokenizer);
  const tokSha = tokenizer === null ? null : fileSha256(tokenizer);
  const f = openGguf(ggufPath);
  let reasons: string[];
  let architecture: string;
  try {
    // Planning first: a non-qwen3 model or a dropped critical scale is refused before the cache is touched.
    const plan = planPack(f, ggufPath);
    architecture = plan.architecture;
    reasons = cachedDirProblems(dir, f, ggufPath, tokenizer === null ? undefined : tokSha);
    if (reasons.length === 0) return { dir, hit: true, reasons: [], pack: null, warnings: plan.warnings };
  } finally {
    f.close();
  }
  const stamp = formatStamp(currentStamp(architecture, sourceIdentity(ggufPath), tokSha));
  const pack = packGguf(ggufPath, dir, {
    force: true, slot: true, extraFiles: { [STAMP_FILE]: stamp },
    ...(opts.tokenizer !== undefined ? { tokenizer: opts.tokenizer } : {}),
    ...(opts.onProgress !== undefined ? { onProgress: opts.onProgress } : {}),
  });
  return { dir, hit: false, reasons, pack, warnings: pack.warnings };
}
