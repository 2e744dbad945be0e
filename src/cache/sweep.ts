/**
 * Sweeping what crashed writers leave behind: temp files nobody will rename, and blob files no index
 * row names (a writer died between its rename and its row).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { keyOfBlobName, pidOfTempName, removeFile } from './blobFile.js';

/** A temp file older than this is abandoned even if a process with its pid is alive (pid reuse). */
export const TEMP_MAX_AGE_MS = 60_000;

/** True if a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: unknown }).code === 'EPERM';
  }
}

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

/**
 * Removes blob files whose key has no row; returns their paths. Call it holding the index write lock:
 * a writer renames and inserts its row under that lock, so no file seen here is a write in progress.
 */
export function sweepOrphans(blobDir: string, hasRow: (key: string) => boolean): string[] {
  const removed: string[] = [];
  for (const name of listDir(blobDir)) {
    const key = keyOfBlobName(name);
    if (key === null || hasRow(key)) continue;
    const path = join(blobDir, name);
    if (removeFile(path)) removed.push(path);
  }
  return removed;
}
