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
  constructor(readonly limit: RestartIntensity) {}

  /** Records a restart if the intensity allows one more; false means: report the actor down. */
  admit(): boolean {
    // performance.now is monotonic: a wall-clock jump must not forgive or invent restarts.
    const now = performance.now();
    this.#times = this.#times.filter((t) => now - t < this.limit.windowMs);
    if (this.#times.length >= this.limit.max) return false;
    this.#times.push(now);
    return true;
  }

  /** Restarts made within the current window. */
  get count(): number {
    const now = performance.now();
    return this.#times.filter((t) => now - t < this.limit.windowMs).length;
  }
}
