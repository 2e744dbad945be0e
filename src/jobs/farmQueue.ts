/**
 * The distributed farm's queue, on BullMQ over Redis: the job and result shapes both sides check, and
 * the producer, runQueueFarm(), that enqueues one compile job per program and waits for every one to
 * finish on whatever workers take them (compileWorker.ts). BullMQ keeps a job whose worker died
 * (its lock lapses, another worker's stalled-job check puts it back) and fails it after a bounded
 * number of stalls or attempts, with the reason kept for the producer to report.
 *
 * BullMQ is loaded when a farm starts, not when this file is: it takes a second to load, which every
 * other command would pay.
 */
import { randomBytes } from 'node:crypto';
import type { ConnectionOptions } from 'bullmq';
import { openRedis, redisOptions } from '../cache/redisClient.js';
import { parseRedisUrl, type RedisTarget } from '../cache/redisUrl.js';
import { FarmTimeout, InvalidOptions, messageOf, RemoteUnavailable } from '../errors/index.js';

/** The queue every farm and farm worker uses unless told another. */
export const FARM_QUEUE = 'npu-offload-farm';
/** Attempts per job: a failure that may pass (a crashed compiler) is tried this many times in all. */
const FARM_ATTEMPTS = 3;
/** How long the farm waits with no job taken before it says no worker has taken one yet, in ms. */
const NO_WORKER_NOTICE_MS = 5000;

/** One job: a program (the format's JSON form) to compile for a target; `file` names it in reports. */
export interface FarmJobData {
  readonly file: string;
  readonly target: string;
  readonly program: unknown;
}

/** What a worker answers for a job it compiled. */
export interface FarmJobResult {
  readonly keys: readonly string[];
  /** True when every artifact came from a cache tier (local or remote), nothing compiled. */
  readonly hit: boolean;
  /** The worker that did it. */
  readonly worker: string;
}

/** How one program ended: compiled (or found), or refused with the typed error's JSON form. */
export type FarmOutcome =
  | { readonly file: string; readonly ok: true; readonly result: FarmJobResult }
  | { readonly file: string; readonly ok: false; readonly error: Record<string, unknown> };

/** What the producer reports as jobs finish. */
export interface FarmProgress {
  readonly total: number;
  readonly done: number;
  readonly hits: number;
  readonly compiled: number;
  readonly refused: number;
  /** Workers connected to the queue at the last look (-1 before the first). */
  readonly workers: number;
}

export interface QueueFarmOptions {
  /** The queue's Redis, `redis://host:port/db`. */
  readonly queue: string;
  readonly target: string;
  /** Attempts per job (default 3). */
  readonly attempts?: number;
  readonly queueName?: string;
  /** Bound on the first connection, in ms (default 2000). */
  readonly connectTimeoutMs?: number;
  /** How long the queue's server may stay unreachable mid-run before the farm gives up, in ms (default 15 000). */
  readonly downTimeoutMs?: number;
  /** How often to look at jobs whose events may have been missed, and at the worker count, in ms (default 1000). */
  readonly sweepMs?: number;
  readonly onProgress?: (p: FarmProgress) => void;
  /**
   * Bound on the whole wait for outcomes, in ms (default: none, the farm waits as long as it takes).
   * Past it the farm removes its jobs that no worker holds and throws FarmTimeout.
   */
  readonly timeoutMs?: number;
  /** After this many ms with no job taken by any worker, `onNoWorker` is told once (default 5000). */
  readonly noWorkerNoticeMs?: number;
  /** Told once when no worker has taken a job `noWorkerNoticeMs` after the jobs were enqueued. */
  readonly onNoWorker?: (n: { readonly waitedMs: number; readonly workers: number; readonly total: number }) => void;
}

function record(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True for well-formed job data. */
export function isFarmJobData(v: unknown): v is FarmJobData {
  return record(v) && typeof v['file'] === 'string' && typeof v['target'] === 'string' && 'program' in v;
}

/** True for a well-formed job result. */
function isFarmJobResult(v: unknown): v is FarmJobResult {
  return record(v) && Array.isArray(v['keys']) && v['keys'].every((k) => typeof k === 'string')
    && typeof v['hit'] === 'boolean' && typeof v['worker'] === 'string';
}

/**
 * The typed error a failed job carries: workers write its JSON form as the failure's message; any other
 * reason (BullMQ's own, such as a job that stalled too often) is an ActorCrashed of the farm worker.
 */
export function failureOf(reason: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(reason);
    if (record(v) && typeof v['code'] === 'string') return v;
  } catch { /* not ours */ }
  return { code: 'ActorCrashed', actor: 'farm-worker', detail: reason };
}

