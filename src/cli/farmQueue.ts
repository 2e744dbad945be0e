/**
 * `npu-offload farm DIR --target T --queue redis://...`: the distributed farm. Each program under DIR
 * is read and decoded here (a file that is not a program is refused here, as the local farm refuses
 * it) and enqueued as one compile job; `farm-worker` processes anywhere take them. Progress shows as
 * workers report, and the summary is the local farm's, plus which worker did what.
 */
import { relative } from 'node:path';
import { Presets, SingleBar } from 'cli-progress';
import { EngineError } from '../errors/index.js';
import { parseProgramText, programToJson } from '../ir/codec.js';
import { runQueueFarm, type FarmProgress } from '../jobs/farmQueue.js';
import { isProgramJson, jsonFiles, reportFarm, requireDir, type FarmSummary } from './farmSummary.js';
import { readText } from './files.js';
import type { Io } from './output.js';
import { errorJson } from './output.js';

export interface QueueFarmCliOptions {
  readonly target: string;
  /** The queue's Redis URL (checked by the flag's parser). */
  readonly queue: string;
  readonly attempts?: number;
  /** Give up after this many ms with FarmTimeout (default: no bound). */
  readonly timeoutMs?: number;
  /** Ms before the line saying no worker has taken a job yet (default NO_WORKER_NOTICE_MS). */
  readonly noticeMs?: number;
  readonly json?: boolean;
  /** Show the progress bar (default: when stderr is a terminal and not --json). */
  readonly progress?: boolean;
}

/** The distributed farm's summary: the local farm's, and per worker what it compiled or found. */
interface QueueFarmSummary extends FarmSummary {
  readonly workers: Readonly<Record<string, { readonly hits: number; readonly compiled: number }>>;
}

/** Shows progress: a bar on a terminal, else a line on stderr at most every two seconds. */
function progressView(opts: QueueFarmCliOptions, io: Io): { update(p: FarmProgress): void; stop(): void } {
  if (opts.json && opts.progress !== true) return { update: () => undefined, stop: () => undefined };
  if (opts.progress ?? process.stderr.isTTY) {
    const bar = new SingleBar({ format: 'farm {bar} {value}/{total} programs | {hits} hits, {compiled} compiled, {refused} refused | {workers} workers', stream: process.stderr }, Presets.shades_classic);
    let started = false;
    return {
      update: (p) => {
        const payload = { hits: p.hits, compiled: p.compiled, refused: p.refused, workers: p.workers < 0 ? '?' : p.workers };
        if (!started) { bar.start(p.total, p.done, payload); started = true; } else bar.update(p.done, payload);
      },
      stop: () => { if (started) bar.stop(); },
    };
  }
  let last = 0;
  return {
    update: (p) => {
      const now = Date.now();
      if (now - last < 2000 && p.done < p.total) return;
      last = now;
      io.err(`farm: ${p.done}/${p.total} done (${p.hits} hits, ${p.compiled} compiled, ${p.refused} refused), ${p.workers < 0 ? 'workers not counted yet' : `${p.workers} workers`}`);
    },
    stop: () => undefined,
  };
}

/** Runs the distributed farm; exit 1 when any program was refused. */
export async function farmQueueCommand(dir: string, opts: QueueFarmCliOptions, io: Io): Promise<number> {
  requireDir(dir);
  const started = performance.now();
  const refused: { file: string; error: Record<string, unknown> }[] = [];
  const jobs: { file: string; program: unknown }[] = [];
  let skipped = 0;
  for (const file of jsonFiles(dir)) {
    const name = relative(dir, file);
    try {
      const text = readText(file);
      if (!isProgramJson(text)) { skipped++; continue; }
      jobs.push({ file: name, program: programToJson(parseProgramText(text)) });
    } catch (e) {
      if (!(e instanceof EngineError)) throw e;
      refused.push({ file: name, error: errorJson(e).error });
    }
  }
  const programs = jobs.length + refused.length;
  const view = progressView(opts, io);
  let outcomes;
  try {
    outcomes = await runQueueFarm(jobs, {
      queue: opts.queue, target: opts.target,
      ...(opts.attempts !== undefined ? { attempts: opts.attempts } : {}),
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.noticeMs !== undefined ? { noWorkerNoticeMs: opts.noticeMs } : {}),
      onProgress: (p) => view.update(p),
      // Said even with --json (stderr): a farm with no worker otherwise looks like a hung one.
      onNoWorker: (n) => io.err(`farm: no worker has taken a job yet after ${(n.waitedMs / 1000).toFixed(1)} s `
        + `(${n.workers < 0 ? 'workers not counted yet' : `${n.workers} worker${n.workers === 1 ? '' : 's'} connected`}, ${n.total} jobs waiting); `
        + `start one with \`npu-offload farm-worker --queue URL\`${opts.timeoutMs !== undefined ? `; giving up after ${opts.timeoutMs} ms` : ''}`),
    });
  } finally {
    view.stop();
  }
  const workers: Record<string, { hits: number; compiled: number }> = {};
  let hits = 0, compiled = 0;
  for (const o of outcomes) {
    if (!o.ok) { refused.push({ file: o.file, error: o.error }); continue; }
    const w = workers[o.result.worker] ??= { hits: 0, compiled: 0 };
    if (o.result.hit) { hits++; w.hits++; } else { compiled++; w.compiled++; }
  }
  refused.sort((a, b) => a.file.localeCompare(b.file));
  const summary: QueueFarmSummary = {
    programs, hits, compiled, skipped, refused,
    ms: Math.round(performance.now() - started), workers,
  };
  const n = Object.keys(workers).length;
  return reportFarm(summary, opts.target, { ...(opts.json ? { json: true } : {}), listRefusals: true, where: ` on ${n} worker${n === 1 ? '' : 's'}` }, io);
}
