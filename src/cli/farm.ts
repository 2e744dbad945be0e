/**
 * `npu-offload farm DIR --target T [--workers N]`: compiles every program under DIR into the blob cache,
 * in parallel, with a progress bar on a terminal and a summary at the end. A second run is all hits.
 * Files whose JSON is not a program (`"format": "program@1"`), such as inputs files, are skipped.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import PQueue from 'p-queue';
import { asEngineError, createEngine } from '../jobs/engine.js';
import { parseProgramText } from '../ir/codec.js';
import { CacheUnavailable, UsageError } from '../errors/index.js';
import { readText } from './files.js';
import type { Io } from './output.js';
import { EXIT, errorJson } from './output.js';

export interface FarmOptions {
  readonly target: string;
  readonly workers?: number;
  readonly cacheDir?: string;
  /** A shared cache tier behind the local one, `redis://host:port/db`. */
  readonly remoteCache?: string;
  readonly json?: boolean;
  /** Show the progress bar (default: when stderr is a terminal and not --json). */
  readonly progress?: boolean;
}

export interface FarmSummary {
  readonly programs: number;
  readonly hits: number;
  readonly compiled: number;
  readonly skipped: number;
  readonly refused: readonly { readonly file: string; readonly error: Record<string, unknown> }[];
  readonly ms: number;
}

/** Every .json file under `dir`, recursively, in name order. */
export function jsonFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const ent of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (ent.isFile() && ent.name.endsWith('.json')) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** False for a JSON file that is not a program (an inputs file); broken JSON counts as a program, to be refused. */
export function isProgramJson(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && (v as { format?: unknown }).format === 'program@1';
  } catch {
    return true; // broken JSON in a farm directory is reported, not skipped
  }
}

/** Throws UsageError unless `dir` is a directory. */
export function requireDir(dir: string): void {
  let isDir = false;
  try { isDir = statSync(dir).isDirectory(); } catch { /* reported below */ }
  if (!isDir) throw new UsageError(`${dir} is not a directory`);
}

/** Prints a farm's summary (one JSON document, or refusals and one line) and returns the exit code. */
export function reportFarm(summary: FarmSummary, target: string, opts: { json?: boolean; listRefusals: boolean; where?: string }, io: Io): number {
  if (opts.json) io.out(JSON.stringify(summary));
  else {
    if (opts.listRefusals) for (const r of summary.refused) io.err(`refused ${r.file}: [${String(r.error['code'])}]`);
    io.out(`farm: ${summary.programs} programs for ${target}: ${summary.hits} cache hits, ${summary.compiled} compiled, ${summary.refused.length} refused${summary.skipped ? `, ${summary.skipped} other files skipped` : ''}${opts.where ?? ''} in ${summary.ms} ms`);
  }
  return summary.refused.length > 0 ? EXIT.refused : EXIT.ok;
}

/** Compiles a directory of programs into the cache; exit 1 when any program was refused. */
export async function farmCommand(dir: string, opts: FarmOptions, io: Io): Promise<number> {
  requireDir(dir);
  const workers = opts.workers ?? 2;
  if (!(Number.isInteger(workers) && workers >= 1)) throw new UsageError(`--workers must be a whole number of at least 1, got ${String(opts.workers)}`);
  const started = performance.now();
  const files = jsonFiles(dir);
  const engine = createEngine({
    workers,
    ...(opts.cacheDir !== undefined ? { cacheDir: opts.cacheDir } : {}),
    ...(opts.remoteCache !== undefined ? { remoteCache: opts.remoteCache, onWarning: (m: string) => io.err(`warning: ${m}`) } : {}),
  });
  const showBar = opts.progress ?? (!opts.json && process.stderr.isTTY === true);
  const bar = showBar ? new SingleBar({ format: 'farm {bar} {value}/{total} programs | {hits} hits, {compiled} compiled, {refused} refused', stream: process.stderr }, Presets.shades_classic) : null;
  let hits = 0, compiled = 0, skipped = 0;
  const refused: { file: string; error: Record<string, unknown> }[] = [];
  // A cache that cannot open fails every program alike: it is the farm's failure, reported once.
  let unavailable: CacheUnavailable | null = null;
  try {
    bar?.start(files.length, 0, { hits, compiled, refused: 0 });
    const queue = new PQueue({ concurrency: workers * 2 });
    await queue.addAll(files.map((file) => async () => {
      const name = relative(dir, file);
      try {
        const text = readText(file);
        if (!isProgramJson(text)) { skipped++; return; }
        const r = await engine.compileOnly(parseProgramText(text), opts.target);
        if (r.hit) hits++; else compiled++;
      } catch (e) {
        const err = asEngineError(e);
        if (err instanceof CacheUnavailable) { unavailable ??= err; queue.clear(); return; }
        refused.push({ file: name, error: errorJson(err).error });
        if (!opts.json && !bar) io.err(`refused ${name}: [${err.code}] ${err.message}`);
      } finally {
        bar?.increment(1, { hits, compiled, refused: refused.length });
      }
    }));
  } finally {
    bar?.stop();
    await engine.close();
  }
  if (unavailable !== null) throw unavailable;
  refused.sort((a, b) => a.file.localeCompare(b.file));
  const summary: FarmSummary = { programs: files.length - skipped, hits, compiled, skipped, refused, ms: Math.round(performance.now() - started) };
  return reportFarm(summary, opts.target, { ...(opts.json ? { json: true } : {}), listRefusals: bar !== null }, io);
}
