/**
 * A pool of stateless task workers (the compiler and oracle pools) over piscina, which already
 * replaces a worker that dies and fails only its task. What we add: typed errors (workers answer
 * PoolReply data, see servePoolTask, because piscina clones a thrown error to a plain Error), a
 * deadline owned by the pool (an AbortSignal: piscina terminates the worker running the task), and
 * the OTP restart intensity: piscina would otherwise replace a worker that dies at start for ever.
 * No p-queue here: piscina's own queue already bounds concurrency to the worker count.
 *
 * A worker is terminated only once it has loaded its entry (it posted PoolLoadedMessage) or exited:
 * terminating one still instantiating its modules aborts the whole process. So destroy() waits for
 * starting workers first, and a deadline's abort waits too (piscina hands tasks to starting workers).
 */
import type { Transferable, Worker } from 'node:worker_threads';
import { EventEmitter } from 'eventemitter3';
import { Piscina } from 'piscina';
import { ActorCrashed, ActorDown, DeadlineExceeded, EngineClosed, messageOf } from '../errors/index.js';
import { workerExecArgv } from './execArgv.js';
import { RestartWindow, type RestartIntensity } from './intensity.js';
import { errorFromWire, isPoolLoadedMessage, isPoolReply, poolTaskMessage } from './protocol.js';

/** How to start a task pool. */
export interface PoolOptions {
  /** Names the pool in errors and events. */
  readonly name: string;
  /** The worker entry (its default export is servePoolTask(fn)), resolved from the caller's import.meta.url. */
  readonly entry: URL;
  /** The most threads the pool runs. */
  readonly workers: number;
  /**
   * Threads started with the pool (default: `workers`); the others start when a task finds every
   * thread busy, and then stay until destroy(). An engine whose jobs compile one artifact at a time
   * so starts (and loads the entry's modules in) one thread, not `workers`.
   */
  readonly startThreads?: number;
  readonly restart: RestartIntensity;
  readonly workerData?: unknown;
}

/** Per-task options. */
interface RunOptions {
  /** The pool rejects the task with DeadlineExceeded and terminates its worker after this time. */
  readonly deadlineMs?: number;
  /** Moved, not copied, to the worker. */
  readonly transfer?: readonly Transferable[];
}

/** ready: tasks run; down: the restart intensity was exceeded (ActorDown); closed: destroy() was called. */
type PoolState = 'ready' | 'down' | 'closed';

/** The pool's events. */
interface PoolEvents {
  /** A worker died; its task, if it had one, failed with ActorCrashed. */
  crash: (info: { readonly detail: string }) => void;
  /** More worker deaths than the restart intensity allows: the pool runs no more tasks. */
  down: (error: ActorDown) => void;
}

/** A typed pool of task workers. */
export interface ActorPool<Task, Result> {
  readonly name: string;
  readonly state: PoolState;
  /** The threadIds of the pool's threads that have not exited yet (empty once destroy() settles). */
  readonly threadIds: readonly number[];
  /** Runs one task; always settles: with the value, a typed error, DeadlineExceeded, ActorCrashed, ActorDown or EngineClosed. */
  run(task: Task, opts?: RunOptions): Promise<Result>;
  /** Listens to a pool event; returns a function that stops listening. */
  on<E extends keyof PoolEvents>(event: E, fn: PoolEvents[E]): () => void;
  /** Fails unanswered tasks with EngineClosed and settles when no thread of the pool is left. */
  destroy(): Promise<void>;
}

/** Starts a task pool; see ActorPool. */
export function createPool<Task, Result>(opts: PoolOptions): ActorPool<Task, Result> {
  return new TaskPool<Task, Result>(opts);
}

interface PendingTask {
  readonly reject: (error: unknown) => void;
  timer: NodeJS.Timeout | undefined;
}

const maxTimerMs = 2 ** 31 - 1;

/** How long destroy() waits for a starting worker to load before terminating it anyway. */
const LOAD_WAIT_MS = 10_000;

