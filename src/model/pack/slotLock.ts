/**
 * One writer per repack cache slot across processes. Two servers that meet the same GGUF at once must
 * not both repack it into the same directory: the second waits for the first, then finds a hit. The
 * lock is a file created exclusively next to the slot, holding its owner's pid; a lock whose owner is
 * gone (killed mid-pack) is taken over.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { UsageError } from '../../errors/index.js';

const pause = new Int32Array(new SharedArrayBuffer(4));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
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

/** Runs `fn` holding the lock of slot `dir`, waiting up to `waitMs` for another process's lock. */
export function withSlotLock<T>(dir: string, fn: () => T, waitMs = 30 * 60_000): T {
  const lock = `${dir}.lock`;
  const started = Date.now();
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = openSync(lock, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = ownerOf(lock);
      // A lock with no readable pid may be one being written this instant: give it one more look.
      if (owner !== null && !alive(owner)) { rmSync(lock, { force: true }); continue; }
      if (Date.now() - started > waitMs) {
        throw new UsageError(`the repack cache slot ${dir} has been locked by process ${owner ?? '?'} for over ${Math.round(waitMs / 1000)} s; remove ${lock} if that process is gone`);
      }
      Atomics.wait(pause, 0, 0, 100);
    }
  }
  try {
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}
