/**
 * The three ops that take a quantized weight (docs/PROGRAM_FORMAT.md, "Quantized dtypes"). A quantized
 * tensor `[..., N, K]` is N rows of K values with its blocks along K, byte for byte as a GGUF tensor of
 * ne = [K, N] stores them, so:
 *   - `matmul` takes it as its right operand transposed: `[..., M, K] x q[..., N, K] -> [..., M, N]`,
 *     in the left operand's float dtype (each output the dot product of a row of the left operand and
 *     a row of the weight, as ggml's mul_mat computes it);
 *   - `gather` takes rows of it along an unblocked axis (an embedding lookup) and returns f32;
 *   - `convert` turns it into a float dtype of the same shape.
 * The oracle dequantizes every element exactly (in f64), then computes the op as for floats: a dot
 * product accumulates in f64 in k order and rounds once; gathered and converted values round once.
 */
import { IndexOutOfRange } from '../errors/index.js';
import type { HeldTensor, QuantTensor, Tensor } from '../ir/tensor.js';
import { isQuantTensor } from '../ir/tensor.js';
import { isFloat, isQuantized, numel, type FloatDType } from '../ir/types.js';
import { dequantRow, dequantize } from '../numerics/dequant.js';
import type { AnyType, OpAttrs, QuantRule, ValueType } from './rule.js';
import { fail, finish, requireAxis, shapeStr } from './common.js';

export { QUANT_MATMUL_ID } from './matmulId.js';

function quant(t: HeldTensor | undefined): QuantTensor {
  if (t === undefined || !isQuantTensor(t)) throw new Error('a quantized kernel was given a tensor of elements where it takes a quantized one');
  return t;
}

function dense(t: HeldTensor | undefined): Tensor {
  if (t === undefined || isQuantTensor(t)) throw new Error('a quantized kernel was given a quantized tensor where it takes one of elements');
  return t;
}

function floatOperand(t: AnyType, at: string, what: string): asserts t is ValueType & { readonly dtype: FloatDType } {
  if (isQuantized(t.dtype) || !isFloat(t.dtype)) fail(at, `${what} is f32, f16 or bf16, not ${t.dtype}`);
}

/** `matmul` with a quantized right operand `[..., N, K]`: `[..., M, K] x q[..., N, K] -> [..., M, N]`. */
export const QUANT_MATMUL: QuantRule<OpAttrs['matmul']> = {
  operand: 1,
  place: 'its right operand',
  infer(ins) {
    const a = ins[0]!;
    const w = ins[1]!;
    floatOperand(a, '/in/0', 'the left operand of a matmul by a quantized weight');
    const r = a.shape.length;
    if (r < 2) fail('/in/0', `matmul takes operands of rank 2 or more, got ${shapeStr(a.shape)}`);
    if (w.shape.length !== r) fail('/in/1', `matmul: the quantized weight ${shapeStr(w.shape)} has rank ${w.shape.length}, the left operand ${shapeStr(a.shape)} rank ${r}`);
    for (let i = 0; i < r - 2; i++) {
      if (a.shape[i] !== w.shape[i]) fail('/in/1', `matmul: batch dims ${shapeStr(w.shape.slice(0, r - 2))} differ from ${shapeStr(a.shape.slice(0, r - 2))}`);
    }
    const k = a.shape[r - 1]!;
    if (w.shape[r - 1] !== k) {
      fail('/in/1', `matmul: a quantized right operand is [..., N, K] (N rows of K values, as its file stores them); its K = ${w.shape[r - 1]} of ${shapeStr(w.shape)} differs from K = ${k} of ${shapeStr(a.shape)}`);
    }
    return [{ dtype: a.dtype, shape: [...a.shape.slice(0, r - 1), w.shape[r - 2]!] }];
  },
  evaluate(ins, _attrs, ctx) {
    const a = dense(ins[0]);
    const w = quant(ins[1]);
    const r = a.shape.length;
    const m = a.shape[r - 2]!;
    const k = a.shape[r - 1]!;
    const n = w.shape[r - 2]!;
    const batch = numel(a.shape.slice(0, r - 2));
    const out = new Float64Array(batch * m * n);
    const row = new Float64Array(k);
    for (let p = 0; p < batch; p++) {
      for (let j = 0; j < n; j++) {
        // One weight row at a time: the oracle never holds a whole dequantized weight.
        if (k > 0) dequantRow(w, p * n + j, row);
        for (let i = 0; i < m; i++) {
          const ao = (p * m + i) * k;
          // Starting from -0 keeps a dot product of only negative zeros -0, as for a dense matmul.
          let acc = k === 0 ? 0 : -0;
          for (let q = 0; q < k; q++) acc += a.data[ao + q]! * row[q]!;
          out[(p * m + i) * n + j] = finish(a.dtype, acc, ctx);
        }
      }
    }
    return [{ dtype: a.dtype, shape: [...a.shape.slice(0, r - 1), n], data: out }];
  },
};

