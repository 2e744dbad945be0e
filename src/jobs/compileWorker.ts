/**
 * The farm's worker: takes compile jobs from the queue (farmQueue.ts) and compiles each through its own
 * engine, whose cache has the remote tier behind it, so every blob it makes is shared before the job is
 * reported done. close() drains: the jobs in hand finish, no new one is taken.
 *
 * A refusal of the program (it is invalid, the target cannot take it) is final and not retried; a
 * failure that may pass on another try (a crashed compiler, a cache busy) is retried up to the job's
 * attempts. A worker that dies mid-job holds the job's lock no more; after `lockMs` another worker's
 * stalled-job check gives the job back to the queue, at most `maxStalls` times before it fails.
 */
import { hostname } from 'node:os';
import type { Job, Worker } from 'bullmq';
import { openRedis } from '../cache/redisClient.js';
import { parseRedisUrl } from '../cache/redisUrl.js';
import { EngineError, type ErrorCode, InvalidOptions, messageOf, RemoteUnavailable } from '../errors/index.js';
import { asEngineError, createEngine, type Engine } from './engine.js';
import { bullConnection, failureOf, FARM_QUEUE, isFarmJobData, within, type FarmJobResult } from './farmQueue.js';
import type { RedisTarget } from '../cache/redisUrl.js';

export interface CompileWorkerOptions {
  /** The queue's Redis, `redis://host:port/db`. */
  readonly queue: string;
  /** Jobs compiled at once (default 2). */
  readonly concurrency?: number;
  readonly cacheDir?: string;
  /** The remote cache tier (default: the queue's server). */
  readonly remoteCache?: string;
  /** The worker's name in results and in the queue's worker list (default host:pid). */
  readonly name?: string;
  /** How long a job's lock lasts unrenewed, so how soon a dead worker's job goes to another, in ms (default 30 000). */
  readonly lockMs?: number;
  /** Stalls a job may have before it fails (default 2). */
  readonly maxStalls?: number;
  readonly queueName?: string;
  readonly connectTimeoutMs?: number;
  /** Told of each job as it starts, ends or fails. */
  readonly onEvent?: (e: WorkerEvent) => void;
  readonly onWarning?: (message: string) => void;
}

/** What the worker reports of its jobs. */
export type WorkerEvent =
  | { readonly event: 'active'; readonly job: string; readonly file: string }
  | { readonly event: 'done'; readonly job: string; readonly file: string; readonly hit: boolean; readonly keys: readonly string[] }
  | { readonly event: 'failed'; readonly job: string; readonly file: string; readonly error: Record<string, unknown>; readonly final: boolean };

/** Counters of one worker since it started. */
export interface WorkerCounts {
  readonly jobs: number;
  readonly compiled: number;
  readonly hits: number;
  readonly failed: number;
}

/** After the last job in hand, how long a drain waits for the queue's server before it gives up on it. */
const CLOSE_GRACE_MS = 5000;

/** Failures another try may cure; every other code is the program's own and final. */
const RETRIED: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['ActorCrashed', 'ActorDown', 'EngineClosed', 'DeadlineExceeded', 'CacheError']);

function positive(n: number | undefined, fallback: number, field: string, min = 1): number {
  const v = n ?? fallback;
  if (!(Number.isInteger(v) && v >= min && v <= 1_000_000)) throw new InvalidOptions(field, `a whole number of at least ${min}, not ${String(n)}`);
  return v;
}

/** The JSON a failed job carries: the typed error's `{ code, ...fields }`, and its message. */
function failureJson(e: EngineError): Record<string, unknown> {
  return { code: e.code, ...e.fields(), message: e.message };
}

/** A running farm worker. */
export class CompileWorker {
  readonly name: string;
  #worker: Worker;
  #engine: Engine;
  #counts = { jobs: 0, compiled: 0, hits: 0, failed: 0 };
  #closing: Promise<void> | null = null;
  #inHand = new Set<Promise<unknown>>();