/**
 * BullMQ's connection options for `target`: it opens (and closes) its own clients, which reconnect
 * (every 1 s, growing to 5 s) until `stopping()` says the caller is done; without that, a server that is gone
 * would keep them, and the process, alive forever.
 */
export function bullConnection(target: RedisTarget, stopping: () => boolean): ConnectionOptions {
  const { host, port, db, username, password, tls } = redisOptions(target);
  return {
    host, port, db, username, password, tls, maxRetriesPerRequest: null,
    retryStrategy: (times: number) => (stopping() ? null : Math.min(1000 * times, 5000)),
  };
}

/** Checks a farm's timeout: absent (no bound), or a whole number of ms from 1 to 2^31 - 1. */
function checkFarmTimeout(ms: number | undefined, field: string): number | undefined {
  if (ms === undefined) return undefined;
  if (!(Number.isInteger(ms) && ms >= 1 && ms <= 2 ** 31 - 1)) throw new InvalidOptions(field, `a whole number of ms from 1 to 2147483647, not ${String(ms)}`);
  return ms;
}

/** Checks the attempts option: a whole number from 1 to 100. */
function checkAttempts(n: number | undefined, field: string): number {
  const v = n ?? FARM_ATTEMPTS;
  if (!(Number.isInteger(v) && v >= 1 && v <= 100)) throw new InvalidOptions(field, `a whole number from 1 to 100, not ${String(n)}`);
  return v;
}

/** `p`, or a rejection saying `what` had no answer within `ms`. @internal */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms); })])
    .finally(() => clearTimeout(timer));
}

/**
 * Enqueues one job per program and resolves with every program's outcome, in input order, once all
 * have finished. Throws RemoteUnavailable when the queue's server cannot be reached at the start, or
 * stays unreachable for `downTimeoutMs` mid-run.
 */
