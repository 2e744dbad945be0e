/**
 * ggml's tensor types as GGUF numbers them: block size (elements) and block bytes for every type a
 * GGUF may hold, so the reader can bound any tensor's size, even one it cannot dequantize. The sizes
 * follow the block structs of ggml-common.h; ids 4, 5, 31-33 and 36-38 were removed from ggml and are
 * refused like any unknown id.
 */

/** One ggml type: its GGUF id, name, elements per block and bytes per block. */
export interface GgmlTypeInfo {
  readonly id: number;
  readonly name: string;
  readonly blockSize: number;
  readonly typeSize: number;
}

/** The types this package dequantizes and quantizes. */
export type QuantType = 'F32' | 'F16' | 'BF16' | 'Q4_0' | 'Q4_1' | 'Q8_0' | 'Q4_K' | 'Q5_K' | 'Q6_K';

/** The QuantType names in a stable order (tests and the tiny model iterate them). */
export const QUANT_TYPES: readonly QuantType[] = ['F32', 'F16', 'BF16', 'Q4_0', 'Q4_1', 'Q8_0', 'Q4_K', 'Q5_K', 'Q6_K'];

/** The super-block size of the K-quants. */
export const QK_K = 256;

const TABLE: readonly GgmlTypeInfo[] = [
  { id: 0, name: 'F32', blockSize: 1, typeSize: 4 },
  { id: 1, name: 'F16', blockSize: 1, typeSize: 2 },
  { id: 2, name: 'Q4_0', blockSize: 32, typeSize: 18 },
  { id: 3, name: 'Q4_1', blockSize: 32, typeSize: 20 },
  { id: 6, name: 'Q5_0', blockSize: 32, typeSize: 22 },
  { id: 7, name: 'Q5_1', blockSize: 32, typeSize: 24 },
  { id: 8, name: 'Q8_0', blockSize: 32, typeSize: 34 },
  { id: 9, name: 'Q8_1', blockSize: 32, typeSize: 36 },
  { id: 10, name: 'Q2_K', blockSize: QK_K, typeSize: 84 },
  { id: 11, name: 'Q3_K', blockSize: QK_K, typeSize: 110 },
  { id: 12, name: 'Q4_K', blockSize: QK_K, typeSize: 144 },
  { id: 13, name: 'Q5_K', blockSize: QK_K, typeSize: 176 },
  { id: 14, name: 'Q6_K', blockSize: QK_K, typeSize: 210 },
  { id: 15, name: 'Q8_K', blockSize: QK_K, typeSize: 292 },
  { id: 16, name: 'IQ2_XXS', blockSize: QK_K, typeSize: 66 },
  { id: 17, name: 'IQ2_XS', blockSize: QK_K, typeSize: 74 },
  { id: 18, name: 'IQ3_XXS', blockSize: QK_K, typeSize: 98 },
  { id: 19, name: 'IQ1_S', blockSize: QK_K, typeSize: 50 },
  { id: 20, name: 'IQ4_NL', blockSize: 32, typeSize: 18 },
  { id: 21, name: 'IQ3_S', blockSize: QK_K, typeSize: 110 },
  { id: 22, name: 'IQ2_S', blockSize: QK_K, typeSize: 82 },
  { id: 23, name: 'IQ4_XS', blockSize: QK_K, typeSize: 136 },
  { id: 24, name: 'I8', blockSize: 1, typeSize: 1 },
  { id: 25, name: 'I16', blockSize: 1, typeSize: 2 },
  { id: 26, name: 'I32', blockSize: 1, typeSize: 4 },
  { id: 27, name: 'I64', blockSize: 1, typeSize: 8 },
  { id: 28, name: 'F64', blockSize: 1, typeSize: 8 },
  { id: 29, name: 'IQ1_M', blockSize: QK_K, typeSize: 56 },
  { id: 30, name: 'BF16', blockSize: 1, typeSize: 2 },
  { id: 34, name: 'TQ1_0', blockSize: QK_K, typeSize: 54 },
  { id: 35, name: 'TQ2_0', blockSize: QK_K, typeSize: 66 },
  { id: 39, name: 'MXFP4', blockSize: 32, typeSize: 17 },
];

const BY_ID = new Map(TABLE.map((t) => [t.id, t]));

/** The ggml type with this GGUF id, or undefined for an unknown or removed id. */
export function ggmlType(id: number): GgmlTypeInfo | undefined {
  return BY_ID.get(id);
}

/** The GGUF id of a type this package quantizes. */
export const QUANT_TYPE_ID = {
  F32: 0, F16: 1, BF16: 30, Q4_0: 2, Q4_1: 3, Q8_0: 8, Q4_K: 12, Q5_K: 13, Q6_K: 14,
} as const satisfies Record<QuantType, number>;

/** The info of a type this package quantizes (always defined). */
export function quantTypeInfo(t: QuantType): GgmlTypeInfo {
  return BY_ID.get(QUANT_TYPE_ID[t])!;
}

/** The QuantType of a ggml id, or undefined when this package cannot dequantize it. */
export function asQuantType(id: number): QuantType | undefined {
  for (const t of QUANT_TYPES) if (QUANT_TYPE_ID[t] === id) return t;
  return undefined;
}
