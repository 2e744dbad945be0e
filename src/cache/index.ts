/** The blob cache: re-exports only. */
export { BlobCache } from './blobCache.js';
export type { IndexRepair } from './repair.js';
export { CACHE_SCHEMA_VERSION, identityKey, type BlobIdentity } from './identity.js';
export { canonicalJson } from './canonical.js';
export { defaultCacheDir } from './defaultDir.js';
export type { BlobDefect, CacheStats, Entry, GcResult, OpenOptions, VerifyResult } from './types.js';
export { CacheError, CacheUnavailable } from '../errors/index.js';
