/**
 * A tensor as the engine holds it: a dtype, a shape and its elements as f64 values. Every element is a
 * value of its dtype (an f16 element is one of the 65,536 f16 values, an i32 element an integer in
 * range, a bool 0 or 1), except in the oracle's fp64 mode, where float elements are unrounded f64.
 */
import type { DType, Shape } from './types.js';
import { numel } from './types.js';

export interface Tensor {
  readonly dtype: DType;
  readonly shape: Shape;
  readonly data: Float64Array;
}

/** Builds a tensor; `data` must already hold values of `dtype`. */
export function tensor(dtype: DType, shape: Shape, data: Float64Array | readonly number[]): Tensor {
  const d = data instanceof Float64Array ? data : Float64Array.from(data);
  if (d.length !== numel(shape)) throw new RangeError(`tensor of shape [${shape.join(', ')}] needs ${numel(shape)} elements, got ${d.length}`);
  return { dtype, shape: [...shape], data: d };
}

/** A tensor of zeros. */
export function zeros(dtype: DType, shape: Shape): Tensor {
  return { dtype, shape: [...shape], data: new Float64Array(numel(shape)) };
}
