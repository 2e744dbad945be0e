/** The public types of the blob cache. */
import type { BlobDefect } from './blobFile.js';

/** One cache entry as the index records it. */
export interface Entry {
  /** The identity key (sha256 hex). */
  readonly key: string;
  readonly device: string;
  readonly compiler: string;
  readonly compilerVersion: string;
  /** Bytes of the blob file on disk (header, identity and artifact), what gc caps. */
  readonly size: number;
  /** Milliseconds since the epoch. */
  readonly created: number;
  readonly lastUsed: number;
}

/** Why verify refused an entry. */

/** What verify found: entries that check out, and entries it refused and removed. */
export interface VerifyResult {
  readonly ok: Entry[];
  readonly bad: { readonly entry: Entry; readonly reason: BlobDefect }[];
  /** Blob files that had no row and check out in full: they have their row again. */
  readonly reindexed: Entry[];
  /** Files removed: blob files with no row that do not check out, and abandoned temp files. */
  readonly swept: string[];
}

/** What gc or clear removed. */
export interface GcResult {
  readonly removed: Entry[];
  readonly freedBytes: number;
}

/** Counters of one open cache, since it was opened. */
export interface CacheStats {
  readonly hits: number;
  readonly misses: number;
  /** Entries found damaged, truncated, missing or foreign on a get, and removed. */
  readonly damaged: number;
  readonly puts: number;
}

/** How BlobCache.open treats a damaged index. */
export interface OpenOptions {
  /** Move a damaged index aside and start a new one (default true); false: refuse with CacheUnavailable. */
  readonly repairIndex?: boolean;
  /**
   * After such a repair, re-index the blob files before open returns (default true); false leaves it
   * to the next verify(), gc(), clear() or reindex(), for a caller that must not wait.
   */
  readonly reindexNow?: boolean;
}
