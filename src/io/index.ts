/** Low-level file helpers shared by every layer above src/errors: safe reads, output paths, escaping. */
export { escapeControl, escapeLines, quote } from './escape.js';
export {
  DEFAULT_MAX_FILE_BYTES, MAX_FILE_BYTES_ENV, fileKind, fsReason, isRegularFile, maxFileBytes, openRegularFile, readRegularFile,
  type FileFailure, type OpenFile, type ReadFileOptions, type RegularFileOptions,
} from './files.js';
export { IDENTITY_END_BYTES, fileIdentity, readFileRange, type FileIdentity, type RangeExpectation } from './fileRange.js';
export { ensureDir, writeError, writeOutputFile, type WriteOptions, type WriterFs } from './write.js';
