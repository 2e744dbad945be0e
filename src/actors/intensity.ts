/**
 * The OTP restart intensity: at most `max` restarts within any `windowMs`; one more and the actor is
 * reported down instead of restarted, so a crash loop (a worker that dies while starting) ends.
 */
import { performance } from 'node:perf_hooks';

/** At most `max` restarts within `windowMs` milliseconds. */
export interface RestartIntensity {
  readonly max: number;
  readonly windowMs: number;
}

/** @internal A sliding window of restart times. */
export class RestartWindow {
  #times: number[] = [];
  /**
   * `now` reads the clock in ms; performance.now, monotonic, so a wall-clock jump can neither forgive
   * nor invent restarts. Tests pass their own clock so that a window is not a race with the scheduler.
   */
  constructor(readonly limit: RestartIntensity, readonly now: () => number = () => performance.now()) {}

  /** Records a restart if the intensity allows one more; false means: report the actor down. */
  admit(): boolean {
    const now = this.now();
    this.#times = this.#times.filter((t) => now - t < this.limit.windowMs);
    if (this.#times.length >= this.limit.max) return false;
    this.#times.push(now);
    return true;
  }

  /** Restarts made within the current window. */
  get count(): number {
    const now = this.now();
    return this.#times.filter((t) => now - t < this.limit.windowMs).length;
  }
}
