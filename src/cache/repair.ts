/**
 * A damaged index is not a reason to lose the cache: every blob file carries its own identity and
 * checksum, so the rows can be rebuilt from the files. The damaged file is kept, renamed aside with a
 * timestamp (with its -wal and -shm, so SQLite tools can still open it), and a new index is started.
 * One process repairs at a time: without a lock, a second process that judged the old file damaged
 * could move aside the new index the first one just made and is already using.
 */
import { existsSync, renameSync } from 'node:fs';
import { CacheError, CacheUnavailable, messageOf } from '../errors/index.js';
import { CacheIndex } from './cacheIndex.js';
import { withPidLock } from '../io/pidLock.js';

/** What open did about a damaged index: where the damaged file went, and what was wrong with it. */
export interface IndexRepair {
  readonly movedTo: string;
  readonly reason: string;
}

/** How long open waits for another process's repair, which only renames and creates files. */
const REPAIR_WAIT_MS = 10_000;


/**
 * Opens the index at `file`. A damaged one is moved aside and replaced by a new, empty one when
 * `repair` is set, and refused with CacheUnavailable when it is not.
 */
export function openIndex(file: string, repair: boolean): { index: CacheIndex; repaired: IndexRepair | null } {
  const first = CacheIndex.open(file);
  if (first instanceof CacheIndex) return { index: first, repaired: null };
  if (!repair) {
    throw new CacheUnavailable(file, `the index is damaged (${first.damaged}); \`npu-offload cache verify\` moves it aside and rebuilds it from the blobs`);
  }
  return withRepairLock(file, () => {
    // Another process may have repaired it while this one waited for the lock.
    const again = CacheIndex.open(file);
    if (again instanceof CacheIndex) return { index: again, repaired: null };
    const movedTo = moveAside(file);
    const fresh = CacheIndex.open(file);
    if (!(fresh instanceof CacheIndex)) throw new CacheUnavailable(file, `a new index is damaged as soon as it is made: ${fresh.damaged}`);
    return { index: fresh, repaired: { movedTo, reason: again.damaged } };
  });
}

/** Renames the index and its -wal and -shm to `<file>.damaged-<time>`; returns the new name. */
function moveAside(file: string): string {
  const time = new Date().toISOString().replace(/[:.]/g, '-');
  let aside = `${file}.damaged-${time}`;
  for (let n = 2; existsSync(aside); n++) aside = `${file}.damaged-${time}-${n}`;
  try {
    renameSync(file, aside);
    for (const suffix of ['-wal', '-shm']) {
      if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix);
    }
  } catch (e) {
    throw new CacheUnavailable(file, `the damaged index cannot be moved aside: ${messageOf(e)}`);
  }
  return aside;
}

/** Runs `fn` holding `<file>.repair-lock`, a file created exclusively that holds its owner's pid. */
function withRepairLock<T>(file: string, fn: () => T): T {
  const lock = `${file}.repair-lock`;
  return withPidLock(lock, {
    waitMs: REPAIR_WAIT_MS,
    pollMs: 20,
    timedOut: (owner) => new CacheError(file, `process ${owner ?? '?'} has been repairing the index for over ${REPAIR_WAIT_MS / 1000} s; remove ${lock} if it is gone`),
    cannotLock: (e) => new CacheUnavailable(file, `cannot take the repair lock ${lock}: ${messageOf(e)}`),
  }, fn);
}
