/**
 * A submitted job: an event emitter of its stages and a `result` promise that always settles, with the
 * results or a typed error.
 */
import { EventEmitter } from 'eventemitter3';
import type { EngineError } from '../errors/index.js';
import type { Comparison } from '../numerics/compare.js';
import type { TensorMap } from '../oracle/types.js';
import type { TargetName } from '../targets/target.js';

export type JobStage = 'planned' | 'cache-hit' | 'compiled' | 'loaded' | 'step' | 'verified' | 'done';

export interface StepEvent { readonly index: number; readonly results: TensorMap }

/** Per result name, the comparison of the device's last-step result with the oracle's. */
export interface Verification {
  readonly numericsClass: string;
  readonly pass: boolean;
  /** One entry per step, each mapping a result name to its comparison. */
  readonly steps: readonly Readonly<Record<string, Comparison>>[];
}

export interface JobResult {
  /** The last step's results, by name. */
  readonly results: TensorMap;
  /** The carried state after the last step. */
  readonly state: TensorMap;
  /** Every step's results, in order. */
  readonly steps: readonly TensorMap[];
  readonly target: TargetName;
  /** True when the device that ran the job is a simulator, not hardware. */
  readonly simulated: boolean;
  readonly cacheHit: boolean;
  readonly verification?: Verification;
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

/** A job in flight. Listen to its stages; await `result`. */
export class Job extends EventEmitter<JobEvents> {
  /** The stages the job has passed, in order. */
  readonly stages: JobStage[] = [];
  readonly result: Promise<JobResult>;
  #settle!: { resolve: (r: JobResult) => void; reject: (e: EngineError) => void };

  constructor(readonly id: number) {
    super();
    this.result = new Promise<JobResult>((resolve, reject) => { this.#settle = { resolve, reject }; });
    // A caller that only listens to events must not crash the process with an unhandled rejection.
    this.result.catch(() => undefined);
  }

  /** @internal Records a stage and emits it. */
  stage<K extends JobStage>(name: K, ...payload: Parameters<JobEvents[K]>): void {
    this.stages.push(name);
    (this.emit as (n: K, ...p: Parameters<JobEvents[K]>) => boolean)(name, ...payload);
  }

  /** @internal */
  succeed(r: JobResult): void {
    this.stage('done', r);
    this.#settle.resolve(r);
  }

  /** @internal */
  fail(e: EngineError): void {
    this.emit('failed', e);
    this.#settle.reject(e);
  }
}
