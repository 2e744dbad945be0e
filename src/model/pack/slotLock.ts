/**
 * One writer per repack cache slot across processes. Two servers that meet the same GGUF at once must
 * not both repack it into the same directory: the second waits for the first, then finds a hit. The
 * lock is a file created exclusively next to the slot, holding its owner's pid; a lock whose owner is
 * gone (killed mid-pack) is taken over.
 */
import { withPidLock } from '../../io/pidLock.js';
import { UsageError } from '../../errors/index.js';

/** Runs `fn` holding the lock of slot `dir`, waiting up to `waitMs` for another process's lock. */
export function withSlotLock<T>(dir: string, fn: () => T, waitMs = 30 * 60_000): T {
  const lock = `${dir}.lock`;
  return withPidLock(lock, {
    waitMs,
    pollMs: 100,
    timedOut: (owner) => new UsageError(`the repack cache slot ${dir} has been locked by process ${owner ?? '?'} for over ${Math.round(waitMs / 1000)} s; remove ${lock} if that process is gone`),
    cannotLock: (e) => e instanceof Error ? e : new Error(String(e)),
  }, fn);
}
