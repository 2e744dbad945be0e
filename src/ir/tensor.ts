/** Building tensors (the type itself is src/numerics/dtype.ts's, re-exported here). */
import type { DType, QuantDType, QuantTensor, Shape, Tensor } from '../numerics/dtype.js';
import { quantBytes, quantShapeProblem } from '../numerics/quant.js';
import { numel } from './types.js';

export { isQuantTensor } from '../numerics/dtype.js';
export type { HeldTensor, QuantTensor, Tensor } from '../numerics/dtype.js';

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

/** A quantized tensor over its exact block bytes; the shape must hold whole blocks of exactly that many bytes. */
export function quantTensor(dtype: QuantDType, shape: Shape, bytes: Uint8Array): QuantTensor {
  const bad = quantShapeProblem(dtype, shape);
  if (bad !== undefined) throw new RangeError(bad.reason);
  const want = quantBytes(dtype, shape);
  if (bytes.length !== want) throw new RangeError(`a ${dtype} tensor of shape [${shape.join(', ')}] is ${want} bytes of blocks, got ${bytes.length}`);
  return { dtype, shape: [...shape], bytes };
}
