/**
 * `gguf pack`: a qwen3 GGUF to a model directory (model.q4nx, config.json, tokenizer.json). Everything
 * is written into a sibling temp directory and renamed into place at the end, so a failure (the
 * declared-scale guard, a bad tensor, a full disk) leaves no half-written directory behind. The guard
 * runs before any byte is written: config.json derives from metadata alone.
 */
import { copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { EngineError, InvalidInput, UsageError, WriteFailed } from '../../errors/index.js';
import { fileKind, isRegularFile } from '../../io/files.js';
import { ensureDir, writeError, writeOutputFile } from '../../io/write.js';
import { openGguf } from '../gguf/reader.js';
import { scanDeclaredScales } from '../gguf/scaleGuard.js';
import type { GgufFile } from '../gguf/types.js';
import { logicalShapeKey } from '../q4nx/chunks.js';
import { packConfig, packTensors } from './arch.js';
import { requirePackable } from './config.js';
import { convertTensor } from './convert.js';
import { FileReader } from './fileRange.js';
import { converterLabel } from './identity.js';
import { refuseOwnInput, refuseToReplace } from './outDir.js';
import { STORED_DTYPE, storedShape, type PlannedTensor } from './plan.js';
import { Q4nxStreamWriter } from './q4nxStream.js';

/** Progress of a pack: source bytes converted so far, of the total, and the tensor being converted. */
export interface PackProgress {
  readonly doneBytes: number;
  readonly totalBytes: number;
  readonly tensor: string;
  readonly tensorIndex: number;
  readonly tensorCount: number;
}

/** Options of packGguf. */
export interface PackOptions {
  /** A directory holding tokenizer.json (or the tokenizer.json file itself). */
  readonly tokenizer?: string;
  /** Replace an output directory that holds a previous pack's files (and nothing else). */
  readonly force?: boolean;
  /** @internal The output directory is the repack cache's own slot: replaced whatever it holds. */
  readonly slot?: boolean;
  readonly onProgress?: (p: PackProgress) => void;
  /** Extra files written into the directory before it is renamed into place (the cache's stamp). */
  readonly extraFiles?: Readonly<Record<string, string>>;
}

/** What packGguf wrote. */
export interface PackResult {
  readonly dir: string;
  readonly tensors: number;
  readonly sourceBytes: number;
  readonly outputBytes: number;
  readonly ms: number;
  /** Non-fatal findings of the declared-scale guard. */
  readonly warnings: readonly string[];
}

/** The derived pieces of a pack, from metadata only: the plan, config.json and the guard's findings. */
export interface PackPlan {
  readonly architecture: string;
  readonly tensors: readonly PlannedTensor[];
  readonly config: Record<string, unknown>;
  readonly warnings: readonly string[];
}

/** Plans a pack from an opened GGUF's header; refuses an architecture pack does not convert or a dropped critical scale. */
export function planPack(f: GgufFile, ggufPath: string): PackPlan {
  const architecture = requirePackable(f.metadata);
  const tensors = packTensors(f);
  const config = packConfig(f, basename(ggufPath), converterLabel());
  const { fatal, warnings } = scanDeclaredScales(f.metadata, config);
  if (fatal.length > 0) {
    throw new InvalidInput('config.json', `declared-scale guard: ${fatal.join('; ')}`);
  }
  return { architecture, tensors, config, warnings };
}

/** The tokenizer.json a --tokenizer argument names (a directory holding it, or the file). */
export function tokenizerFile(arg: string): string {
  let isDir: boolean;
  try { isDir = statSync(arg).isDirectory(); } catch { throw new UsageError(`--tokenizer ${arg}: no such file or directory`); }
  const file = isDir ? join(arg, 'tokenizer.json') : arg;
  if (!existsSync(file)) throw new UsageError(`--tokenizer ${arg}: there is no tokenizer.json in it`);
  // A FIFO or a device would hang the copy or never end it.
  if (!isRegularFile(file)) throw new UsageError(`--tokenizer ${arg}: ${file} is ${fileKind(statSync(file))}, not a regular file`);
  return file;
}

/** A file-system failure while writing the output, typed and naming the directory. */
function writeFailure(outDir: string, e: unknown): unknown {
  const isFsError = typeof (e as NodeJS.ErrnoException | undefined)?.syscall === 'string';
  if (e instanceof WriteFailed) return new WriteFailed(outDir, e.reason);
  // A full disk is WriteFailed (exit 1), a path that cannot be written a UsageError; both name outDir.
  return e instanceof EngineError || !isFsError ? e : writeError(outDir, e, (p, why) => new UsageError(`cannot write ${p}: ${why}`));
}

const tag = (): string => `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

/** Moves a finished temp directory to `dir`, replacing what is there. */
function swapInto(tmp: string, dir: string): void {
  if (!existsSync(dir)) { renameSync(tmp, dir); return; }
  // Only a directory refuseToReplace accepted gets here: a previous pack, or the cache's own slot.
  const old = `${dir}.old-${tag()}`;
  renameSync(dir, old);
  renameSync(tmp, dir);
  rmSync(old, { recursive: true, force: true });
}

function writeModel(ggufPath: string, plan: PackPlan, tmp: string, onProgress?: (p: PackProgress) => void): { source: number; output: number } {
  const meta: Record<string, string> = { format: 'q4nx', source: basename(ggufPath), converter: converterLabel() };
  for (const t of plan.tensors) if (t.store === 'q4_1') meta[logicalShapeKey(t.name)] = `${t.rows},${t.cols}`;
  const w = new Q4nxStreamWriter(join(tmp, 'model.q4nx'), plan.tensors.map((t) => ({ name: t.name, dtype: STORED_DTYPE[t.store], shape: storedShape(t) })), meta);
  const reader = new FileReader(ggufPath);
  const totalBytes = plan.tensors.reduce((s, t) => s + t.source.byteSize, 0);
  let doneBytes = 0;
  let output = 0;
  try {
    plan.tensors.forEach((t, i) => {
      onProgress?.({ doneBytes, totalBytes, tensor: t.name, tensorIndex: i, tensorCount: plan.tensors.length });
      convertTensor(reader, t, (b, src) => {
        w.write(b);
        output += b.length;
        doneBytes += src;
        onProgress?.({ doneBytes, totalBytes, tensor: t.name, tensorIndex: i, tensorCount: plan.tensors.length });
      });
    });
    w.finish();
  } catch (e) {
    w.abort();
    throw e;
  } finally {
    reader.close();
  }
  return { source: totalBytes, output };
}

/** Packs a GGUF (qwen3, llama, qwen2, phi3, minicpm, gemma3) into a model directory `outDir`; nothing is left behind when it fails. */
export function packGguf(ggufPath: string, outDir: string, opts: PackOptions = {}): PackResult {
  const started = performance.now();
  const dir = resolve(outDir);
  const tokenizer = opts.tokenizer === undefined ? null : tokenizerFile(opts.tokenizer);
  refuseOwnInput(outDir, { gguf: ggufPath, tokenizer });
  refuseToReplace(outDir, { force: opts.force === true, slot: opts.slot === true });
  const f = openGguf(ggufPath);
  try {
    const plan = planPack(f, ggufPath);
    ensureDir(dirname(dir));
    const tmp = `${dir}.partial-${tag()}`;
    ensureDir(tmp, (_p, why) => new UsageError(`cannot write ${outDir}: ${why}`));
    try {
      const sizes = writeModel(ggufPath, plan, tmp, opts.onProgress);
      writeOutputFile(join(tmp, 'config.json'), JSON.stringify(plan.config, null, 2) + '\n');
      if (tokenizer !== null) {
        copyFileSync(tokenizer, join(tmp, 'tokenizer.json'));
        const extra = join(dirname(tokenizer), 'tokenizer_config.json');
        if (isRegularFile(extra)) copyFileSync(extra, join(tmp, 'tokenizer_config.json'));
      }
      for (const [name, text] of Object.entries(opts.extraFiles ?? {})) writeOutputFile(join(tmp, name), text);
      swapInto(tmp, dir);
      return {
        dir, tensors: plan.tensors.length, sourceBytes: sizes.source, outputBytes: sizes.output,
        ms: Math.round(performance.now() - started), warnings: plan.warnings,
      };
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      throw writeFailure(outDir, e);
    }
  } finally {
    f.close();
  }
}
