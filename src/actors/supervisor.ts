/**
 * The supervisor of one actor worker. It owns every deadline and every restart, so that no call
 * ever stays pending: a call is answered by the worker, by its deadline, by a crash of the worker
 * (ActorCrashed), by a poisoned device (DevicePoisoned), by the actor going down (ActorDown), by the
 * typed error a worker refused to start with (see refuseStart) or by close() (EngineClosed). Worker
 * errors arrive as wire data and are rebuilt as the project's classes.
 */
import { Worker } from 'node:worker_threads';
import { EventEmitter } from 'eventemitter3';
import { ActorCrashed, ActorDown, DeadlineExceeded, DevicePoisoned, EngineClosed, messageOf } from '../errors/index.js';
import { CallTable, type PendingCall } from './calls.js';
import { workerExecArgv } from './execArgv.js';
import { RestartWindow, type RestartIntensity } from './intensity.js';
import type { WireError } from '../errors/index.js';
import { callMessage, errorFromWire, initMessage, isWorkerMessage } from './protocol.js';
import {
  lifecycleNames, type ActorState, type CallOptions, type LifecycleEvents, type MethodArgs, type MethodName,
  type MethodResult,
} from './types.js';

/** How to start and restart one actor. */
export interface SuperviseOptions {
  /** Names the actor in errors and events. */
  readonly name: string;
  /** The worker entry, resolved by the caller from its own import.meta.url, never from the cwd. */
  readonly entry: URL;
  readonly workerData?: unknown;
  readonly restart: RestartIntensity;
  /** Device actors: a missed deadline poisons the actor and replaces its worker. */
  readonly poisonOnDeadline?: boolean;
  /** A worker that has not posted 'ready' by then counts as crashed (default 10 000 ms). */
  readonly startTimeoutMs?: number;
  /** The deadline of calls that name none (default: none; a live worker is waited for). */
  readonly defaultDeadlineMs?: number;
  /**
   * Start again, on a later call, a worker that refused to start (see refuseStart): not before `firstMs`
   * after the refusal, doubling with each refusal in a row up to `maxMs`. Calls meanwhile answer the
   * refusal at once, as without this option. Default: a refusal is final.
   */
  readonly refusalRetry?: RefusalRetry;
}

/** The backoff of SuperviseOptions.refusalRetry. */
interface RefusalRetry {
  readonly firstMs: number;
  readonly maxMs: number;
  /** @internal The clock, in ms (default performance.now); tests advance their own. */
  readonly now?: () => number;
}

/** One incarnation of the actor: its worker thread, from start until it exits or is replaced. */
interface Incarnation {
  readonly worker: Worker;
  readonly threadId: number;
  ready: boolean;
  readonly startTimer: NodeJS.Timeout;
}

// setTimeout fires at once for delays past 2^31 - 1 ms; a deadline that far away is no deadline.
const maxTimerMs = 2 ** 31 - 1;

/**
 * The young generation of an actor's thread, in MiB (its `resourceLimits`). V8 lets a thread's young
 * generation grow to tens of MB, which stay resident once touched, in every isolate; an actor's calls
 * make short-lived objects of a few MB at most (a model's logits are ArrayBuffers outside it). At 6 MiB
 * the Qwen3-0.6B-shaped Q8_0 file's peak RSS (bench/memory.js --warm, ctx 1024, 256 + 128 tokens) went
 * from 950-958 to 913-927 MB, and its decode steps were no slower (34-37 against 44 ms, median).
 */
export const ACTOR_YOUNG_GENERATION_MB = 6;

/** Starts a supervised actor worker; see ActorSupervisor. */
export function superviseActor<Api extends object, Events extends Record<string, unknown> = Record<string, unknown>>(
  opts: SuperviseOptions,
): ActorSupervisor<Api, Events> {
  return new ActorSupervisor<Api, Events>(opts);
}

