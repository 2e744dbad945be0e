/**
 * Tensors on the wire: `{ dtype, shape, data: [...] }` or `{ dtype, shape, b64 }`.
 *
 * `data` elements are numbers or "nan" / "inf" / "-inf" / "-0". A float dtype (f32, f16, bf16) accepts
 * any number and rounds it once, to nearest even, to the dtype (so 0.1 is a fine f16 input); an `i32`
 * element must be an integer in range and a `bool` element 0, 1, true or false, because rounding those
 * would silently change what the caller meant. `b64` is the little-endian bytes, f16 and bf16 as their
 * 16-bit patterns and bool as one byte (0 or 1) each; its byte length must match the shape exactly.
 * Every refusal is InvalidInput with a JSON pointer relative to the `path` the caller names.
 */
import { InvalidInput, wireNumber, type WireNumber } from '../errors/index.js';
import { roundToDtype } from '../numerics/float16.js';
import { quantShapeProblem } from '../numerics/quant.js';
import { tensorFromBytes, tensorToBytes } from './bytes.js';
import { bindFileWeight, isFileForm, type BoundFiles, type FileWeight } from './fileWeight.js';
import { hasOwn, isRecord, kindOf, ptr } from './pointer.js';
import { ANY_DTYPE_LIST, decodeWireNumber, DTYPE_LIST, integerValueProblem, isAnyDType, isDType } from './scalars.js';
import { isQuantTensor, quantTensor, type HeldTensor, type QuantTensor, type Tensor } from './tensor.js';
import { dtypeBytes, isFloat, isQuantized, numel, storageBytes, type AnyDType, type DType, type QuantDType } from './types.js';

/** A tensor as JSON writes it, with its elements listed. */
export interface WireDataTensor { readonly dtype: DType; readonly shape: number[]; readonly data: WireNumber[] }
/** A tensor as JSON writes it, with its little-endian bytes (a quantized one's blocks) in base64. */
export interface WireB64Tensor { readonly dtype: AnyDType; readonly shape: number[]; readonly b64: string }
export type WireTensor = WireDataTensor | WireB64Tensor;

const B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeElement(dtype: DType, v: unknown, path: string): number {
  if (dtype === 'bool' && typeof v === 'boolean') return v ? 1 : 0;
  const x = decodeWireNumber(v);
  if (x === undefined) {
    throw new InvalidInput(path, `an element is a number or one of "nan", "inf", "-inf", "-0", not ${kindOf(v)}`);
  }
  if (isFloat(dtype)) return roundToDtype(dtype, x);
  const problem = integerValueProblem(dtype, x);
  if (problem !== undefined) throw new InvalidInput(path, problem);
  return x === 0 ? 0 : x; // an integer has no -0
}

function b64Bytes(b64: unknown, at: string): Uint8Array {
  if (typeof b64 !== 'string') throw new InvalidInput(at, `"b64" is a base64 string, not ${kindOf(b64)}`);
  // Buffer.from(…, 'base64') skips characters it does not know; a corrupt string must not pass silently.
  if (!B64.test(b64)) throw new InvalidInput(at, 'not valid base64 (standard alphabet, padded with "=")');
  // A copy of its own: a small Buffer is a view of a shared pool, which would travel whole to a worker.
  return new Uint8Array(Buffer.from(b64, 'base64'));
}

/** Decodes a quantized wire tensor `{ dtype, shape, b64 }`: its exact blocks (there is no `data` form). */
function decodeQuantTensor(json: Record<string, unknown>, dtype: QuantDType, path: string): QuantTensor {
  for (const k of Object.keys(json)) {
    if (k === 'data') throw new InvalidInput(ptr(path, k), `a ${dtype} tensor is written as its blocks in "b64", not as "data"`);
    if (k !== 'dtype' && k !== 'shape' && k !== 'b64') throw new InvalidInput(ptr(path, k), `a quantized tensor has no key "${k}" (it has "dtype", "shape" and "b64")`);
  }
  const rawShape = json['shape'];
  if (!Array.isArray(rawShape)) throw new InvalidInput(ptr(path, 'shape'), `a tensor's shape is an array of non-negative integers, not ${kindOf(rawShape)}`);
  const shape = rawShape.map((d, k) => {
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) throw new InvalidInput(ptr(path, 'shape', k), `a dimension is a non-negative integer, not ${kindOf(d)}`);
    return d;
  });
  const bad = quantShapeProblem(dtype, shape);
  if (bad !== undefined) throw new InvalidInput(bad.axis === null ? ptr(path, 'shape') : ptr(path, 'shape', bad.axis), bad.reason);
  if (!hasOwn(json, 'b64')) throw new InvalidInput(path, `a ${dtype} tensor has "b64": its blocks, byte for byte`);
  const bytes = b64Bytes(json['b64'], ptr(path, 'b64'));
  const want = storageBytes(dtype, shape);
  if (bytes.length !== want) throw new InvalidInput(ptr(path, 'b64'), `shape [${shape.join(', ')}] of ${dtype} is ${want} bytes of blocks, "b64" holds ${bytes.length}`);
  return quantTensor(dtype, shape, bytes);
}

/**
 * Decodes a weight at `path`: a wire tensor, a quantized one (`b64` blocks), or a byte range of a file
 * (`{ dtype, shape, file, offset, length }`, bound here: src/ir/fileWeight.ts; `files` shares each
 * file's identity among the weights of one inputs file).
 */
