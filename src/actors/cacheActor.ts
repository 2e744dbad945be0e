/**
 * The blob cache actor: the one thread that owns the cache's SQLite connection. Blobs cross threads as
 * transferred ArrayBuffers, never copied twice.
 */
import { BlobCache } from '../cache/blobCache.js';
import type { BlobIdentity } from '../cache/identity.js';
import { identityKey } from '../cache/identity.js';
import type { IndexRepair } from '../cache/repair.js';
import type { Entry, GcResult, VerifyResult } from '../cache/types.js';
import { CacheUnavailable } from '../errors/index.js';
import { transfer } from './transfer.js';

/** The cache API served to the engine, over a cache opened in `dir`. */
export function cacheApi(dir: string) {
  // A damaged index is moved aside and replaced here; the worker entry rebuilds its rows from the blob
  // files once the actor is ready, so a large cache does not look like a hung start.
  const cache = BlobCache.open(dir, { reindexNow: false });
  return {
    key(id: BlobIdentity): string { return identityKey(id); },
    get(id: BlobIdentity): Uint8Array | null {
      const b = cache.get(id);
      if (b === null) return null;
      const out = new Uint8Array(b.byteLength);
      out.set(b);
      return transfer(out, [out.buffer]);
    },
    put(id: BlobIdentity, bytes: Uint8Array): string { cache.put(id, bytes); return identityKey(id); },
    invalidate(id: BlobIdentity): boolean { return cache.invalidate(id); },
    list(): Entry[] { return cache.list(); },
    verify(): VerifyResult { return cache.verify(); },
    gc(maxBytes: number): GcResult { return cache.gc({ maxBytes }); },
    close(): void { cache.close(); },
    reindex(): Entry[] { return cache.reindex(); },
    /** Where open moved a damaged index, and why; null when it opened sound. */
    repairedIndex(): IndexRepair | null { return cache.repairedIndex; },
  };
}
export type CacheApi = ReturnType<typeof cacheApi>;

/** The cache API over `dir`, or the CacheUnavailable that says why the cache cannot open at all. */
export function openCacheApi(dir: string): CacheApi | CacheUnavailable {
  try {
    return cacheApi(dir);
  } catch (e) {
    if (e instanceof CacheUnavailable) return e;
    throw e;
  }
}