/** A handle on one actor worker: typed calls, lifecycle and actor events, restart and close. */
export class ActorSupervisor<Api extends object, Events extends Record<string, unknown> = Record<string, unknown>> {
  readonly name: string;
  readonly #opts: SuperviseOptions;
  readonly #restarts: RestartWindow;
  readonly #calls = new CallTable();
  // Listeners are called from a microtask (see #emit), so the emitter can stay untyped inside.
  readonly #events = new EventEmitter();
  // threadId → the thread's exit, for every worker started and not yet exited (dropped ones too).
  readonly #threads = new Map<number, Promise<void>>();
  #state: ActorState = 'starting';
  #slot: Incarnation | null = null;
  #poisonedSince: string | null = null;
  #downRestarts = 0;
  #restartTotal = 0;
  // Set when a worker refused to start: the actor is down with this cause instead of ActorDown.
  #refusedWith: WireError | null = null;
  // Refusals in a row (reset by 'ready'), and when a call may start a worker again (refusalRetry).
  #refusals = 0;
  #retryAt = Infinity;
  #closed: Promise<void> | null = null;

  constructor(opts: SuperviseOptions) {
    if (!(opts.restart.max >= 0 && opts.restart.windowMs > 0)) throw new RangeError('restart needs max >= 0 and windowMs > 0');
    this.name = opts.name;
    this.#opts = opts;
    this.#restarts = new RestartWindow(opts.restart);
    this.#spawn();
  }

  /** Where the actor is in its life; see ActorState. */
  get state(): ActorState {
    return this.#state;
  }

  /** Restarts since the actor first started (crashes and poisonings), for a status report. */
  get restarts(): number {
    return this.#restartTotal;
  }

  /** When a missed deadline poisoned the actor, while it is poisoned (until its replacement is ready). */
  get poisonedSince(): string | null {
    return this.#state === 'poisoned' ? this.#poisonedSince : null;
  }

