/** Building tensors (the type itself is src/numerics/dtype.ts's, re-exported here). */
import type { DType, Shape, Tensor } from '../numerics/dtype.js';
import { numel } from './types.js';

export type { Tensor } from '../numerics/dtype.js';

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
