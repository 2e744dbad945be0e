/**
 * `matmul`: `[..., M, K] x [..., K, N] -> [..., M, N]` with equal batch dims. Each output is a dot
 * product accumulated in f64 in k order and rounded once (products of two f32 values are exact in
 * f64); i32 products and sums wrap. K = 0 gives +0.
 */
import type { Tensor } from '../ir/tensor.js';
import { numel } from '../ir/types.js';
import type { EvalCtx, OpRule, ValueType } from './rule.js';
import { NUMERIC, fail, finish, requireDtype, shapeStr } from './common.js';

function inferMatmul(ins: readonly ValueType[]): ValueType[] {
  const a = ins[0]!;
  const b = ins[1]!;
  requireDtype('matmul', '/in/0', a.dtype, NUMERIC);
  if (b.dtype !== a.dtype) fail('/in/1', `matmul: dtype ${b.dtype} differs from the first operand's ${a.dtype}`);
  if (a.shape.length < 2) fail('/in/0', `matmul takes operands of rank 2 or more, got ${shapeStr(a.shape)}`);
  if (b.shape.length !== a.shape.length) {
    fail('/in/1', `matmul: rank ${b.shape.length} ${shapeStr(b.shape)} differs from the first operand's rank ${a.shape.length} ${shapeStr(a.shape)}`);
  }
  const r = a.shape.length;
  for (let i = 0; i < r - 2; i++) {
    if (a.shape[i] !== b.shape[i]) fail('/in/1', `matmul: batch dims ${shapeStr(b.shape.slice(0, r - 2))} differ from ${shapeStr(a.shape.slice(0, r - 2))}`);
  }
  const k = a.shape[r - 1]!;
  if (b.shape[r - 2] !== k) fail('/in/1', `matmul: contracting dim ${b.shape[r - 2]} of ${shapeStr(b.shape)} differs from K = ${k} of ${shapeStr(a.shape)}`);
  return [{ dtype: a.dtype, shape: [...a.shape.slice(0, r - 1), b.shape[r - 1]!] }];
}

function evaluateMatmul(a: Tensor, b: Tensor, ctx: EvalCtx): Tensor {
  const r = a.shape.length;
  const m = a.shape[r - 2]!;
  const k = a.shape[r - 1]!;
  const n = b.shape[r - 1]!;
  const batch = numel(a.shape.slice(0, r - 2));
  const out = new Float64Array(batch * m * n);
  const isInt = a.dtype === 'i32';
  for (let p = 0; p < batch; p++) {
    const ao = p * m * k;
    const bo = p * k * n;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        // Starting from -0 keeps a dot product of only negative zeros -0, as IEEE addition would.
        let acc = k === 0 ? 0 : isInt ? 0 : -0;
        for (let q = 0; q < k; q++) {
          const x = a.data[ao + i * k + q]!;
          const y = b.data[bo + q * n + j]!;
          acc = isInt ? (acc + Math.imul(x, y)) | 0 : acc + x * y;
        }
        out[(p * m + i) * n + j] = finish(a.dtype, acc, ctx);
      }
    }
  }
  return { dtype: a.dtype, shape: [...a.shape.slice(0, r - 1), n], data: out };
}

/** The row of `matmul`. */
export const matmulRule: OpRule<{}> = {
  category: 'matmul',
  arity: [2, 2],
  attrs: {},
  rowStep: false,
  literalDtype: () => undefined,
  infer: inferMatmul,
  evaluate: (ins, _attrs, ctx) => [evaluateMatmul(ins[0]!, ins[1]!, ctx)],
};
