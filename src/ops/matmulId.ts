/**
 * `matmul_id`: a matmul by the experts an index chooses, as ggml's mul_mat_id (a mixture of experts'
 * feed-forward reads only the chosen experts' rows). Operands:
 *   - `x [T, B, K]` (f32, f16 or bf16): B is 1 (every slot of token t multiplies x[t, 0]) or S (slot s
 *     multiplies x[t, s]);
 *   - `w [E, N, K]`: E experts of N rows of K values, rows along K as a quantized weight stores them
 *     (ops/quantized.ts), in a quantized dtype or a float one of any width;
 *   - `ids [T, S]` (i32): the expert of each token's slot, each in `[0, E)`.
 * Result `[T, S, N]` in x's dtype: `out[t, s, n] = sum_k x[t, B == 1 ? 0 : s, k] * w[ids[t, s], n, k]`,
 * each a dot product accumulated in f64 in k order (a quantized weight dequantized exactly) and
 * rounded once. An id outside `[0, E)` is an IndexOutOfRange, never wrapped or clamped.
 */
import { IndexOutOfRange } from '../errors/index.js';
import type { HeldTensor, Tensor } from '../ir/tensor.js';
import { isQuantTensor } from '../ir/tensor.js';
import { isFloat, isQuantized } from '../ir/types.js';
import { dequantRow } from '../numerics/dequant.js';
import type { AnyType, EvalCtx, OpRule, QuantRule, ValueType } from './rule.js';
import { fail, finish, shapeStr } from './common.js';

/** The result type of `matmul_id(x, w, ids)`, or a RuleError naming the operand at fault. */
function inferMatmulId(ins: readonly AnyType[]): ValueType[] {
  const x = ins[0]!;
  const w = ins[1]!;
  const ids = ins[2]!;
  if (isQuantized(x.dtype) || !isFloat(x.dtype)) fail('/in/0', `matmul_id's activations are f32, f16 or bf16, not ${x.dtype}`);
  if (x.shape.length !== 3) fail('/in/0', `matmul_id's activations are [T, B, K], got ${shapeStr(x.shape)}`);
  if (!isQuantized(w.dtype) && !isFloat(w.dtype)) fail('/in/1', `matmul_id's experts are a quantized or float weight, not ${w.dtype}`);
  if (w.shape.length !== 3) fail('/in/1', `matmul_id's experts are [E, N, K], got ${shapeStr(w.shape)}`);
  if (ids.dtype !== 'i32') fail('/in/2', `matmul_id's expert ids are i32, got ${ids.dtype}`);
  if (ids.shape.length !== 2) fail('/in/2', `matmul_id's expert ids are [T, S], got ${shapeStr(ids.shape)}`);
  const [t, b, k] = x.shape as [number, number, number];
  const s = ids.shape[1]!;
  if (ids.shape[0] !== t) fail('/in/2', `matmul_id: ids ${shapeStr(ids.shape)} are for ${ids.shape[0]} tokens, the activations ${shapeStr(x.shape)} for ${t}`);
  if (b !== 1 && b !== s) fail('/in/0', `matmul_id: the activations' second dim is 1 or the ids' slots ${s}, got ${shapeStr(x.shape)}`);
  if (w.shape[2] !== k) fail('/in/1', `matmul_id: the experts ${shapeStr(w.shape)} have rows of K = ${w.shape[2]}, the activations ${shapeStr(x.shape)} K = ${k}`);
  return [{ dtype: x.dtype, shape: [t, s, w.shape[1]!] }];
}

/** The oracle kernel over any weight: `row(e, n, into)` writes expert e's row n as exact f64 values. */
function evaluateMatmulId(ins: readonly HeldTensor[], ctx: EvalCtx, row: (w: HeldTensor, flatRow: number, into: Float64Array) => void): Tensor[] {
  const x = ins[0] as Tensor;
  const w = ins[1]!;
  const ids = ins[2] as Tensor;
  const [t, b, k] = x.shape as [number, number, number];
  const [e, n] = w.shape as [number, number, number];
  const s = ids.shape[1]!;
  for (const i of ids.data) if (i < 0 || i >= e) throw new IndexOutOfRange(ctx.eqn, i, e);
  const out = new Float64Array(t * s * n);
  const r = new Float64Array(k);
  for (let ti = 0; ti < t; ti++) {
    for (let si = 0; si < s; si++) {
      const ex = ids.data[ti * s + si]!;
      const xo = (ti * b + (b === 1 ? 0 : si)) * k;
      for (let j = 0; j < n; j++) {
        // Only the chosen expert's rows are read, one at a time.
        if (k > 0) row(w, ex * n + j, r);
        // Starting from -0 keeps a dot product of only negative zeros -0, as matmul's.
        let acc = k === 0 ? 0 : -0;
        for (let q = 0; q < k; q++) acc += x.data[xo + q]! * r[q]!;
        out[(ti * s + si) * n + j] = finish(x.dtype, acc, ctx);
      }
    }
  }
  return [{ dtype: x.dtype, shape: [t, s, n], data: out }];
}

function denseRow(w: HeldTensor, flatRow: number, into: Float64Array): void {
  if (isQuantTensor(w)) throw new Error('matmul_id: a quantized weight reached the dense kernel');
  into.set(w.data.subarray(flatRow * into.length, (flatRow + 1) * into.length));
}

function quantRow(w: HeldTensor, flatRow: number, into: Float64Array): void {
  if (!isQuantTensor(w)) throw new Error('matmul_id: a dense weight reached the quantized kernel');
  dequantRow(w, flatRow, into);
}

/** The row of `matmul_id` with a float weight. */
export const matmulIdRule: OpRule<{}> = {
  category: 'matmul',
  arity: [3, 3],
  attrs: {},
  rowStep: false,
  literalDtype: () => undefined,
  infer: (ins) => inferMatmulId(ins),
  evaluate: (ins, _attrs, ctx) => evaluateMatmulId(ins, ctx, denseRow),
};

/** `matmul_id` with a quantized weight (its operand 1). */
export const QUANT_MATMUL_ID: QuantRule<{}> = {
  operand: 1,
  place: 'its experts (operand 1)',
  infer: (ins) => inferMatmulId(ins),
  evaluate: (ins, _attrs, ctx) => evaluateMatmulId(ins, ctx, quantRow),
};