  /** The threadIds of this actor's worker threads that have not exited yet (empty once close() settles). */
  get threadIds(): readonly number[] {
    return [...this.#threads.keys()];
  }

  /** Calls `method` in the worker; always settles (see the file's doc for every way it can). */
  call<K extends MethodName<Api>>(method: K, args: MethodArgs<Api, K>, opts: CallOptions = {}): Promise<MethodResult<Api, K>> {
    return new Promise<MethodResult<Api, K>>((resolve, reject) => {
      const refusal = this.#refusal();
      if (refusal !== null) { reject(refusal); return; }
      const deadlineMs = opts.deadlineMs ?? this.#opts.defaultDeadlineMs;
      if (deadlineMs !== undefined && !(deadlineMs >= 0)) { reject(new RangeError(`deadlineMs must be >= 0, got ${deadlineMs}`)); return; }
      // The worker runs the Api it was built with, so its reply is this method's result.
      const call = this.#calls.add(method, args, opts.transfer ?? [], (v) => resolve(v as MethodResult<Api, K>), reject);
      if (deadlineMs !== undefined && deadlineMs <= maxTimerMs) {
        call.timer = setTimeout(() => this.#onDeadline(call, deadlineMs), deadlineMs);
      }
      if (this.#slot?.ready === true) this.#post(call, this.#slot.worker);
      this.#refreshRef();
    });
  }

  /** Listens to a lifecycle event; returns a function that stops listening. */
  on<E extends keyof LifecycleEvents>(event: E, fn: LifecycleEvents[E]): () => void;
  /** Listens to an event the actor pushes; returns a function that stops listening. */
  on<E extends Exclude<keyof Events & string, keyof LifecycleEvents>>(event: E, fn: (payload: Events[E]) => void): () => void;
  on(event: string, fn: EventEmitter.ListenerFn): () => void {
    this.#events.on(event, fn);
    return () => { this.#events.off(event, fn); };
  }

  /**
   * Poisons and restarts a ready actor whose own device reported a missed deadline (the device's timer
   * fired before ours): it is as poisoned as one the supervisor caught, and is handled the same way.
   */
  recycle(): void {
    if (this.#state !== 'ready' || this.#opts.poisonOnDeadline !== true) return;
    this.#poison();
  }

  /** Terminates the worker and fails unanswered calls with EngineClosed; settles when no thread is left. */
  close(): Promise<void> {
    if (this.#closed !== null) return this.#closed;
    this.#state = 'closed';
    this.#drop();
    this.#calls.rejectAll(() => new EngineClosed());
    this.#closed = Promise.all(this.#threads.values()).then(() => { this.#events.removeAllListeners(); });
    return this.#closed;
  }

  #refusal(): Error | null {
    if (this.#state === 'closed') return new EngineClosed();
    if (this.#state === 'down' && this.#refusedWith !== null && this.#retryDue()) {
      // The cause may have been fixed (a directory made writable, a disk freed): try one worker, and
      // let this call wait for it like any call during a start.
      this.#refusedWith = null;
      this.#state = 'starting';
      this.#spawn();
      return null;
    }
    if (this.#state === 'down') return this.#refusedWith !== null ? errorFromWire(this.name, this.#refusedWith) : this.#downError();
    if (this.#poisonedSince !== null) return new DevicePoisoned(this.#poisonedSince);
    return null;
  }

  #retryDue(): boolean {
    const r = this.#opts.refusalRetry;
    return r !== undefined && (r.now ?? performance.now.bind(performance))() >= this.#retryAt;
  }

  #downError(): ActorDown {
    return new ActorDown(this.name, this.#downRestarts, this.#opts.restart.windowMs);
  }

  #spawn(): void {
    let worker: Worker;
    try {
      worker = new Worker(this.#opts.entry, { workerData: this.#opts.workerData, name: this.name, execArgv: workerExecArgv(), resourceLimits: { maxYoungGenerationSizeMb: ACTOR_YOUNG_GENERATION_MB } });
    } catch (e) {
      // No thread was made (e.g. workerData that cannot be cloned); it still counts, so it cannot loop.
      this.#emit('crash', { threadId: -1, detail: `could not start: ${messageOf(e)}` });
      this.#restart('crash');
      return;
    }
    const threadId = worker.threadId;
    this.#threads.set(threadId, new Promise<void>((resolve) => {
      worker.once('exit', () => { this.#threads.delete(threadId); resolve(); });
    }));
    // Every listener stays attached after the worker is dropped: a dropped worker's late 'error'
    // must not become an uncaught exception here; the identity checks make it a no-op instead.
    worker.on('message', (m: unknown) => { this.#onMessage(worker, m); });
    worker.on('error', (e: unknown) => { this.#onCrash(worker, `uncaught ${messageOf(e)}`); });
    worker.on('messageerror', (e: unknown) => { this.#onCrash(worker, `sent an unreadable message: ${messageOf(e)}`); });
    worker.on('exit', (code: number) => { this.#onCrash(worker, `exited with code ${code}`); });
    const startMs = this.#opts.startTimeoutMs ?? 10_000;
    const startTimer = setTimeout(() => { this.#onCrash(worker, `not ready within ${startMs} ms`); }, startMs);
    startTimer.unref();
    this.#slot = { worker, threadId, ready: false, startTimer };
    worker.postMessage(initMessage(this.name));
    this.#refreshRef();
  }

  /** Forgets the current worker and terminates its thread. */
  #drop(): void {
    const slot = this.#slot;
    if (slot === null) return;
    this.#slot = null;
    clearTimeout(slot.startTimer);
    // A thread blocked in Atomics.wait or a busy loop is still terminated; the 'exit' is awaited by close().
    slot.worker.terminate().catch(() => { /* already exiting */ });
  }

  #onMessage(worker: Worker, m: unknown): void {
    const slot = this.#slot;
    if (slot?.worker !== worker || !isWorkerMessage(m)) return;
    switch (m.type) {
      case 'ready': {
        if (slot.ready) return;
        slot.ready = true;
        clearTimeout(slot.startTimer);
        this.#poisonedSince = null;
        this.#refusals = 0;
        this.#state = 'ready';
        for (const call of this.#calls.waiting()) this.#post(call, worker);
        this.#emit('ready', { threadId: slot.threadId });
        return;
      }
      case 'refused': {
        if (slot.ready) return;
        this.#refuse(m.error);
        return;
      }
      case 'reply': {
        const call = this.#calls.get(m.id);
        if (call?.posted === worker) this.#calls.resolve(call, m.value);
        break;
      }
      case 'fail': {
        const call = this.#calls.get(m.id);
        if (call?.posted === worker) this.#calls.reject(call, errorFromWire(this.name, m.error));
        break;
      }
      case 'event':
        if (!lifecycleNames.has(m.name)) this.#emit(m.name, m.payload);
        return;
    }
    this.#refreshRef();
  }

  #post(call: PendingCall, worker: Worker): void {
    try {
      worker.postMessage(callMessage(call.id, call.method, call.args), call.transfer);
      call.posted = worker;
    } catch (e) {
      // Arguments that cannot be cloned are the caller's mistake, reported as the DataCloneError it is.
      this.#calls.reject(call, e);
    }
  }

  #onDeadline(call: PendingCall, deadlineMs: number): void {
    if (!this.#calls.has(call)) return;
    // Only a call the worker holds can show the worker hung; one still queued poisons nothing.
    const inWorker = call.posted !== null && call.posted === this.#slot?.worker;
    this.#calls.reject(call, new DeadlineExceeded(deadlineMs));
    if (inWorker && this.#opts.poisonOnDeadline === true) this.#poison();
    else this.#refreshRef();
  }

  #poison(): void {
    const since = new Date().toISOString();
    this.#poisonedSince = since;
    this.#state = 'poisoned';
    this.#drop();
    this.#calls.rejectAll(() => new DevicePoisoned(since));
    this.#emit('poisoned', { since });
    this.#restart('poison');
  }

  #onCrash(worker: Worker, detail: string): void {
    const slot = this.#slot;
    if (slot?.worker !== worker) return;
    this.#drop();
    this.#calls.rejectAll(() => new ActorCrashed(this.name, detail), (c) => c.posted === worker);
    this.#emit('crash', { threadId: slot.threadId, detail });
    this.#restart('crash');
  }

  #restart(reason: 'crash' | 'poison'): void {
    if (!this.#restarts.admit()) { this.#goDown(); return; }
    // After a poison, calls keep answering DevicePoisoned until a replacement posts 'ready'.
    this.#state = this.#poisonedSince !== null ? 'poisoned' : 'restarting';
    this.#restartTotal++;
    this.#emit('restart', { restarts: this.#restarts.count, reason });
    this.#spawn();
  }

  /**
   * A worker refused to start: no restart can fix its cause, so the actor is down with it (until a
   * call after the refusalRetry backoff, when there is one, tries a worker again).
   */
  #refuse(error: WireError): void {
    this.#refusedWith = error;
    const r = this.#opts.refusalRetry;
    if (r !== undefined) {
      this.#refusals++;
      const delay = Math.min(r.firstMs * 2 ** Math.min(this.#refusals - 1, 52), r.maxMs);
      this.#retryAt = (r.now ?? performance.now.bind(performance))() + delay;
    }
    this.#state = 'down';
    this.#drop();
    this.#calls.rejectAll(() => errorFromWire(this.name, error));
    this.#emit('refused', errorFromWire(this.name, error));
  }

  #goDown(): void {
    this.#downRestarts = this.#restarts.count;
    this.#state = 'down';
    this.#drop();
    this.#calls.rejectAll(() => this.#downError());
    this.#emit('down', this.#downError());
  }

  /** Keeps the process alive while calls are unanswered, and only then, like piscina's idle workers. */
  #refreshRef(): void {
    const worker = this.#slot?.worker;
    if (worker === undefined) return;
    if (this.#calls.size > 0) worker.ref();
    else worker.unref();
  }

  /** Emits from a microtask, so a listener (calling close(), say) never runs inside a transition. */
  #emit(event: string, payload: unknown): void {
    queueMicrotask(() => { this.#events.emit(event, payload); });
  }
}

