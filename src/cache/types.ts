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
export type { BlobDefect };

/** What verify found: entries that check out, and entries it refused and removed. */
export interface VerifyResult {
  readonly ok: Entry[];
  readonly bad: { readonly entry: Entry; readonly reason: BlobDefect }[];
  /** Files swept because no row named them, or abandoned temp files. */
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
  /** Entries the caller's accept() refused, and replaced. */
  readonly refused: number;
  readonly compiles: number;
  readonly puts: number;
}
