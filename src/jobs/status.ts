/**
 * The engine as it runs, for a status page or a script: each device actor (its state, restarts, when
 * it was poisoned, its jobs running and waiting), the other actors, job counts, the blob cache's
 * counters, and the last failures with their codes.
 */
import type { ActorState } from '../actors/types.js';
import type { CacheTierStats } from '../actors/cacheActor.js';

/** One actor: its name, where it is in its life, and how often it was restarted. */
export interface ActorStatus {
  readonly name: string;
  readonly state: ActorState;
  readonly restarts: number;
  /** Set while a missed deadline keeps it poisoned (until its replacement is ready). */
  readonly poisonedSince: string | null;
}

/** A device actor, with its job queue. */
export interface DeviceStatus extends ActorStatus {
  readonly kind: string;
  /** Jobs on the device now, and waiting for a hardware context. */
  readonly running: number;
  readonly waiting: number;
  /** Sessions open on it now (Engine.openSession: a model's decode session, a partitioned run's segments). */
  readonly sessions: number;
}

/** One failed job, as the status keeps it. */
export interface FailureRecord {
  readonly at: string;
  readonly jobId: number;
  readonly target: string;
  readonly code: string;
  readonly message: string;
}

export interface EngineStatus {
  /** Device actors started so far (a device is started by its first job). */
  readonly devices: readonly DeviceStatus[];
  /** The planner and the blob cache, once started. */
  readonly actors: readonly ActorStatus[];
  readonly jobs: { readonly submitted: number; readonly succeeded: number; readonly failed: number; readonly running: number };
  /** The blob cache's counters (entries, bytes, hits), or null before the cache started or when it cannot answer. */
  readonly cache: (CacheTierStats & { readonly hitRate: number | null }) | null;
  /** The last failures, newest last (at most LAST_ERRORS). */
  readonly lastErrors: readonly FailureRecord[];
}

/** How many failures the status keeps. */
const LAST_ERRORS = 20;

/** Job counts and the last failures, kept by the engine as jobs settle. */
export class JobLedger {
  submitted = 0;
  succeeded = 0;
  failed = 0;
  readonly #errors: FailureRecord[] = [];

  get running(): number { return this.submitted - this.succeeded - this.failed; }
  get lastErrors(): readonly FailureRecord[] { return [...this.#errors]; }

  fail(r: FailureRecord): void {
    this.failed++;
    this.#errors.push(r);
    if (this.#errors.length > LAST_ERRORS) this.#errors.shift();
  }
}

/** The hit rate of a cache's counters: hits over lookups, or null before any lookup. */
export function hitRate(s: CacheTierStats): number | null {
  const lookups = s.localHits + s.remoteHits + s.misses;
  return lookups === 0 ? null : (s.localHits + s.remoteHits) / lookups;
}
