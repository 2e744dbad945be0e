/**
 * Sweeping what crashed writers leave behind: temp files nobody will rename, and blob files no index
 * row names (a writer died between its rename and its row, the index lost its last rows with its WAL,
 * or it was emptied or replaced). A blob file is complete before its name exists and carries its own
 * identity and checksum, so one with no row that checks out in full is re-indexed, not deleted: only a
 * damaged one is removed.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pidAlive } from '../io/pidLock.js';
import { keyOfBlobName, pidOfTempName, readBlobFile, removeFile, sameStamp, stampOf, type BlobDefect, type FileStamp } from './blobFile.js';
import type { Entry } from './types.js';

/** A temp file older than this is abandoned even if a process with its pid is alive (pid reuse). */
const TEMP_MAX_AGE_MS = 60_000;

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Removes temp files whose writer is dead or that are older than a minute; returns their paths. A
 * temp file of a live writer (this process's other threads included) is left alone until then.
 */
export function sweepTemps(blobDir: string, now = Date.now()): string[] {
  const removed: string[] = [];
  for (const name of listDir(blobDir)) {
    const pid = pidOfTempName(name);
    if (pid === null) continue;
    const path = join(blobDir, name);
    let mtimeMs: number;
    try {
      mtimeMs = statSync(path).mtimeMs;
    } catch {
      continue;
    }
    if (pidAlive(pid) && now - mtimeMs < TEMP_MAX_AGE_MS) continue;
    if (removeFile(path)) removed.push(path);
  }
  return removed;
}

/** What the index rows of the sweep need: find a row, insert one. */
export interface OrphanIndex {
  find(key: string): Entry | undefined;
  upsert(row: Entry): void;
  write<T>(fn: () => T): T;
}

/** One blob file with no row, as judged from a full read: the row it would get, or what is wrong with it. */
type Judged = { readonly path: string; readonly key: string; readonly stamp: FileStamp }
  & ({ readonly row: Entry } | { readonly row: null; readonly reason: BlobDefect | 'not-an-identity' });

/** Orphans judged per transaction: bounds the time the write lock is held and the memory of a rebuild. */
const BATCH = 256;

/** The row a checked blob file's own identity gives, or null if its identity is not one of ours. */
function rowOf(key: string, identity: Buffer, stamp: FileStamp): Entry | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(identity.toString('utf8'));
  } catch {
    return null;
  }
  const id = (parsed as { identity?: Record<string, unknown> } | null)?.identity;
  const device = id?.['device'], compiler = id?.['compiler'], compilerVersion = id?.['compilerVersion'];
  if (typeof device !== 'string' || typeof compiler !== 'string' || typeof compilerVersion !== 'string') return null;
  const time = Math.round(stamp.mtimeMs);
  return { key, device, compiler, compilerVersion, size: stamp.size, created: time, lastUsed: time };
}

function judge(blobDir: string, name: string, key: string): Judged | null {
  const path = join(blobDir, name);
  // Checked against its key only: the file's identity must hash to the key its name and header hold.
  const read = readBlobFile(path, key);
  if (read.stamp === null) return null; // gone, or unreadable: nothing to judge
  if (!read.ok) return { path, key, stamp: read.stamp, row: null, reason: read.reason };
  const row = rowOf(key, read.identity, read.stamp);
  return row === null ? { path, key, stamp: read.stamp, row: null, reason: 'not-an-identity' } : { path, key, stamp: read.stamp, row };
}

/**
 * Re-indexes every blob file whose key has no row and that checks out in full, and removes those that
 * do not; returns both. Files are read outside the write lock; under it, a file is settled only if it
 * still has no row and is still the version that was read, since a writer renames and inserts its row
 * under that lock, and may have done so in between.
 */
export function sweepOrphans(blobDir: string, idx: OrphanIndex): { reindexed: Entry[]; removed: string[] } {
  const reindexed: Entry[] = [];
  const removed: string[] = [];
  const names = listDir(blobDir).filter((n) => keyOfBlobName(n) !== null);
  for (let at = 0; at < names.length; at += BATCH) {
    const judged: Judged[] = [];
    for (const name of names.slice(at, at + BATCH)) {
      const key = keyOfBlobName(name)!;
      if (idx.find(key) !== undefined) continue;
      const j = judge(blobDir, name, key);
      if (j !== null) judged.push(j);
    }
    // Oldest first, so the rebuilt LRU order follows the files' ages.
    judged.sort((a, b) => a.stamp.mtimeMs - b.stamp.mtimeMs);
    idx.write(() => {
      for (const j of judged) {
        if (idx.find(j.key) !== undefined || !sameStamp(stampOf(j.path), j.stamp)) continue;
        if (j.row !== null) {
          idx.upsert(j.row);
          reindexed.push(j.row);
        } else if (removeFile(j.path)) {
          removed.push(j.path);
        }
      }
    });
  }
  return { reindexed, removed };
}

/** Removes every blob file no row names, valid or not; returns their paths and bytes. Hold the write lock. */
export function removeUnindexed(blobDir: string, hasRow: (key: string) => boolean): { removed: string[]; bytes: number } {
  const removed: string[] = [];
  let bytes = 0;
  for (const name of listDir(blobDir)) {
    const key = keyOfBlobName(name);
    if (key === null || hasRow(key)) continue;
    const path = join(blobDir, name);
    const size = stampOf(path)?.size ?? 0;
    if (removeFile(path)) { removed.push(path); bytes += size; }
  }
  return { removed, bytes };
}
