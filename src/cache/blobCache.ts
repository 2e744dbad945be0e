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
 *   crash leaves either the old entry, the new one, or a file with no row, which is never read and which
 *   gc and verify sweep; holding the lock across rename and row keeps each row describing its file
 *   even when several processes put the same key at once;
 * - verify() and a get remove what they refuse; verify reports it too.
 */
import { constants, accessSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CacheError, EngineError } from '../errors.js';
import { ensureDir } from '../io/write.js';
import {
  blobFileName, commitTemp, encodeBlob, readBlobFile, removeFile, sameStamp, stampOf, writeTemp, type FileStamp,
} from './blobFile.js';
import { CacheIndex } from './cacheIndex.js';
import { defaultCacheDir } from './defaultDir.js';
import { CACHE_SCHEMA_VERSION, resolveIdentity, type BlobIdentity, type ResolvedIdentity } from './identity.js';
import { sweepOrphans, sweepTemps } from './sweep.js';
import type { CacheStats, Entry, GcResult, VerifyResult } from './types.js';

/** The outcome of getOrCompile: the artifact, and whether it came from the cache. */
export interface CompileResult {
  readonly bytes: Buffer;
  readonly hit: boolean;
}

function wrap(e: unknown, path: string, what: string): EngineError {
  if (e instanceof EngineError) return e;
  return new CacheError(path, `${what}: ${e instanceof Error ? e.message : String(e)}`);
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** An open blob cache; one per thread, since it owns one SQLite connection. */
export class BlobCache {
  private index: CacheIndex | null;
  private readonly counts = { hits: 0, misses: 0, damaged: 0, refused: 0, compiles: 0, puts: 0 };
  private readonly inflight = new Map<string, Promise<CompileResult>>();

  private constructor(
    /** The cache directory, absolute. */
    readonly dir: string,
    /** @internal The folder of blob and temp files. */
    readonly blobDir: string,
    index: CacheIndex,
  ) {
    this.index = index;
  }

  /** Opens the cache in `dir` (default: defaultCacheDir()), creating it; sweeps abandoned temp files. */
  static open(dir: string = defaultCacheDir()): BlobCache {
    const abs = resolve(dir);
    const root = join(abs, `v${CACHE_SCHEMA_VERSION}`);
    const blobDir = join(root, 'blobs');
    try {
      ensureDir(blobDir, (_p, why) => new CacheError(abs, `the cache directory cannot be created or written: ${why}`));
      accessSync(blobDir, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch (e) {
      throw wrap(e, abs, 'the cache directory cannot be created or written');
    }
    const index = CacheIndex.open(join(root, 'index.sqlite'));
    sweepTemps(blobDir);
    return new BlobCache(abs, blobDir, index);
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

  /**
   * The cached artifact of `id`, or `compile()`'s, stored. A cached one that `accept` refuses (the device
   * will not load it) is removed and recompiled; a fresh one is not offered to `accept`, so a device that
   * refuses everything cannot loop. Concurrent calls for one key in this thread share one compile.
   */
  getOrCompile(
    id: BlobIdentity,
    compile: () => Buffer | Promise<Buffer>,
    accept?: (bytes: Buffer) => boolean,
  ): Promise<CompileResult> {
    let r: ResolvedIdentity;
    try {
      r = resolveIdentity(id);
    } catch (e) {
      return Promise.reject(e);
    }
    const pending = this.inflight.get(r.key);
    if (pending) return pending;
    const p = this.compileOnce(r, compile, accept).finally(() => this.inflight.delete(r.key));
    this.inflight.set(r.key, p);
    return p;
  }

  private async compileOnce(
    r: ResolvedIdentity,
    compile: () => Buffer | Promise<Buffer>,
    accept: ((bytes: Buffer) => boolean) | undefined,
  ): Promise<CompileResult> {
    const cached = this.load(r);
    if (cached !== null) {
      if (accept === undefined || accept(cached)) {
        this.counts.hits++;
        return { bytes: cached, hit: true };
      }
      this.counts.refused++;
      this.removeEntry(r.key);
    }
    this.counts.misses++;
    this.counts.compiles++;
    const bytes = asBuffer(await compile());
    this.store(r, bytes);
    return { bytes, hit: false };
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
   * row and abandoned temp files are removed and reported in `swept`.
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
    return { ok, bad, swept: this.sweep() };
  }

  /** Removes least recently used entries until the files of the rest take at most `maxBytes`. */
  gc(opts: { readonly maxBytes: number }): GcResult {
    const { maxBytes } = opts;
    if (typeof maxBytes !== 'number' || !(maxBytes >= 0)) {
      throw new CacheError(this.dir, `gc needs maxBytes, a number of bytes of at least 0; got ${String(maxBytes)}`);
    }
    const idx = this.idx();
    this.sweep();
    return this.guard(() => idx.write(() => {
      const live: { entry: Entry; size: number }[] = [];
      const removed: Entry[] = [];
      for (const entry of idx.all()) {
        // Account what is on disk: a row whose file is gone is removed, and costs nothing.
        const stamp = stampOf(this.blobPath(entry.key));
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
        removeFile(this.blobPath(entry.key));
        idx.remove(entry.key);
        removed.push(entry);
        total -= size;
        freedBytes += size;
      }
      return { removed, freedBytes };
    }), 'gc failed');
  }

  /** Removes every entry and every blob file. */
  clear(): GcResult {
    const idx = this.idx();
    const result = this.guard(() => idx.write(() => {
      const removed = idx.all();
      let freedBytes = 0;
      for (const entry of removed) {
        const path = this.blobPath(entry.key);
        freedBytes += stampOf(path)?.size ?? 0;
        removeFile(path);
        idx.remove(entry.key);
      }
      return { removed, freedBytes };
    }), 'clear failed');
    this.sweep();
    return result;
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
      throw wrap(e, this.dir, what);
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
      throw wrap(e, this.blobDir, 'cannot store a blob');
    }
    this.counts.puts++;
  }

  /** Removes the file and row of `key` unless a writer replaced the file since it was judged. */
  private discard(key: string, judged: FileStamp | null): void {
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

  /** Sweeps abandoned temp files, then, under the write lock, blob files no row names. */
  private sweep(): string[] {
    const idx = this.idx();
    const temps = sweepTemps(this.blobDir);
    const orphans = this.guard(() => idx.write(() => sweepOrphans(this.blobDir, (k) => idx.find(k) !== undefined)), 'sweep failed');
    return [...temps, ...orphans];
  }
}
