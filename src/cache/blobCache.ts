/**
 * The blob cache: compiled artifacts in files under `<dir>/v<schema>/blobs/`, indexed by identity key in
 * `<dir>/v<schema>/index.sqlite`. The schema version names the folder, so library versions with
 * different formats share a cache directory without reading or sweeping each other's entries.
 *
 * Guarantees:
 * - a hit returns only bytes whose file checks out in full on that very read (magic, version, lengths,
 *   sha256 over header and body, the key and the canonical identity); anything else is a miss, and the
 *   bad file and its row are removed;
 * - a put writes a temp file (its name holds the writer's pid), fsyncs it, and then, holding the index
 *   write lock, renames it over the blob's name, fsyncs the directory and only then writes the row. A
 *   crash leaves either the old entry, the new one, or a complete file with no row, which a get never
 *   reads and verify, gc and clear re-index; holding the lock across rename and row keeps each row
 *   describing its file even when several processes put the same key at once;
 * - verify() and a get remove what they refuse; verify reports it too;
 * - a blob file with no row (its row lost with the WAL, an emptied index) that checks out in full is
 *   re-indexed by verify, gc and clear, never deleted; a damaged index file is moved aside at open and
 *   a new one started (see repair.ts), so a broken index costs rows, which the files give back, and
 *   never blobs.
 */
import { constants, accessSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CacheError, CacheUnavailable, EngineError, messageOf } from '../errors/index.js';
import { ensureDir } from '../io/write.js';
import {
  blobFileName, commitTemp, encodeBlob, readBlobFile, removeFile, sameStamp, stampOf, writeTemp, type FileStamp,
} from './blobFile.js';
import type { CacheIndex } from './cacheIndex.js';
import { defaultCacheDir } from './defaultDir.js';
import { CACHE_SCHEMA_VERSION, resolveIdentity, type BlobIdentity, type ResolvedIdentity } from './identity.js';
import { openIndex, type IndexRepair } from './repair.js';
import { evictLru, removeAll } from './evict.js';
import { sweepOrphans, sweepTemps } from './sweep.js';
import type { CacheStats, Entry, GcResult, OpenOptions, VerifyResult } from './types.js';

function cacheFailure(e: unknown, path: string, what: string): EngineError {
  if (e instanceof EngineError) return e;
  return new CacheError(path, `${what}: ${messageOf(e)}`);
}

/** An open blob cache; one per thread, since it owns one SQLite connection. */
export class BlobCache {
  private index: CacheIndex | null;
  private readonly counts = { hits: 0, misses: 0, damaged: 0, puts: 0 };

  private constructor(
    /** The cache directory, absolute. */
    readonly dir: string,
    /** @internal The folder of blob and temp files. */
    readonly blobDir: string,
    index: CacheIndex,
    /** Where open moved a damaged index, and why; null when the index opened sound. */
    readonly repairedIndex: IndexRepair | null,
  ) {
    this.index = index;
  }

