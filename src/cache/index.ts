/** The blob cache: re-exports only. */
export { BlobCache } from './blobCache.js';
export { CACHE_SCHEMA_VERSION, identityKey, type BlobIdentity } from './identity.js';
export { canonicalJson } from './canonical.js';
export { defaultCacheDir } from './defaultDir.js';
export { CacheError,  } from '../errors/index.js';