/** `gather` of rows of a quantized source along an unblocked axis; the rows come out as f32. */
export const QUANT_GATHER: QuantRule<OpAttrs['gather']> = {
  operand: 0,
  place: 'its source',
  infer(ins, { axis }) {
    const src = ins[0]!;
    const idx = ins[1]!;
    const r = src.shape.length;
    requireAxis('/axis', axis, r, 'axis');
    if (axis === r - 1) fail('/axis', `gather takes rows of a quantized ${src.dtype} source along an unblocked axis; axis ${axis} is its blocked (last) axis`);
    if (idx.dtype !== 'i32') fail('/in/1', `gather indices are i32, got ${idx.dtype}`);
    return [{ dtype: 'f32', shape: [...src.shape.slice(0, axis), ...idx.shape, ...src.shape.slice(axis + 1)] }];
  },
  evaluate(ins, { axis }, ctx) {
    const src = quant(ins[0]);
    const idx = dense(ins[1]);
    const extent = src.shape[axis]!;
    for (const i of idx.data) if (i < 0 || i >= extent) throw new IndexOutOfRange(ctx.eqn, i, extent);
    const k = src.shape[src.shape.length - 1]!;
    const outer = numel(src.shape.slice(0, axis));
    const inner = numel(src.shape.slice(axis + 1));
    const rowsPer = k === 0 ? 0 : inner / k;
    const count = idx.data.length;
    const out = new Float64Array(outer * count * inner);
    const row = new Float64Array(k);
    for (let o = 0; o < outer; o++) {
      for (let j = 0; j < count; j++) {
        const first = (o * extent + idx.data[j]!) * rowsPer;
        for (let q = 0; q < rowsPer; q++) {
          dequantRow(src, first + q, row);
          const at = (o * count + j) * inner + q * k;
          for (let c = 0; c < k; c++) out[at + c] = finish('f32', row[c]!, ctx);
        }
      }
    }
    return [{ dtype: 'f32', shape: [...src.shape.slice(0, axis), ...idx.shape, ...src.shape.slice(axis + 1)], data: out }];
  },
};

/** `convert` of a quantized weight to a float dtype: every element, rounded once. */
export const QUANT_CONVERT: QuantRule<OpAttrs['convert']> = {
  operand: 0,
  place: 'its operand',
  infer(ins, { dtype }) {
    if (!isFloat(dtype)) fail('/dtype', `convert of a quantized ${ins[0]!.dtype} weight is to f32, f16 or bf16, not ${dtype}`);
    return [{ dtype, shape: ins[0]!.shape }];
  },
  evaluate(ins, { dtype }, ctx) {
    const src = quant(ins[0]);
    const values = dequantize(src);
    for (let i = 0; i < values.length; i++) values[i] = finish(dtype, values[i]!, ctx);
    return [{ dtype, shape: [...src.shape], data: values }];
  },
};
