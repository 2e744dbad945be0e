/** GGUF: read, write, dequantize and quantize ggml tensors, and check declared scales. Re-exports only. */
export { readGguf, openGguf, typeName, DEFAULT_ALIGNMENT, type ReadGgufOptions } from './reader.js';
export { writeGguf, quantizedTensor, type GgufTensorInput, type WriteGgufInput } from './writer.js';
export { dequantize } from './dequant.js';
export { quantize } from './quantize.js';
export { scanDeclaredScales, unhonouredScales, CRITICAL_SCALE_KEYS, type ScaleFindings } from './scaleGuard.js';
export {
  ggmlType, quantTypeInfo, asQuantType, QUANT_TYPES, QUANT_TYPE_ID, QK_K, type GgmlTypeInfo, type QuantType,
} from './ggmlTypes.js';
export {
  gv, plainValue, numericValue, GGUF_VALUE_TYPES,
  type GgufArray, type GgufFile, type GgufMetadata, type GgufPlain, type GgufTensorInfo, type GgufValue, type GgufValueType,
} from './types.js';
