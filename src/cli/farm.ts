/**
 * `npu-offload farm DIR --target T [--workers N]`: compiles every program under DIR into the blob cache,
 * in parallel, with a progress bar on a terminal and a summary at the end. A second run is all hits.
 * Files whose JSON is not a program (`"format": "program@1"`), such as inputs files, are skipped.
 */
import { relative } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import PQueue from 'p-queue';
import { parseProgramText } from '../ir/codec.js';
import { resolveLimits } from '../ir/limits.js';
import { CacheUnavailable, UsageError } from '../errors/index.js';
import { readText } from './files.js';
import type { CliCommand } from './command.js';
import { checkWorkers, limitsOfFlags, type LimitFlags } from './limits.js';
import { cacheDirOption, intOption, jsonOption, redisUrlOption, targetOption, withLimitFlags } from './options.js';
import type { Io } from './output.js';
import { errorJson } from './output.js';
import { isProgramJson, jsonFiles, reportFarm, requireDir, type FarmSummary } from './farmSummary.js';


// A timer cannot wait longer (setTimeout fires at once past it): the bound of --timeout.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** An option's flag as typed (`noticeMs`: `--notice-ms`). */
const flagOf = (key: string): string => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

interface FarmOptions extends LimitFlags {
  readonly target: string;
  readonly workers?: number;
  readonly cacheDir?: string;
  /** A shared cache tier behind the local one, `redis://host:port/db`. */
  readonly remoteCache?: string;
  readonly json?: boolean;
  /** Show the progress bar (default: when stderr is a terminal and not --json). */
  readonly progress?: boolean;
}

/** Compiles a directory of programs into the cache; exit 1 when any program was refused. */
async function farmCommand(dir: string, opts: FarmOptions, io: Io): Promise<number> {
  requireDir(dir);
  const workers = checkWorkers(opts.workers, 2);
  const limits = resolveLimits(limitsOfFlags(opts));
  const started = performance.now();
  const files = jsonFiles(dir);
  // Loaded once the flags and the directory are found good: a refused farm does not pay for the engine.
  const { asEngineError, createEngine } = await import('../jobs/engine.js');
  const engine = createEngine({
    workers,
    limits,
    ...(opts.cacheDir !== undefined ? { cacheDir: opts.cacheDir } : {}),
    ...(opts.remoteCache !== undefined ? { remoteCache: opts.remoteCache, onWarning: (m: string) => io.err(`warning: ${m}`) } : {}),
  });
  const showBar = opts.progress ?? (!opts.json && process.stderr.isTTY);
  const bar = showBar ? new SingleBar({ format: 'farm {bar} {value}/{total} programs | {hits} hits, {compiled} compiled, {refused} refused', stream: process.stderr }, Presets.shades_classic) : null;
  let hits = 0, compiled = 0, skipped = 0;
  const refused: { file: string; error: Record<string, unknown> }[] = [];
  // A cache that cannot open fails every program alike: it is the farm's failure, reported once.
  // A box, not a `let`: the queue's callbacks set it, which a `let`'s narrowing to null would not see.
  const failed: { unavailable: CacheUnavailable | null } = { unavailable: null };
  try {
    bar?.start(files.length, 0, { hits, compiled, refused: 0 });
    const queue = new PQueue({ concurrency: workers * 2 });
    // Not `await queue.addAll(...)`: clear() drops the waiting tasks, whose promises then never settle,
    // and the farm would end with the event loop empty, exit 0 and nothing said. onIdle() settles once
    // the tasks running finish, whatever clear() dropped.
    for (const file of files) void queue.add(async () => {
      const name = relative(dir, file);
      try {
        const text = readText(file);
        if (!isProgramJson(text)) { skipped++; return; }
        const r = await engine.compileOnly(parseProgramText(text, limits), opts.target);
        if (r.hit) hits++; else compiled++;
      } catch (e) {
        const err = asEngineError(e);
        if (err instanceof CacheUnavailable) { failed.unavailable ??= err; queue.clear(); return; }
        refused.push({ file: name, error: errorJson(err).error });
        if (!opts.json && !bar) io.err(`refused ${name}: [${err.code}] ${err.message}`);
      } finally {
        bar?.increment(1, { hits, compiled, refused: refused.length });
      }
    });
    await queue.onIdle();
  } finally {
    bar?.stop();
    await engine.close();
  }
  if (failed.unavailable !== null) throw failed.unavailable;
  refused.sort((a, b) => a.file.localeCompare(b.file));
  const summary: FarmSummary = { programs: files.length - skipped, hits, compiled, skipped, refused, ms: Math.round(performance.now() - started) };
  return reportFarm(summary, opts.target, { ...(opts.json ? { json: true } : {}), listRefusals: bar !== null }, io);
}

/** `farm DIR --target T`. */
export const farm: CliCommand = {
  register(cli, { io, action }) {
    withLimitFlags(cli.command('farm'))
      .description('compile every program under a directory into the blob cache, in parallel')
      .argument('<dir>', 'directory of program JSON files')
      .addOption(targetOption())
      .addOption(intOption('--workers <n>', 'compiler workers'))
      .addOption(cacheDirOption())
      .addOption(redisUrlOption('--remote-cache <url>', 'a shared cache tier behind the local one, redis://host:port/db'))
      .addOption(redisUrlOption('--queue <url>', 'enqueue one job per program on this Redis for farm-worker processes, instead of compiling here'))
      .addOption(intOption('--attempts <n>', 'with --queue: tries per job before its failure is final (default 3)'))
      .addOption(intOption('--timeout <ms>', 'with --queue: give up after this many ms, FarmTimeout (default: wait as long as it takes)'))
      // For tests: how soon the farm says no worker has taken a job yet (default 5000 ms).
      .addOption(intOption('--notice-ms <ms>', 'with --queue: ms before saying no worker has taken a job yet').hideHelp())
      .addOption(jsonOption('machine-readable summary'))
      .action(action((d: string, o: FarmOptions & { queue?: string; attempts?: number; timeout?: number; noticeMs?: number }) => {
        if (o.queue === undefined) {
          const queued = (['attempts', 'timeout', 'noticeMs'] as const).find((k) => o[k] !== undefined);
          if (queued) throw new UsageError(`${flagOf(queued)} applies to a farm with --queue`);
          return farmCommand(d, o, io);
        }
        const local = (['workers', 'cacheDir', 'remoteCache'] as const).find((k) => o[k] !== undefined);
        if (local) throw new UsageError(`with --queue the farm compiles nothing itself: give ${flagOf(local)} to farm-worker instead`);
        for (const [flag, v] of [['--timeout', o.timeout], ['--notice-ms', o.noticeMs]] as const) {
          if (v !== undefined && !(v >= 1 && v <= MAX_TIMER_MS)) throw new UsageError(`${flag} must be a whole number of ms from 1 to ${MAX_TIMER_MS}, got ${v}`);
        }
        const q = {
          target: o.target, queue: o.queue, ...(o.attempts !== undefined ? { attempts: o.attempts } : {}), ...(o.json ? { json: true } : {}),
          ...(o.timeout !== undefined ? { timeoutMs: o.timeout } : {}), ...(o.noticeMs !== undefined ? { noticeMs: o.noticeMs } : {}),
        };
        // BullMQ and ioredis load only for a queued farm: eagerly they cost every command about a second.
        return import('./farmQueue.js').then(({ farmQueueCommand }) => farmQueueCommand(d, q, io));
      }));
  },
};
