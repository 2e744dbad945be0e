/** The blob cache: re-exports only. */
export { BlobCache, type CompileResult } from './blobCache.js';
export { CACHE_SCHEMA_VERSION, identityKey, type BlobIdentity } from './identity.js';
export { canonicalJson } from './canonical.js';
export { defaultCacheDir } from './defaultDir.js';
export type { BlobDefect, CacheStats, Entry, GcResult, VerifyResult } from './types.js';
export { CacheError } from '../errors/index.js';
