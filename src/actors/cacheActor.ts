/**
 * The blob cache actor: the one thread that owns the cache's SQLite connection. Blobs cross threads as
 * transferred ArrayBuffers, never copied twice.
 */
import { BlobCache } from '../cache/blobCache.js';
import type { BlobIdentity } from '../cache/identity.js';
import { identityKey } from '../cache/identity.js';
import type { Entry, GcResult, VerifyResult } from '../cache/types.js';
import { transfer } from './transfer.js';

/** The cache API served to the engine, over a cache opened in `dir`. */
export function cacheApi(dir: string) {
  const cache = BlobCache.open(dir);
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
  };
}
export type CacheApi = ReturnType<typeof cacheApi>;
