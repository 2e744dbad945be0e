/**
 * `reduce_sum` and `reduce_max`: accumulate in f64 in row-major order and round once. A sum of only
 * negative zeros is -0 (as IEEE addition gives); an empty sum is +0 and an empty max is -inf (INT_MIN
 * for i32, the identity of its max). i32 sums wrap.
 */
import type { Tensor } from '../ir/tensor.js';
import { numel } from '../ir/types.js';
import type { EvalCtx, OpRule, ValueType } from './rule.js';
import { NUMERIC, fail, finish, forEachIndex, requireDtype, stridesOf } from './common.js';

type ReduceOp = 'reduce_sum' | 'reduce_max';
type Attrs = { readonly axes: readonly number[] };

function inferReduce(op: ReduceOp, ins: readonly ValueType[], axes: readonly number[]): ValueType[] {
  const a = ins[0]!;
  requireDtype(op, '/in/0', a.dtype, NUMERIC);
  const rank = a.shape.length;
  axes.forEach((ax, i) => {
    if (!Number.isInteger(ax) || ax < 0 || ax >= rank) fail(`/axes/${i}`, `axis ${ax} is outside [0, ${rank}) for a rank-${rank} operand`);
    if (i > 0 && ax <= axes[i - 1]!) fail(`/axes/${i}`, `axes must be sorted and distinct; ${ax} follows ${axes[i - 1]}`);
  });
  return [{ dtype: a.dtype, shape: a.shape.filter((_, i) => !axes.includes(i)) }];
}

function evaluateReduce(op: ReduceOp, a: Tensor, axes: readonly number[], ctx: EvalCtx): Tensor {
  const outShape = a.shape.filter((_, i) => !axes.includes(i));
  const n = numel(outShape);
  const reduced = numel(axes.map((ax) => a.shape[ax]!));
  const isInt = a.dtype === 'i32';
  const init = op === 'reduce_sum' ? (isInt ? 0 : -0) : (isInt ? -(2 ** 31) : -Infinity);
  const acc = new Float64Array(n).fill(init);
  // The output stride of every input dim: 0 for a reduced dim.
  const outStrides = stridesOf(outShape);
  const kept: number[] = [];
  a.shape.forEach((_, i) => { if (!axes.includes(i)) kept.push(i); });
  const map = new Array<number>(a.shape.length).fill(0);
  kept.forEach((dim, k) => { map[dim] = outStrides[k]!; });
  forEachIndex(a.shape, (idx, flat) => {
    let o = 0;
    for (let k = 0; k < idx.length; k++) o += idx[k]! * map[k]!;
    const x = a.data[flat]!;
    const s = acc[o]!;
    if (op === 'reduce_max') acc[o] = Math.max(s, x);
    else acc[o] = isInt ? (s + x) | 0 : s + x;
  });
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    // Starting from -0 keeps an all-negative-zero sum -0, but an empty sum is +0.
    const v = op === 'reduce_sum' && reduced === 0 ? 0 : acc[i]!;
    out[i] = finish(a.dtype, v, ctx);
  }
  return { dtype: a.dtype, shape: outShape, data: out };
}

/** The row of `reduce_sum` or `reduce_max`. */
export function reduceRule(op: ReduceOp): OpRule<Attrs> {
  return {
    category: 'reduce',
    arity: [1, 1],
    attrs: { axes: { kind: 'ints' } },
    rowStep: true,
    literalDtype: () => undefined,
    infer: (ins, attrs) => inferReduce(op, ins, attrs.axes),
    evaluate: (ins, attrs, ctx) => [evaluateReduce(op, ins[0]!, attrs.axes, ctx)],
  };
}
