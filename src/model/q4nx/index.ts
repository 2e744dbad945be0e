/** The Q4NX model format: container, tiles and chunks, codecs, repack and Q8 layout detection. */
export * from './container.js';
export * from './writer.js';
export * from './chunks.js';
export * from './decode.js';
export * from './encode.js';
export * from './repack.js';
export * from './detectQ8.js';
export * from './fileChunks.js';
export * from './names.js';