  /**
   * Opens the cache in `dir` (default: defaultCacheDir()), creating it; sweeps abandoned temp files.
   * Throws CacheUnavailable for a cause no retry fixes (the path is a file, no permission), CacheError
   * when another process held the index too long.
   */
  static open(dir: string = defaultCacheDir(), opts: OpenOptions = {}): BlobCache {
    const abs = resolve(dir);
    const root = join(abs, `v${CACHE_SCHEMA_VERSION}`);
    const blobDir = join(root, 'blobs');
    const unusable = (why: string) => new CacheUnavailable(abs, `the cache directory cannot be created or written: ${why}`);
    ensureDir(blobDir, (_p, why) => unusable(why));
    try {
      accessSync(blobDir, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch (e) {
      throw unusable(messageOf(e));
    }
    const { index, repaired } = openIndex(join(root, 'index.sqlite'), opts.repairIndex !== false);
    const cache = new BlobCache(abs, blobDir, index, repaired);
    try {
      sweepTemps(blobDir);
      if (repaired !== null && opts.reindexNow !== false) cache.reindex();
    } catch (e) {
      cache.close();
      throw e;
    }
    return cache;
  }

  /** Counters of hits, misses, damaged and refused entries, compiles and puts since open. */
  get stats(): CacheStats {
    return { ...this.counts };
  }

  /** @internal The path of the blob file of `key`. */
  blobPath(key: string): string {
    return join(this.blobDir, blobFileName(key));
  }

  /** The artifact of `id`, checked in full, or null; a hit marks the entry used. */
  get(id: BlobIdentity): Buffer | null {
    const bytes = this.load(resolveIdentity(id));
    if (bytes === null) this.counts.misses++;
    else this.counts.hits++;
    return bytes;
  }

  /** Stores `bytes` as the artifact of `id`, replacing any entry it had. */
  put(id: BlobIdentity, bytes: Uint8Array): void {
    this.store(resolveIdentity(id), bytes);
  }

  /** Removes the entry of `id`; true if there was one. */
  invalidate(id: BlobIdentity): boolean {
    return this.removeEntry(resolveIdentity(id).key);
  }

  /** Every entry, least recently used first. */
  list(): Entry[] {
    return this.idx().all();
  }

  /**
   * Checks every entry's file in full. Bad entries are removed and reported in `bad`; blob files with no
   * row are re-indexed when they check out (`reindexed`) and removed when not, and abandoned temp files
   * removed, both reported in `swept`.
   */
  verify(): VerifyResult {
    const idx = this.idx();
    const ok: Entry[] = [];
    const bad: VerifyResult['bad'][number][] = [];
    for (const entry of idx.all()) {
      const read = readBlobFile(this.blobPath(entry.key), entry.key);
      if (read.ok) {
        ok.push(entry);
      } else {
        bad.push({ entry, reason: read.reason });
        this.discard(entry.key, read.stamp);
      }
    }
    const s = this.sweep();
    return { ok, bad, reindexed: s.reindexed, swept: s.swept };
  }

  /** Gives every blob file with no row that checks out in full its row again; removes the ones that do not. */
  reindex(): Entry[] {
    return this.sweep().reindexed;
  }

  /** Removes least recently used entries until the files of the rest take at most `maxBytes`. */
  gc(opts: { readonly maxBytes: number }): GcResult {
    const { maxBytes } = opts;
    if (typeof maxBytes !== 'number' || !(maxBytes >= 0)) {
      throw new CacheError(this.dir, `gc needs maxBytes, a number of bytes of at least 0; got ${String(maxBytes)}`);
    }
    const idx = this.idx();
    this.sweep();
    return this.guard(() => idx.write(() => evictLru(idx, (k) => this.blobPath(k), maxBytes)), 'gc failed');
  }

  /** Removes every entry and every blob file (files with no row are re-indexed first, so they are listed). */
  clear(): GcResult {
    const idx = this.idx();
    this.sweep();
    return this.guard(() => idx.write(() => removeAll(idx, this.blobDir, (k) => this.blobPath(k))), 'clear failed');
  }

  /** Closes the index connection; the cache cannot be used afterwards. */
  close(): void {
    this.index?.close();
    this.index = null;
  }

  private idx(): CacheIndex {
    if (this.index === null) throw new CacheError(this.dir, 'the cache is closed');
    return this.index;
  }

  private guard<T>(fn: () => T, what: string): T {
    try {
      return fn();
    } catch (e) {
      throw cacheFailure(e, this.dir, what);
    }
  }

  /** Reads and checks the entry of `r`; removes it if it fails; marks it used if not. */
  private load(r: ResolvedIdentity): Buffer | null {
    const idx = this.idx();
    if (idx.find(r.key) === undefined) return null;
    const read = readBlobFile(this.blobPath(r.key), r.key, r.canonical);
    if (!read.ok) {
      this.counts.damaged++;
      this.discard(r.key, read.stamp);
      return null;
    }
    idx.touch(r.key, Date.now(), read.fileSize);
    return read.body;
  }

  private store(r: ResolvedIdentity, bytes: Uint8Array): void {
    const idx = this.idx();
    const file = encodeBlob(r.key, r.canonical, bytes);
    const tmp = this.guard(() => writeTemp(this.blobDir, r.key, file), 'cannot write a blob file');
    try {
      idx.write(() => {
        commitTemp(this.blobDir, tmp, r.key);
        const now = Date.now();
        idx.upsert({
          key: r.key, device: r.device, compiler: r.compiler, compilerVersion: r.compilerVersion,
          size: file.length, created: now, lastUsed: now,
        });
      });
    } catch (e) {
      try { removeFile(tmp); } catch { /* the sweep at the next open removes it */ }
      throw cacheFailure(e, this.blobDir, 'cannot store a blob');
    }
    this.counts.puts++;
  }

  /**
   * Removes the file and row of `key` unless a writer replaced the file since it was judged.
   * @internal Called by a get or verify that refused the file; tests call it to judge a replaced one.
   */
  discard(key: string, judged: FileStamp | null): void {
    const path = this.blobPath(key);
    this.guard(() => this.idx().write(() => {
      if (!sameStamp(stampOf(path), judged)) return;
      removeFile(path);
      this.idx().remove(key);
    }), 'cannot remove a bad entry');
  }

  private removeEntry(key: string): boolean {
    const idx = this.idx();
    return this.guard(() => idx.write(() => {
      removeFile(this.blobPath(key));
      return idx.remove(key);
    }), 'cannot remove an entry');
  }

  /** Sweeps abandoned temp files, then re-indexes or removes blob files no row names. */
  private sweep(): { reindexed: Entry[]; swept: string[] } {
    const idx = this.idx();
    const temps = sweepTemps(this.blobDir);
    const orphans = this.guard(() => sweepOrphans(this.blobDir, idx), 'sweep failed');
    return { reindexed: orphans.reindexed, swept: [...temps, ...orphans.removed] };
  }
}