interface Thread {
  readonly exited: Promise<void>;
  /** Settles when the worker has loaded its entry or exited: from then on, terminating it is safe. */
  readonly loaded: Promise<void>;
}

/**
 * piscina require()s its worker entry before it tries import(); on Node 20.19+ that takes the
 * require(esm) path, whose module facade asserts, aborting the whole process, when a worker is
 * terminated while it instantiates. Pool workers refuse require(esm), so piscina imports the entry
 * with the asynchronous loader instead. (An explicit list inherits none of the process's flags.)
 */
function poolExecArgv(): string[] | undefined {
  const base = workerExecArgv();
  if (!process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module')) return base;
  return [...(base ?? []), '--no-experimental-require-module'];
}

class TaskPool<Task, Result> implements ActorPool<Task, Result> {
  readonly name: string;
  readonly #piscina: Piscina;
  readonly #restarts: RestartWindow;
  readonly #events = new EventEmitter();
  readonly #pending = new Set<PendingTask>();
  // Piscina forgets a worker when it removes it; we keep each thread until its 'exit'.
  readonly #threads = new Map<Worker, Thread>();
  readonly #crashes = new WeakSet();
  #state: PoolState = 'ready';
  #downRestarts = 0;
  #destroyed: Promise<void> | null = null;

  constructor(opts: PoolOptions) {
    if (!(opts.workers >= 1)) throw new RangeError('a pool needs at least one worker');
    const start = opts.startThreads ?? opts.workers;
    if (!(start >= 1 && start <= opts.workers)) throw new RangeError('a pool starts at least one and at most `workers` threads');
    if (!(opts.restart.max >= 0 && opts.restart.windowMs > 0)) throw new RangeError('restart needs max >= 0 and windowMs > 0');
    this.name = opts.name;
    this.#restarts = new RestartWindow(opts.restart);
    this.#piscina = new Piscina({
      filename: opts.entry.href,
      minThreads: start,
      maxThreads: opts.workers,
      // A thread started for a burst of tasks stays until destroy(): piscina would otherwise end it as
      // soon as it is idle, and load it again for the next burst.
      idleTimeout: Infinity,
      workerData: opts.workerData,
      execArgv: poolExecArgv(),
    });
    this.#piscina.on('workerCreate', () => { this.#track(); });
    // Piscina emits 'error' for a worker that dies with no task (at start, say); unheard it would throw.
    this.#piscina.on('error', (e: unknown) => { this.#track(); this.#onCrash(e); });
    this.#track();
  }

  get state(): PoolState {
    return this.#state;
  }

  get threadIds(): readonly number[] {
    this.#track();
    return [...this.#threads.keys()].map((w) => w.threadId).filter((id) => id >= 0);
  }

  run(task: Task, opts: RunOptions = {}): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      if (this.#state === 'closed') { reject(new EngineClosed()); return; }
      if (this.#state === 'down') { reject(this.#downError()); return; }
      const { deadlineMs } = opts;
      if (deadlineMs !== undefined && !(deadlineMs >= 0)) { reject(new RangeError(`deadlineMs must be >= 0, got ${deadlineMs}`)); return; }
      const entry: PendingTask = { reject, timer: undefined };
      const settle = (): boolean => {
        if (!this.#pending.delete(entry)) return false;
        clearTimeout(entry.timer);
        return true;
      };
      const abort = new AbortController();
      this.#pending.add(entry);
      if (deadlineMs !== undefined && deadlineMs <= maxTimerMs) {
        entry.timer = setTimeout(() => {
          if (!settle()) return;
          reject(new DeadlineExceeded(deadlineMs));
          // Piscina terminates the thread running an aborted task (and starts another): only a loaded one.
          void this.#allLoaded().then(() => { abort.abort(); this.#track(); });
        }, deadlineMs);
      }
      this.#piscina.run(poolTaskMessage(this.name, task), {
        signal: abort.signal,
        transferList: opts.transfer === undefined ? undefined : [...opts.transfer],
      }).then((reply: unknown) => {
        if (!settle()) return;
        if (!isPoolReply(reply)) reject(new ActorCrashed(this.name, 'the task worker answered outside the pool protocol (its entry must export servePoolTask(fn))'));
        // The worker's handler has the Result type the pool was created with.
        else if (reply.ok) resolve(reply.value as Result);
        else reject(errorFromWire(this.name, reply.error));
      }, (e: unknown) => {
        // Our own abort, down or destroy settled the task already; any other rejection is a dead worker.
        if (!settle()) return;
        reject(new ActorCrashed(this.name, messageOf(e)));
        this.#onCrash(e);
      });
      this.#track();
    });
  }

  on<E extends keyof PoolEvents>(event: E, fn: PoolEvents[E]): () => void {
    this.#events.on(event, fn);
    return () => { this.#events.off(event, fn); };
  }

  destroy(): Promise<void> {
    if (this.#destroyed !== null) return this.#destroyed;
    if (this.#state !== 'down') this.#state = 'closed';
    this.#failAll(() => new EngineClosed());
    this.#destroyed = this.#stop().then(() => { this.#events.removeAllListeners(); });
    return this.#destroyed;
  }

  async #stop(): Promise<void> {
    await this.#allLoaded();
    await this.#piscina.destroy();
    await Promise.all([...this.#threads.values()].map((t) => t.exited));
  }

  /** Settles when every worker has loaded or exited (or LOAD_WAIT_MS passed), including any started meanwhile. */
  async #allLoaded(): Promise<void> {
    const until = performance.now() + LOAD_WAIT_MS;
    const seen = new Set<Worker>();
    for (;;) {
      this.#track();
      const fresh = [...this.#threads].filter(([w]) => !seen.has(w));
      const left = until - performance.now();
      if (fresh.length === 0 || left <= 0) return;
      for (const [w] of fresh) seen.add(w);
      if (!(await within(Promise.all(fresh.map(([, t]) => t.loaded)), left))) return;
    }
  }

  // Called wherever piscina may have started a worker, before any of its messages can arrive (they
  // come in a later turn of the event loop), so no worker's PoolLoadedMessage goes unheard.
  #track(): void {
    for (const worker of this.#piscina.threads) {
      if (this.#threads.has(worker)) continue;
      let loaded!: () => void;
      const onMessage = (m: unknown): void => {
        if (isPoolLoadedMessage(m)) { worker.off('message', onMessage); loaded(); }
      };
      const thread: Thread = {
        loaded: new Promise<void>((resolve) => { loaded = resolve; }),
        exited: new Promise<void>((resolve) => {
          worker.once('exit', () => {
            this.#threads.delete(worker);
            loaded();
            resolve();
            // Piscina replaces a worker in its own 'exit' listener, which ran before this one.
            this.#track();
          });
        }),
      };
      worker.on('message', onMessage);
      this.#threads.set(worker, thread);
    }
  }

  #onCrash(e: unknown): void {
    if (this.#state !== 'ready') return;
    // One death can fail several tasks with one error object; count it once.
    if (typeof e === 'object' && e !== null) {
      if (this.#crashes.has(e)) return;
      this.#crashes.add(e);
    }
    const detail = messageOf(e);
    queueMicrotask(() => { this.#events.emit('crash', { detail }); });
    if (this.#restarts.admit()) return;
    this.#downRestarts = this.#restarts.count;
    this.#state = 'down';
    this.#failAll(() => this.#downError());
    const down = this.#downError();
    queueMicrotask(() => { this.#events.emit('down', down); });
    // Stop piscina's own replacing of dead workers; destroy() still awaits this.
    this.#destroyed = this.#stop();
  }

  #failAll(error: () => unknown): void {
    for (const entry of [...this.#pending]) {
      this.#pending.delete(entry);
      clearTimeout(entry.timer);
      entry.reject(error());
    }
  }

  #downError(): ActorDown {
    return new ActorDown(this.name, this.#downRestarts, this.#restarts.limit.windowMs);
  }
}

/** True when `p` settles within `ms`, false when the time runs out first. */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms); });
  try {
    return await Promise.race([p.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