export function decodeWeight(json: unknown, path: string, files?: BoundFiles): HeldTensor | FileWeight {
  if (isRecord(json)) {
    if (isFileForm(json)) return bindFileWeight(json, path, files);
    const dtype = json['dtype'];
    if (isAnyDType(dtype) && isQuantized(dtype)) return decodeQuantTensor(json, dtype, path);
    if (!isAnyDType(dtype)) throw new InvalidInput(ptr(path, 'dtype'), `a weight's dtype is ${ANY_DTYPE_LIST}, not ${kindOf(dtype)}`);
  }
  return decodeTensor(json, path);
}

/** Decodes a wire tensor at JSON pointer `path`; throws InvalidInput naming the offending place. */
export function decodeTensor(json: unknown, path: string): Tensor {
  if (!isRecord(json)) throw new InvalidInput(path, `a tensor is an object { "dtype", "shape", "data" or "b64" }, not ${kindOf(json)}`);
  for (const k of Object.keys(json)) {
    if (k !== 'dtype' && k !== 'shape' && k !== 'data' && k !== 'b64') throw new InvalidInput(ptr(path, k), `a tensor has no key "${k}" (it has "dtype", "shape" and "data" or "b64")`);
  }
  const dtype = json['dtype'];
  if (!isDType(dtype)) {
    const why = isAnyDType(dtype) ? ` (${dtype} is a quantized dtype: only a weight is one)` : '';
    throw new InvalidInput(ptr(path, 'dtype'), `a tensor's dtype is ${DTYPE_LIST}, not ${kindOf(dtype)}${why}`);
  }
  const rawShape = json['shape'];
  if (!Array.isArray(rawShape)) throw new InvalidInput(ptr(path, 'shape'), `a tensor's shape is an array of non-negative integers, not ${kindOf(rawShape)}`);
  const shape = rawShape.map((d, k) => {
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) throw new InvalidInput(ptr(path, 'shape', k), `a dimension is a non-negative integer, not ${kindOf(d)}`);
    return d;
  });
  const n = numel(shape);
  const hasData = hasOwn(json, 'data');
  if (hasData === hasOwn(json, 'b64')) throw new InvalidInput(path, 'a tensor has exactly one of "data" and "b64"');
  if (hasData) {
    const data = json['data'];
    if (!Array.isArray(data)) throw new InvalidInput(ptr(path, 'data'), `"data" is a flat array of elements, not ${kindOf(data)}`);
    if (data.length !== n) throw new InvalidInput(ptr(path, 'data'), `shape [${shape.join(', ')}] needs ${n} elements, "data" has ${data.length}`);
    const out = new Float64Array(n);
    data.forEach((v, k) => { out[k] = decodeElement(dtype, v, ptr(path, 'data', k)); });
    return { dtype, shape, data: out };
  }
  const bytes = b64Bytes(json['b64'], ptr(path, 'b64'));
  const at = ptr(path, 'b64');
  const want = n * dtypeBytes(dtype);
  if (bytes.length !== want) throw new InvalidInput(at, `shape [${shape.join(', ')}] of ${dtype} needs ${want} bytes, "b64" holds ${bytes.length}`);
  if (dtype === 'bool') {
    // tensorFromBytes reads any non-zero byte as true; on the wire anything but 0 or 1 is corrupt.
    const k = bytes.findIndex((b) => b > 1);
    if (k >= 0) throw new InvalidInput(at, `bool element ${k} is the byte ${bytes[k]}; a bool byte is 0 or 1`);
  }
  return tensorFromBytes(dtype, shape, bytes);
}

/** Writes a quantized tensor as JSON: its blocks in `b64`, the only form it has. */
export function encodeQuantTensor(t: QuantTensor): WireB64Tensor {
  return { dtype: t.dtype, shape: [...t.shape], b64: Buffer.from(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength).toString('base64') };
}

/** Writes a held tensor as JSON: a quantized one as its `b64` blocks, any other as encodeTensor does. */
export function encodeHeld(t: HeldTensor, mode: 'data' | 'b64'): WireTensor {
  return isQuantTensor(t) ? encodeQuantTensor(t) : encodeTensor(t, mode);
}

/** Writes a tensor as JSON: `data` (exact f64 values, wire strings for NaN, ±inf, -0) or `b64` bytes. */
export function encodeTensor(t: Tensor, mode: 'data'): WireDataTensor;
export function encodeTensor(t: Tensor, mode: 'b64'): WireB64Tensor;
export function encodeTensor(t: Tensor, mode: 'data' | 'b64'): WireTensor;
export function encodeTensor(t: Tensor, mode: 'data' | 'b64'): WireTensor {
  const shape = [...t.shape];
  if (mode === 'b64') {
    // b64 carries only values of the dtype (f16ToBits needs an f16 value): an fp64-mode tensor is rounded once.
    const rounded = { dtype: t.dtype, shape, data: t.data.map((v) => roundToDtype(t.dtype, v)) };
    return { dtype: t.dtype, shape, b64: Buffer.from(tensorToBytes(rounded)).toString('base64') };
  }
  return { dtype: t.dtype, shape, data: Array.from(t.data, wireNumber) };
}
