/**
 * The element types of the program format and a tensor of their values. They live here, below the IR,
 * because every numerical routine (rounding, ulps, error measures) speaks of them; src/ir re-exports them.
 */

export const DTYPES = ['f32', 'f16', 'bf16', 'i32', 'bool'] as const;
export type DType = (typeof DTYPES)[number];
export type FloatDType = 'f32' | 'f16' | 'bf16';
export type Shape = readonly number[];

export function isFloat(d: DType): d is FloatDType {
  return d === 'f32' || d === 'f16' || d === 'bf16';
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
