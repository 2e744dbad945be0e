/**
 * How a quantized tensor's shape maps to its blocks (docs/PROGRAM_FORMAT.md, "Quantized dtypes").
 *
 * A quantized tensor of shape `[..., N, K]` is row-major with its blocks along the last axis K: each
 * row of K values is K / cols consecutive blocks, and rows follow each other, so the bytes are exactly
 * those of a ggml tensor of `ne = [K, N, ...]` (a GGUF tensor's dims reversed). A q4nx_q41 block is a
 * 32 x 256 tile: a matrix `[N, K]` is (N/32) x (K/256) tiles stored row-major over the tile grid, as a
 * Q4NX file stores them; leading axes are whole matrices one after the other.
 */
import type { QuantDType, Shape } from './dtype.js';

/** One block: the rows and columns of values it holds and its byte size. */
export interface BlockLayout {
  /** Rows of the tensor one block spans (1 for ggml's types; 32 for a Q4NX tile). */
  readonly rows: number;
  /** Values along the last axis one block holds: the blocked axis's block size. */
  readonly cols: number;
  readonly bytes: number;
}

/** The block of every quantized dtype (ggml-common.h's block structs; docs/Q4NX.md's q4_1 chunk). */
export const QUANT_BLOCKS = {
  q4_0: { rows: 1, cols: 32, bytes: 18 },
  q4_1: { rows: 1, cols: 32, bytes: 20 },
  q8_0: { rows: 1, cols: 32, bytes: 34 },
  q4_k: { rows: 1, cols: 256, bytes: 144 },
  q6_k: { rows: 1, cols: 256, bytes: 210 },
  q4nx_q41: { rows: 32, cols: 256, bytes: 5120 },
} as const satisfies { readonly [Q in QuantDType]: BlockLayout };

/** Why `shape` cannot hold whole blocks of `dtype`: the axis at fault and the reason; undefined when it can. */
export function quantShapeProblem(dtype: QuantDType, shape: Shape): { readonly axis: number | null; readonly reason: string } | undefined {
  const b = QUANT_BLOCKS[dtype];
  const minRank = b.rows > 1 ? 2 : 1;
  if (shape.length < minRank) {
    return { axis: null, reason: `a ${dtype} tensor has rank ${minRank} or more (its blocks lie along the last axis${b.rows > 1 ? ' and span 32 rows' : ''}), not [${shape.join(', ')}]` };
  }
  const k = shape.length - 1;
  if (shape[k]! % b.cols !== 0) {
    return { axis: k, reason: `the last axis of a ${dtype} tensor is its blocked axis: ${shape[k]} is not a multiple of its block size ${b.cols}` };
  }
  if (b.rows > 1 && shape[k - 1]! % b.rows !== 0) {
    return { axis: k - 1, reason: `a ${dtype} tile spans ${b.rows} rows: ${shape[k - 1]} rows are not a multiple of ${b.rows} (pad them as the Q4NX file does)` };
  }
  return undefined;
}

/** The bytes of a quantized tensor of `shape` (which must hold whole blocks). */
export function quantBytes(dtype: QuantDType, shape: Shape): number {
  const b = QUANT_BLOCKS[dtype];
  let n = 1;
  for (const d of shape) n *= d;
  return (n / (b.rows * b.cols)) * b.bytes;
}
