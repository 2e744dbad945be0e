/**
 * A submitted job: an event emitter of its stages and a `result` promise that always settles, with the
 * results or a typed error. A listener that throws (or returns a promise that rejects) changes nothing
 * of the job: the listeners after it still run, the job settles as it would have, and the exception is
 * handed to the engine as a ListenerError (its `error` event, else a process warning).
 */
import { EventEmitter } from 'eventemitter3';
import type { EngineError } from '../errors/index.js';
import type { Comparison } from '../numerics/compare.js';
import type { TensorMap } from '../oracle/types.js';
import type { TargetName } from '../targets/target.js';
import { messageOf } from '../errors/index.js';

export type JobStage = 'planned' | 'cache-hit' | 'compiled' | 'loaded' | 'step' | 'verified' | 'done';

export interface StepEvent { readonly index: number; readonly results: TensorMap }

/** The first failed comparison of a verified job: which step, which result, and how it failed. */
export interface VerificationFailure {
  readonly step: number;
  readonly result: string;
  readonly comparison: Comparison;
}

/** Per step and result name, the comparison of the device's result with the oracle's. */
export interface Verification {
  readonly numericsClass: string;
  /** True when every step's every result passed, kept or not. */
  readonly pass: boolean;
  /** One entry per kept step (as `JobResult.steps`), each mapping a result name to its comparison. */
  readonly steps: readonly Readonly<Record<string, Comparison>>[];
  /** The first failure, kept whether or not its step is. */
  readonly firstFailure?: VerificationFailure;
}

export interface JobResult {
  /** The last step's results, by name. */
  readonly results: TensorMap;
  /** The carried state after the last step. */
  readonly state: TensorMap;
  /** How many steps ran. */
  readonly stepCount: number;
  /**
   * The results of the last steps, in order: all of them unless the job ran more than its `keepSteps`
   * (default 1000); `steps[k]` is step `stepCount - steps.length + k`. Every step is streamed on `step`.
   */
  readonly steps: readonly TensorMap[];
  readonly target: TargetName;
  /** True when the device that ran the job is a simulator, not hardware. */
  readonly simulated: boolean;
  readonly cacheHit: boolean;
  readonly verification?: Verification;
  /** A job whose target is a list (src/jobs/partitioned.ts): its segments' devices and the transfers that ran. */
  readonly partition?: {
    readonly segments: readonly { readonly index: number; readonly target: TargetName; readonly device: string; readonly simulated: boolean }[];
    readonly transfers: readonly { readonly step: number; readonly value: string; readonly from: number; readonly to: number; readonly fromDevice: TargetName; readonly toDevice: TargetName; readonly bytes: number; readonly carried?: string }[];
  };
}

export interface JobEvents {
  /** `regions`: the artifacts the program compiles to, one hardware context each. */
  planned: (e: { target: TargetName; regions: number }) => void;
  'cache-hit': (e: { key: string }) => void;
  compiled: (e: { key: string; ms: number }) => void;
  /**
   * `fileWeights`: of the weights bound from files, how many were still resident on the device from an
   * earlier job (same file, unchanged: its identity is its path, size, mtime and sampled digest) and how
   * many were read (or mapped) now.
   */
  loaded: (e: { device: string; simulated: boolean; fileWeights: { reused: number; bound: number } }) => void;
  step: (e: StepEvent) => void;
  verified: (e: Verification) => void;
  done: (e: JobResult) => void;
  failed: (e: EngineError) => void;
}

/** A job's listener threw: which job, on which event, and what it threw (`cause`). */
export class ListenerError extends Error {
  constructor(readonly jobId: number, readonly event: keyof JobEvents, override readonly cause: unknown) {
    super(`a listener of job ${jobId} on '${event}' threw ${messageOf(cause)}; the job went on`);
    this.name = 'ListenerError';
  }
}

/** A job in flight. Listen to its stages; await `result`. */
export class Job extends EventEmitter<JobEvents> {
  /** The stages the job has passed, in order. */
  readonly stages: JobStage[] = [];
  readonly result: Promise<JobResult>;
  #settle!: { resolve: (r: JobResult) => void; reject: (e: EngineError) => void };
  #failed = false;
  readonly #onListenerError: (e: ListenerError) => void;

  /** `onListenerError` receives what a listener throws (default: a process warning). */
  constructor(readonly id: number, onListenerError: (e: ListenerError) => void = (e) => { process.emitWarning(e); }) {
    super();
    this.#onListenerError = onListenerError;
    this.result = new Promise<JobResult>((resolve, reject) => { this.#settle = { resolve, reject }; });
    // A caller that only listens to events must not crash the process with an unhandled rejection.
    this.result.catch(() => undefined);
  }

  /** @internal Records a stage and emits it; nothing after the job has failed (an abort fails it at once, its work ends later). */
  stage<K extends JobStage>(name: K, ...payload: Parameters<JobEvents[K]>): void {
    if (this.#failed) return;
    this.stages.push(name);
    this.#dispatch(name, payload);
  }

  /** @internal */
  succeed(r: JobResult): void {
    this.stage('done', r);
    this.#settle.resolve(r);
  }

  /** @internal */
  fail(e: EngineError): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#dispatch('failed', [e]);
    this.#settle.reject(e);
  }

  /** Calls each listener as EventEmitter3's emit would (a `once` one removed first), each on its own. */
  #dispatch(name: keyof JobEvents, payload: readonly unknown[]): void {
    for (const fn of this.listeners(name)) {
      this.removeListener(name, fn, undefined, true);
      try {
        const r: unknown = Reflect.apply(fn, this, payload);
        if (typeof (r as PromiseLike<unknown> | null)?.then === 'function') {
          (r as PromiseLike<unknown>).then(undefined, (e: unknown) => { this.#report(name, e); });
        }
      } catch (e) {
        this.#report(name, e);
      }
    }
  }

  #report(name: keyof JobEvents, e: unknown): void {
    try {
      this.#onListenerError(new ListenerError(this.id, name, e));
    } catch {
      // The reporter is the engine's; nothing it throws may change the job either.
    }
  }
}
