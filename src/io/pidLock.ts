/**
 * A lock across processes: a file created exclusively, holding its owner's pid. A lock whose owner is
 * gone (killed mid-work) is taken over; one held past the wait is the caller's typed error.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

const pause = new Int32Array(new SharedArrayBuffer(4));

/** True when a process of that pid exists (EPERM: it exists but belongs to someone else). */
export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: unknown }).code === 'EPERM';
  }
}

function ownerOf(lock: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(lock, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export interface PidLockOptions {
  /** How long to wait for a live owner before giving up. */
  readonly waitMs: number;
  /** How often to look again meanwhile. */
  readonly pollMs: number;
  /** The error for a lock a live process (`owner`, null when unreadable) held past `waitMs`. */
  timedOut(owner: number | null): Error;
  /** The error for a lock file that cannot be created at all (not EEXIST). */
  cannotLock(e: unknown): Error;
}

/** Runs `fn` holding the lock file `lock`, waiting for another process's as `opts` says. */
export function withPidLock<T>(lock: string, opts: PidLockOptions, fn: () => T): T {
  const started = Date.now();
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = openSync(lock, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw opts.cannotLock(e);
      const owner = ownerOf(lock);
      // A lock with no readable pid may be one being written this instant: give it one more look.
      if (owner !== null && !pidAlive(owner)) { rmSync(lock, { force: true }); continue; }
      if (Date.now() - started > opts.waitMs) throw opts.timedOut(owner);
      Atomics.wait(pause, 0, 0, opts.pollMs);
    }
  }
  try {
    try { writeSync(fd, `${process.pid}\n`); } finally { closeSync(fd); }
    return fn();
  } finally {
    try { rmSync(lock, { force: true }); } catch { /* a lock left behind is taken over once this process is gone */ }
  }
}
