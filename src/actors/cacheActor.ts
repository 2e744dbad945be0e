/**
 * The blob cache actor: the one thread that owns the cache's SQLite connection, and the remote tier's
 * Redis connection when there is one. Blobs cross threads as transferred ArrayBuffers, never copied twice.
 *
 * With a remote tier, a local miss asks the tier by the same key; a sound remote entry is written to the
 * local cache and served, and every artifact the engine puts (a fresh compile) is published to the tier
 * before the put answers, so a farm job is done only once its blob is shared.
 */
import { BlobCache } from '../cache/blobCache.js';
import type { BlobIdentity } from '../cache/identity.js';
import { identityKey, resolveIdentity } from '../cache/identity.js';
import { RemoteTier, type RemoteStats } from '../cache/remoteTier.js';
import type { IndexRepair } from '../cache/repair.js';
import type { CacheStats, Entry } from '../cache/types.js';
import { CacheUnavailable } from '../errors/index.js';
import { transfer } from './transfer.js';

/** The remote tier of a cache actor: its URL, and where its warnings go. */
export interface RemoteConfig {
  readonly url: string;
  readonly onWarning?: (message: string) => void;
}

/** What the cache actor counted since it started. */
export interface CacheTierStats {
  /** Artifacts served from the local cache. */
  readonly localHits: number;
  /** Artifacts fetched from the remote tier (and written to the local cache). */
  readonly remoteHits: number;
  /** Artifacts neither tier had. */
  readonly misses: number;
  /** Artifacts the engine put after compiling them. */
  readonly stored: number;
  /** Entries in the local cache now, and their bytes on disk. */
  readonly entries: number;
  readonly bytes: number;
  readonly local: CacheStats;
  /** The remote tier's own counters, or null without one. */
  readonly remote: RemoteStats | null;
}

function transferred(b: Uint8Array): Uint8Array {
  const out = new Uint8Array(b.byteLength);
  out.set(b);
  return transfer(out, [out.buffer]);
}

/** The cache API served to the engine, over a cache opened in `dir`, with `remote` as a second tier. */
export function cacheApi(dir: string, remote?: RemoteConfig) {
  // A damaged index is moved aside and replaced here; the worker entry rebuilds its rows from the blob
  // files once the actor is ready, so a large cache does not look like a hung start.
  const cache = BlobCache.open(dir, { reindexNow: false });
  const tier = remote === undefined ? null : new RemoteTier(remote.url, remote.onWarning ? { onWarning: remote.onWarning } : {});
  const counts = { localHits: 0, remoteHits: 0, misses: 0, stored: 0 };
  return {
    async get(id: BlobIdentity): Promise<Uint8Array | null> {
      const b = cache.get(id);
      if (b !== null) { counts.localHits++; return transferred(b); }
      const fetched = tier === null ? null : await tier.fetch(resolveIdentity(id));
      if (fetched === null) { counts.misses++; return null; }
      cache.put(id, fetched);
      counts.remoteHits++;
      return transferred(fetched);
    },
    async put(id: BlobIdentity, bytes: Uint8Array): Promise<string> {
      cache.put(id, bytes);
      counts.stored++;
      if (tier !== null) await tier.publish(resolveIdentity(id), bytes);
      return identityKey(id);
    },
    invalidate(id: BlobIdentity): boolean { return cache.invalidate(id); },
    async close(): Promise<void> { cache.close(); await tier?.close(); },
    reindex(): Entry[] { return cache.reindex(); },
    /** Where open moved a damaged index, and why; null when it opened sound. */
    repairedIndex(): IndexRepair | null { return cache.repairedIndex; },
    stats(): CacheTierStats {
      const all = cache.list();
      return { ...counts, entries: all.length, bytes: all.reduce((n, e) => n + e.size, 0), local: cache.stats, remote: tier?.stats ?? null };
    },
  };
}
export type CacheApi = ReturnType<typeof cacheApi>;

/** The cache API over `dir`, or the CacheUnavailable that says why the cache cannot open at all. */
export function openCacheApi(dir: string, remote?: RemoteConfig): CacheApi | CacheUnavailable {
  try {
    return cacheApi(dir, remote);
  } catch (e) {
    if (e instanceof CacheUnavailable) return e;
    throw e;
  }
}
