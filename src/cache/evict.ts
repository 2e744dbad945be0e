/** The bulk removals of the blob cache, gc's and clear's; each runs holding the index write lock. */
import { removeFile, stampOf } from './blobFile.js';
import type { CacheIndex } from './cacheIndex.js';
import { removeUnindexed } from './sweep.js';
import type { Entry, GcResult } from './types.js';

/** Removes least recently used entries until the files of the rest take at most `maxBytes`. */
export function evictLru(idx: CacheIndex, pathOf: (key: string) => string, maxBytes: number): GcResult {
  const live: { entry: Entry; size: number }[] = [];
  const removed: Entry[] = [];
  for (const entry of idx.all()) {
    // Account what is on disk: a row whose file is gone is removed, and costs nothing.
    const stamp = stampOf(pathOf(entry.key));
    if (stamp === null) {
      idx.remove(entry.key);
      removed.push(entry);
    } else {
      live.push({ entry, size: stamp.size });
    }
  }
  let total = live.reduce((s, l) => s + l.size, 0);
  let freedBytes = 0;
  for (const { entry, size } of live) {
    if (total <= maxBytes) break;
    removeFile(pathOf(entry.key));
    idx.remove(entry.key);
    removed.push(entry);
    total -= size;
    freedBytes += size;
  }
  return { removed, freedBytes };
}

/** Removes every entry and every blob file, listed or not. */
export function removeAll(idx: CacheIndex, blobDir: string, pathOf: (key: string) => string): GcResult {
  const removed = idx.all();
  let freedBytes = 0;
  for (const entry of removed) {
    const path = pathOf(entry.key);
    freedBytes += stampOf(path)?.size ?? 0;
    removeFile(path);
    idx.remove(entry.key);
  }
  // A writer that died after its rename since the last sweep left a file with no row: it goes too.
  freedBytes += removeUnindexed(blobDir, (k) => idx.find(k) !== undefined).bytes;
  return { removed, freedBytes };
}
