/**
 * The element types of the program format and a tensor of their values. They live here, below the IR,
 * because every numerical routine (rounding, ulps, error measures) speaks of them; src/ir re-exports them.
 *
 * Beside the element dtypes are the quantized weight dtypes (docs/PROGRAM_FORMAT.md, "Quantized
 * dtypes"): ggml's block types and Q4NX's q4_1 tile, held as their exact bytes. They are a separate list
 * on purpose: a value of a quantized dtype has no element of its own to round, compare or store in a
 * Float64Array, so every table over DType (tolerances, ulps, rounding) stays about element dtypes, and a
 * quantized weight is a QuantTensor, which has no `data` to read as floats by mistake.
 */

export const DTYPES = ['f32', 'f16', 'bf16', 'i32', 'bool'] as const;
export type DType = (typeof DTYPES)[number];
export type FloatDType = 'f32' | 'f16' | 'bf16';
export type Shape = readonly number[];

/** The quantized weight dtypes: ggml's block types and Q4NX's 5120-byte q4_1 tile. */
export const QUANT_DTYPES = ['q4_0', 'q4_1', 'q8_0', 'q4_k', 'q6_k', 'q4nx_q41'] as const;
export type QuantDType = (typeof QUANT_DTYPES)[number];
/** Any dtype an arg may declare: an element dtype, or a quantized one for a weight. */
export type AnyDType = DType | QuantDType;

export function isFloat(d: AnyDType): d is FloatDType {
  return d === 'f32' || d === 'f16' || d === 'bf16';
}

/** True for a quantized weight dtype. */
export function isQuantized(d: AnyDType): d is QuantDType {
  return (QUANT_DTYPES as readonly string[]).includes(d);
}

/**
 * A tensor as the engine holds it: a dtype, a shape and its elements as f64 values. Every element is a
 * value of its dtype (an f16 element is one of the 65,536 f16 values, an i32 element an integer in
 * range, a bool 0 or 1), except in the oracle's fp64 mode, where float elements are unrounded f64.
 */
export interface Tensor {
  readonly dtype: DType;
  readonly shape: Shape;
  readonly data: Float64Array;
}

/**
 * A quantized weight as the engine holds it: its blocks, byte for byte as the file they came from
 * stores them (src/numerics/quant.ts says how a shape maps to blocks). It has no `data`: reading it as
 * numbers is a dequantization, done only by the three ops that take one.
 */
export interface QuantTensor {
  readonly dtype: QuantDType;
  readonly shape: Shape;
  readonly bytes: Uint8Array;
}

/** What a weight (or any value the oracle holds) is: a tensor of elements or a quantized one. */
export type HeldTensor = Tensor | QuantTensor;

/** True for a quantized tensor (its blocks), false for a tensor of elements. */
export function isQuantTensor(t: HeldTensor): t is QuantTensor {
  return isQuantized(t.dtype);
}