  private constructor(
    name: string,
    private readonly target: RedisTarget,
    engine: Engine,
    make: (processor: (job: Job) => Promise<FarmJobResult>) => Worker,
    private readonly bull: typeof import('bullmq'),
    private readonly opts: CompileWorkerOptions,
    /** Stops the clients' reconnecting, once closing has given up on the server. */
    private readonly stopReconnecting: () => void,
  ) {
    this.name = name;
    this.#engine = engine;
    this.#worker = make((job) => {
      const p = this.#process(job);
      this.#inHand.add(p);
      void p.finally(() => this.#inHand.delete(p)).catch(() => undefined);
      return p;
    });
    this.#worker.on('error', () => undefined); // connection errors: BullMQ reconnects by itself
    // Reported once the queue has the job as completed, not when the compile returns: a worker killed
    // in between has its job done again elsewhere, and must not have said it was done.
    this.#worker.on('completed', (job, r: FarmJobResult) => {
      this.#counts.jobs++;
      if (r.hit) this.#counts.hits++;
      else this.#counts.compiled++;
      const data: unknown = job.data;
      opts.onEvent?.({ event: 'done', job: job.id ?? '', file: isFarmJobData(data) ? data.file : '', hit: r.hit, keys: r.keys });
    });
    this.#worker.on('failed', (job, err) => {
      if (job === undefined) return;
      this.#counts.failed++;
      const data: unknown = job.data;
      const final = err instanceof bull.UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
      opts.onEvent?.({ event: 'failed', job: job.id ?? '', file: isFarmJobData(data) ? data.file : '', error: failureOf(err.message), final });
    });
  }

  /**
   * Starts a worker: checks the queue's server answers (RemoteUnavailable if not) and the local cache
   * opens (CacheUnavailable if not), then takes jobs.
   */
  static async start(opts: CompileWorkerOptions): Promise<CompileWorker> {
    const target = parseRedisUrl(opts.queue, 'queue');
    const concurrency = positive(opts.concurrency, 2, 'concurrency');
    const lockMs = positive(opts.lockMs, 30_000, 'lockMs', 100);
    const maxStalls = positive(opts.maxStalls, 2, 'maxStalls', 0);
    (await openRedis(target, opts.connectTimeoutMs)).disconnect();
    const name = opts.name ?? `${hostname()}:${process.pid}`;
    const engine = createEngine({
      ...(opts.cacheDir !== undefined ? { cacheDir: opts.cacheDir } : {}),
      remoteCache: opts.remoteCache ?? opts.queue,
      ...(opts.onWarning ? { onWarning: opts.onWarning } : {}),
    });
    try {
      await engine.cacheStats(); // opens the cache now: a worker that cannot cache must not take jobs
    } catch (e) {
      await engine.close();
      throw asEngineError(e);
    }
    const bull = await import('bullmq');
    let stopping = false;
    const worker = new CompileWorker(name, target, engine, (processor) => new bull.Worker(opts.queueName ?? FARM_QUEUE, processor, {
      connection: bullConnection(target, () => stopping),
      concurrency,
      name,
      lockDuration: lockMs,
      stalledInterval: Math.max(50, Math.floor(lockMs / 2)),
      maxStalledCount: maxStalls,
    }), bull, opts, () => { stopping = true; });
    try {
      await worker.#worker.waitUntilReady();
    } catch (e) {
      await worker.close().catch(() => undefined);
      throw new RemoteUnavailable(target.shown, messageOf(e));
    }
    return worker;
  }

  get counts(): WorkerCounts {
    return { ...this.#counts };
  }

  async #process(job: Job): Promise<FarmJobResult> {
    const data: unknown = job.data;
    const id = job.id ?? '';
    if (!isFarmJobData(data)) throw new this.bull.UnrecoverableError(JSON.stringify(failureJson(new InvalidOptions('job', 'the job is not a farm compile job (file, target, program)'))));
    this.opts.onEvent?.({ event: 'active', job: id, file: data.file });
    try {
      const r = await this.#engine.compileOnly(data.program as Parameters<Engine['compileOnly']>[0], data.target);
      return { keys: r.keys, hit: r.hit, worker: this.name };
    } catch (e) {
      const err = asEngineError(e);
      const reason = JSON.stringify(failureJson(err));
      throw RETRIED.has(err.code) ? new Error(reason) : new this.bull.UnrecoverableError(reason);
    }
  }

  /**
   * Drains: the jobs in hand finish and are reported, none is taken after; then the engine closes. When
   * the queue's server is gone, BullMQ would wait for it forever: past CLOSE_GRACE_MS after the last job
   * the connection is dropped and RemoteUnavailable thrown (the jobs not reported go to another worker);
   * BullMQ may still hold a timer then, so a process that owns the worker should exit by itself.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const graceful = this.#worker.close();
      graceful.catch(() => undefined);
      const stuck = (async () => {
        await Promise.allSettled([...this.#inHand]);
        await new Promise((r) => setTimeout(r, CLOSE_GRACE_MS).unref());
        return true;
      })();
      try {
        if (await Promise.race([graceful.then(() => false), stuck])) {
          this.stopReconnecting();
          await within(this.#worker.disconnect(), 2000, 'disconnecting').catch(() => undefined);
          throw new RemoteUnavailable(this.target.shown, `no answer within ${CLOSE_GRACE_MS} ms of the last job in hand; jobs it could not report go to another worker`);
        }
      } finally {
        await this.#engine.close();
      }
    })();
    return this.#closing;
  }
}
