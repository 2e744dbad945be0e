/** Packing a GGUF into a Q4NX model directory, verifying it, and the repack cache. Re-exports only. */
export { packGguf, planPack, tokenizerFile, type PackOptions, type PackResult, type PackPlan, type PackProgress } from './pack.js';
export { verifyPack, DEFAULT_MIN_COSINE, type VerifyReport, type VerifyOptions, type TensorCheck } from './verify.js';
export { packCached, cachedDirProblems, cacheKey, q4nxCacheRoot, type CachedPackOptions, type CachedPackResult } from './cache.js';
export {
  checkStamp, parseStamp, formatStamp, currentStamp, sourceIdentity, STAMP_FILE,
  type Stamp, type StampVerdict, type StampExpectation, type SourceIdentity,
} from './stamp.js';
export { qwen3Config, qwen3Dims, architectureOf, PACK_ARCHITECTURES } from './config.js';
export { packConfig, packTensors } from './arch.js';
export { planQwen3, storedShape, STORED_DTYPE, EXACT_TYPES, type PlannedTensor, type Method, type StoreKind } from './plan.js';
export { converterIdentity, converterLabel, PACKER_VERSION, type ConverterIdentity } from './identity.js';
export { verifyLines } from './report.js';
export { writeGgufStream, type StreamGgufTensor } from './ggufStream.js';
