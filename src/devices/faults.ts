/**
 * Fault injection, and the deadline every device enforces on its own runs. Every device (the CpuDevice
 * and, when they land, the simulated XDNA2 and NPU4) takes the same FaultOptions, so a test of the engine
 * or the supervisor can make any device hang, crawl or refuse to load.
 *
 * Two ways to hang, because real drivers hang in two ways:
 *   - 'async' (the default): the run's completion never arrives, but the thread is free, so the device's
 *     own deadline timer fires: the run rejects DeadlineExceeded and the device is poisoned.
 *   - 'block': the driver call never returns and blocks the thread (Atomics.wait on a SharedArrayBuffer
 *     no one notifies). The device cannot answer its own deadline then; only a supervisor in another
 *     thread can, by terminating the worker actor the device lives in. Never use it on the main thread.
 * A slow run in 'block' mode blocks for `slowRunMs` and the device notices the missed deadline when the
 * call returns, as a synchronous driver call would.
 */
import { DeadlineExceeded } from '../errors/index.js';

export interface FaultOptions {
  /** The Nth run (1-based, counting runs that reach the driver) never completes; 'always': every run. */
  readonly hangOnRun?: number | 'always';
  /** Every run takes this long before it computes. */
  readonly slowRunMs?: number;
  /** Load fails with LoadFailed: every load (true), or only the Nth (1-based). */
  readonly failLoad?: boolean | number;
  /** How a hang (and a slow run) behaves; see the file's doc. */
  readonly hangMode?: 'async' | 'block';
}

/** Checks fault options once, at device creation, so a typo is not silently no fault at all. */
export function checkFaults(f: FaultOptions): FaultOptions {
  const posInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1;
  if (f.hangOnRun !== undefined && f.hangOnRun !== 'always' && !posInt(f.hangOnRun)) {
    throw new RangeError(`faults.hangOnRun must be a run number from 1 or 'always', got ${String(f.hangOnRun)}`);
  }
  if (f.slowRunMs !== undefined && !(Number.isFinite(f.slowRunMs) && f.slowRunMs >= 0)) {
    throw new RangeError(`faults.slowRunMs must be a finite number of ms >= 0, got ${String(f.slowRunMs)}`);
  }
  if (f.failLoad !== undefined && typeof f.failLoad !== 'boolean' && !posInt(f.failLoad)) {
    throw new RangeError(`faults.failLoad must be a boolean or a load number from 1, got ${String(f.failLoad)}`);
  }
  if (f.hangMode !== undefined && f.hangMode !== 'async' && f.hangMode !== 'block') {
    throw new RangeError(`faults.hangMode must be 'async' or 'block', got ${String(f.hangMode)}`);
  }
  return { ...f };
}

/** True when the `n`th load (1-based) is to fail. */
export function loadFails(f: FaultOptions, n: number): boolean {
  return f.failLoad === true || f.failLoad === n;
}

/** True when the `n`th run (1-based) is to hang. */
function runHangs(f: FaultOptions, n: number): boolean {
  return f.hangOnRun === 'always' || f.hangOnRun === n;
}

/** Blocks the calling thread for `ms` (for ever when undefined): a driver call that does not return. */
function blockThread(ms?: number): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  // No one holds `cell`, so no notify can come: only the timeout (or terminating the thread) ends this.
  Atomics.wait(cell, 0, 0, ms);
}

/** Checks a run's deadline: a positive number of ms, or Infinity for none. */
export function checkDeadline(deadlineMs: number): void {
  if (typeof deadlineMs !== 'number' || Number.isNaN(deadlineMs) || deadlineMs <= 0) {
    throw new RangeError(`deadlineMs must be a positive number of ms, got ${String(deadlineMs)}`);
  }
}

// setTimeout fires at once past this delay, so a longer deadline is treated as none.
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface DriverRun {
  readonly faults: FaultOptions;
  /** This run's number among runs that reached the driver (1-based). */
  readonly runNumber: number;
  readonly deadlineMs: number;
  /** Computes the run and returns the step that writes its outputs; it throws the run's typed errors. */
  readonly compute: () => () => void;
  /** Poisons the device; called once, when the deadline is missed. */
  readonly onMiss: () => void;
}

/**
 * Runs one driver call under its deadline, with the injected faults. Outputs are written only by a run
 * that finished within its deadline: a late run's results are not trusted, and the device is poisoned.
 */
export function driverRun(r: DriverRun): Promise<void> {
  const start = performance.now();
  const block = r.faults.hangMode === 'block';
  const hang = runHangs(r.faults, r.runNumber);
  const slowMs = r.faults.slowRunMs ?? 0;
  if (block && hang) blockThread();
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let slowTimer: ReturnType<typeof setTimeout> | undefined;
    let deadlineTimer: ReturnType<typeof setTimeout> | undefined;
    const miss = () => {
      if (settled) return;
      settled = true;
      if (slowTimer !== undefined) clearTimeout(slowTimer);
      if (deadlineTimer !== undefined) clearTimeout(deadlineTimer);
      r.onMiss();
      reject(new DeadlineExceeded(r.deadlineMs));
    };
    const finish = () => {
      if (settled) return;
      let commit: () => void;
      try {
        commit = r.compute();
      } catch (e) {
        settled = true;
        if (deadlineTimer !== undefined) clearTimeout(deadlineTimer);
        reject(e);
        return;
      }
      // The compute is synchronous, so the timer cannot fire during it: check the clock as well.
      if (performance.now() - start > r.deadlineMs) { miss(); return; }
      settled = true;
      if (deadlineTimer !== undefined) clearTimeout(deadlineTimer);
      commit();
      resolve();
    };
    if (r.deadlineMs <= MAX_TIMER_MS) deadlineTimer = setTimeout(miss, r.deadlineMs);
    if (hang) return; // an 'async' hang: nothing completes; only the deadline timer settles the run
    if (slowMs > 0 && block) {
      blockThread(slowMs);
      finish();
    } else if (slowMs > 0) {
      slowTimer = setTimeout(finish, slowMs);
    } else {
      // Completion arrives as an event, as from a driver, so the caller always sees an async settle.
      setImmediate(finish);
    }
  });
}
