/**
 * Tensors as little-endian bytes: the layout of the wire's `b64` encoding and of device buffers
 * (f16 and bf16 as their 16-bit patterns, bool one byte each; a quantized tensor is its blocks).
 */
import type { AnyDType, DType, Shape } from './types.js';
import { dtypeBytes, isQuantized, numel } from './types.js';
import type { HeldTensor, Tensor } from './tensor.js';
import { isQuantTensor, quantTensor } from './tensor.js';
import { bf16FromBits, bf16ToBits, f16FromBits, f16ToBits } from '../numerics/float16.js';

// Typed arrays use the platform's byte order; the f32 fast paths below need it to be the wire's.
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The little-endian bytes of a tensor. */
export function tensorToBytes(t: Tensor): Uint8Array {
  const n = t.data.length;
  const out = new Uint8Array(n * dtypeBytes(t.dtype));
  const view = new DataView(out.buffer);
  const d = t.data;
  switch (t.dtype) {
    case 'f32': for (let i = 0; i < n; i++) view.setFloat32(i * 4, d[i]!, true); break;
    case 'i32': for (let i = 0; i < n; i++) view.setInt32(i * 4, d[i]!, true); break;
    case 'f16': for (let i = 0; i < n; i++) view.setUint16(i * 2, f16ToBits(d[i]!), true); break;
    case 'bf16': for (let i = 0; i < n; i++) view.setUint16(i * 2, bf16ToBits(d[i]!), true); break;
    case 'bool': for (let i = 0; i < n; i++) out[i] = d[i] ? 1 : 0; break;
  }
  return out;
}

/** A tensor from its little-endian bytes; the byte length must be exactly the shape's. */
export function tensorFromBytes(dtype: DType, shape: Shape, bytes: Uint8Array): Tensor {
  const n = numel(shape);
  if (bytes.length !== n * dtypeBytes(dtype)) {
    throw new RangeError(`a ${dtype} tensor of shape [${shape.join(', ')}] needs ${n * dtypeBytes(dtype)} bytes, got ${bytes.length}`);
  }
  const d = new Float64Array(n);
  if (dtype === 'f32' && LITTLE_ENDIAN) {
    // A typed view converts in one native pass (a model's logits are 150k values a step); an
    // unaligned start is copied first. Every f32 is exact in f64, so the values are getFloat32's.
    const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
    d.set(new Float32Array(aligned.buffer, aligned.byteOffset, n));
    return { dtype, shape: [...shape], data: d };
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (dtype) {
    case 'f32': for (let i = 0; i < n; i++) d[i] = view.getFloat32(i * 4, true); break;
    case 'i32': for (let i = 0; i < n; i++) d[i] = view.getInt32(i * 4, true); break;
    case 'f16': for (let i = 0; i < n; i++) d[i] = f16FromBits(view.getUint16(i * 2, true)); break;
    case 'bf16': for (let i = 0; i < n; i++) d[i] = bf16FromBits(view.getUint16(i * 2, true)); break;
    case 'bool': for (let i = 0; i < n; i++) d[i] = bytes[i] ? 1 : 0; break;
  }
  return { dtype, shape: [...shape], data: d };
}

/** The bytes of a held tensor: a quantized one's own blocks (not copied), or tensorToBytes. */
export function heldToBytes(t: HeldTensor): Uint8Array {
  return isQuantTensor(t) ? t.bytes : tensorToBytes(t);
}

/** A held tensor from its bytes: a quantized dtype keeps them as its blocks (no copy), else tensorFromBytes. */
export function heldFromBytes(dtype: AnyDType, shape: Shape, bytes: Uint8Array): HeldTensor {
  return isQuantized(dtype) ? quantTensor(dtype, shape, bytes) : tensorFromBytes(dtype, shape, bytes);
}