export async function runQueueFarm(programs: readonly { readonly file: string; readonly program: unknown }[], opts: QueueFarmOptions): Promise<FarmOutcome[]> {
  const target = parseRedisUrl(opts.queue, 'queue');
  const attempts = checkAttempts(opts.attempts, 'attempts');
  checkFarmTimeout(opts.timeoutMs, 'timeoutMs');
  checkFarmTimeout(opts.noWorkerNoticeMs, 'noWorkerNoticeMs');
  const name = opts.queueName ?? FARM_QUEUE;
  const probe = await openRedis(target, opts.connectTimeoutMs);
  // Events are read from the stream's present end, taken before any job exists, so none is missed.
  let lastEventId: string;
  try {
    const last = await probe.xrevrange(`bull:${name}:events`, '+', '-', 'COUNT', 1);
    lastEventId = last[0]?.[0] ?? '0-0';
  } finally {
    probe.disconnect();
  }
  const { Job, Queue, QueueEvents } = await import('bullmq');
  let stopping = false;
  const connection = bullConnection(target, () => stopping);
  const queue = new Queue(name, { connection });
  const events = new QueueEvents(name, { connection, lastEventId });
  // BullMQ re-emits connection errors; the sweep below decides when they mean the farm must stop.
  queue.on('error', () => undefined);
  events.on('error', () => undefined);

  const run = randomBytes(6).toString('hex');
  const outcomes = new Array<FarmOutcome | undefined>(programs.length);
  const pending = new Map<string, number>(programs.map((_, i) => [`${run}-${i}`, i]));
  const counts = { hits: 0, compiled: 0, refused: 0, workers: -1 };
  // Jobs some worker has taken (active, or finished either way): the farm's only sign a worker exists.
  const taken = new Set<string>();
  const progress = () => opts.onProgress?.({ total: programs.length, done: programs.length - pending.size, ...counts });
  let finish: () => void = () => undefined;
  const allDone = new Promise<void>((r) => { finish = r; });
  const settle = (id: string, outcome: (file: string) => FarmOutcome) => {
    const i = pending.get(id);
    if (i === undefined) return;
    taken.add(id);
    pending.delete(id);
    const o = outcome(programs[i]!.file);
    outcomes[i] = o;
    if (!o.ok) counts.refused++;
    else if (o.result.hit) counts.hits++;
    else counts.compiled++;
    progress();
    if (pending.size === 0) finish();
  };
  const completed = (id: string, value: unknown) => settle(id, (file) => isFarmJobResult(value)
    ? { file, ok: true, result: value }
    : { file, ok: false, error: { code: 'ActorCrashed', actor: 'farm-worker', detail: 'the worker answered something that is not a farm result' } });
  const failed = (id: string, reason: string) => settle(id, (file) => ({ file, ok: false, error: failureOf(reason) }));
  events.on('completed', ({ jobId, returnvalue }) => completed(jobId, returnvalue));
  events.on('failed', ({ jobId, failedReason }) => failed(jobId, failedReason));
  events.on('active', ({ jobId }) => { if (pending.has(jobId)) taken.add(jobId); });

  const downTimeoutMs = opts.downTimeoutMs ?? 15_000;
  let downSince: number | null = null;
  let fatal: ((e: Error) => void) | null = null;
  const broken = new Promise<never>((_, reject) => { fatal = reject; });
  broken.catch(() => undefined);
  /** Looks at up to 200 pending jobs directly, and at the worker count; events may lag or be trimmed. */
  const sweep = async () => {
    try {
      counts.workers = await within(queue.getWorkersCount(), 5000, 'worker count');
      for (const id of [...pending.keys()].slice(0, 200)) {
        const job = await within(Job.fromId(queue, id), 5000, 'job state');
        if (job?.processedOn !== undefined) taken.add(id);
        if (job === undefined) failed(id, JSON.stringify({ code: 'ActorCrashed', actor: 'farm', detail: 'the job was removed from the queue before it finished' }));
        else if (job.finishedOn !== undefined) {
          if (job.failedReason && !isFarmJobResult(job.returnvalue)) failed(id, job.failedReason);
          else completed(id, job.returnvalue);
        }
      }
      downSince = null;
      progress();
    } catch (e) {
      downSince ??= Date.now();
      if (Date.now() - downSince >= downTimeoutMs) fatal?.(new RemoteUnavailable(target.shown, `unreachable for ${downTimeoutMs} ms mid-run: ${messageOf(e)}`));
    }
  };
  let timer: NodeJS.Timeout | undefined;
  let noticeTimer: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  const loop = () => { timer = setTimeout(() => { void sweep().finally(() => { if (pending.size > 0) loop(); }); }, opts.sweepMs ?? 1000); };
  try {
    await within(events.waitUntilReady(), opts.connectTimeoutMs ?? 5000, 'queue events');
    for (let from = 0; from < programs.length; from += 500) {
      await queue.addBulk(programs.slice(from, from + 500).map((p, j) => ({
        name: 'compile',
        data: { file: p.file, target: opts.target, program: p.program } satisfies FarmJobData,
        opts: { jobId: `${run}-${from + j}`, attempts, removeOnComplete: { age: 86_400 }, removeOnFail: { age: 86_400 } },
      })));
    }
    counts.workers = await within(queue.getWorkersCount(), 5000, 'worker count').catch(() => -1);
    progress();
    if (pending.size === 0) finish();
    loop();
    const enqueuedAt = performance.now();
    const noticeMs = opts.noWorkerNoticeMs ?? NO_WORKER_NOTICE_MS;
    noticeTimer = setTimeout(() => {
      if (pending.size > 0 && taken.size === 0) {
        opts.onNoWorker?.({ waitedMs: Math.round(performance.now() - enqueuedAt), workers: counts.workers, total: programs.length });
      }
    }, noticeMs);
    if (opts.timeoutMs !== undefined) {
      const timeoutMs = opts.timeoutMs;
      deadline = setTimeout(() => fatal?.(new FarmTimeout(target.shown, timeoutMs, taken.size, programs.length)), timeoutMs);
    }
    try {
      await Promise.race([allDone, broken]);
    } catch (e) {
      // Given up on: the jobs no worker holds leave the queue, so a worker that comes later does not
      // compile for a farm that has gone (a job a worker holds is locked and stays to finish there).
      if (e instanceof FarmTimeout) {
        const left = [...pending.keys()];
        for (let from = 0; from < left.length; from += 100) {
          await within(Promise.allSettled(left.slice(from, from + 100).map((id) => queue.remove(id))), 5000, 'removing unfinished jobs').catch(() => undefined);
        }
      }
      throw e;
    }
    // Every outcome is in hand: the jobs' records would only fill the server until they age out.
    const ids = programs.map((_, i) => `${run}-${i}`);
    for (let from = 0; from < ids.length; from += 100) {
      await within(Promise.all(ids.slice(from, from + 100).map((id) => queue.remove(id))), 5000, 'removing finished jobs').catch(() => undefined);
    }
  } catch (e) {
    if (e instanceof RemoteUnavailable || e instanceof FarmTimeout) throw e;
    throw new RemoteUnavailable(target.shown, messageOf(e));
  } finally {
    clearTimeout(timer);
    clearTimeout(noticeTimer);
    clearTimeout(deadline);
    stopping = true;
    await within(Promise.allSettled([events.close(), queue.close()]), 5000, 'closing the queue')
      .catch(() => within(Promise.allSettled([events.disconnect(), queue.disconnect()]), 2000, 'disconnecting'))
      .catch(() => undefined);
  }
  return outcomes.map((o, i) => o ?? { file: programs[i]!.file, ok: false as const, error: { code: 'ActorCrashed', actor: 'farm', detail: 'no outcome' } });
}
