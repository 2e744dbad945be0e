/**
 * Ops that compute or take indices: gather, iota, dynamic_update_slice, and all_reduce (the identity on
 * one device). An index outside its axis is an IndexOutOfRange, never wrapped or clamped.
 */
import { IndexOutOfRange } from '../errors/index.js';
import type { Tensor } from '../ir/tensor.js';
import type { DType } from '../ir/types.js';
import { numel } from '../ir/types.js';
import type { OpAttrs, OpRule, ValueType } from './rule.js';
import { NUMERIC, fail, finish, forEachIndex, requireAxis, requireDtype, requireShape, shapeStr, stridesOf } from './common.js';

/** `gather`: take along `axis` with i32 indices of any shape; every index must lie in `[0, extent)`. */
export const gatherRule: OpRule<OpAttrs['gather']> = {
  category: 'gather', arity: [2, 2], attrs: { axis: { kind: 'int' } }, rowStep: false,
  // A literal index is a scalar position, which can only be an i32.
  literalDtype: (index) => (index === 1 ? 'i32' : undefined),
  infer(ins, { axis }) {
    const src = ins[0]!;
    const idx = ins[1]!;
    requireAxis('/axis', axis, src.shape.length, 'axis');
    if (idx.dtype !== 'i32') fail('/in/1', `gather indices are i32, got ${idx.dtype}`);
    return [{ dtype: src.dtype, shape: [...src.shape.slice(0, axis), ...idx.shape, ...src.shape.slice(axis + 1)] }];
  },
  evaluate(ins, { axis }, ctx) {
    const src = ins[0]!;
    const idx = ins[1]!;
    const extent = src.shape[axis]!;
    for (const i of idx.data) if (i < 0 || i >= extent) throw new IndexOutOfRange(ctx.eqn, i, extent);
    const outer = numel(src.shape.slice(0, axis));
    const inner = numel(src.shape.slice(axis + 1));
    const k = idx.data.length;
    const out = new Float64Array(outer * k * inner);
    for (let o = 0; o < outer; o++) {
      for (let j = 0; j < k; j++) {
        const from = (o * extent + idx.data[j]!) * inner;
        out.set(src.data.subarray(from, from + inner), (o * k + j) * inner);
      }
    }
    const shape = [...src.shape.slice(0, axis), ...idx.shape, ...src.shape.slice(axis + 1)];
    return [{ dtype: src.dtype, shape, data: out }];
  },
};

/** `iota`: each element is its index along `dimension`, rounded to `dtype` (so f16 iota saturates to inf). */
export const iotaRule: OpRule<OpAttrs['iota']> = {
  category: 'iota', arity: [0, 0],
  attrs: { shape: { kind: 'ints' }, dimension: { kind: 'int' }, dtype: { kind: 'dtype' } },
  rowStep: false, literalDtype: () => undefined,
  infer(_ins, { shape, dimension, dtype }) {
    requireShape('/shape', shape);
    requireAxis('/dimension', dimension, shape.length, 'dimension');
    requireDtype('iota', '/dtype', dtype, NUMERIC);
    return [{ dtype, shape: [...shape] }];
  },
  evaluate(_ins, { shape, dimension, dtype }, ctx) {
    const out = new Float64Array(numel(shape));
    forEachIndex(shape, (idx, flat) => { out[flat] = finish(dtype, idx[dimension]!, ctx); });
    return [{ dtype, shape: [...shape], data: out }];
  },
};

function inferUpdate(ins: readonly ValueType[]): ValueType[] {
  const a = ins[0]!;
  const u = ins[1]!;
  const r = a.shape.length;
  if (u.dtype !== a.dtype) fail('/in/1', `dynamic_update_slice: update dtype ${u.dtype} differs from the operand's ${a.dtype}`);
  if (u.shape.length !== r) fail('/in/1', `dynamic_update_slice: update rank ${u.shape.length} differs from the operand's rank ${r}`);
  u.shape.forEach((d, i) => {
    if (d > a.shape[i]!) fail('/in/1', `dynamic_update_slice: update ${shapeStr(u.shape)} is larger than the operand ${shapeStr(a.shape)} in dim ${i}`);
  });
  if (ins.length !== 2 + r) fail('/in', `dynamic_update_slice on a rank-${r} operand takes ${r} start indices, got ${ins.length - 2}`);
  for (let j = 2; j < ins.length; j++) {
    const s = ins[j]!;
    if (s.dtype !== 'i32' || s.shape.length !== 0) fail(`/in/${j}`, `a start index is an i32 scalar, got ${s.dtype}${shapeStr(s.shape)}`);
  }
  return [{ dtype: a.dtype, shape: a.shape }];
}

/**
 * Writes the update at the start indices. A start whose window does not fit is refused, not clamped:
 * the error names the start and the number of valid starts along that dim (`extent - update + 1`).
 */
function evaluateUpdate(ins: readonly Tensor[], eqn: number): Tensor {
  const a = ins[0]!;
  const u = ins[1]!;
  const starts = ins.slice(2).map((t) => t.data[0]!);
  starts.forEach((s, i) => {
    const valid = a.shape[i]! - u.shape[i]! + 1;
    if (s < 0 || s >= valid) throw new IndexOutOfRange(eqn, s, valid);
  });
  const out = a.data.slice();
  const st = stridesOf(a.shape);
  forEachIndex(u.shape, (idx, flat) => {
    let o = 0;
    for (let i = 0; i < idx.length; i++) o += (starts[i]! + idx[i]!) * st[i]!;
    out[o] = u.data[flat]!;
  });
  return { dtype: a.dtype, shape: [...a.shape], data: out };
}

/** `dynamic_update_slice`: operand, update, then one i32 scalar start per dim. */
export const dynamicUpdateSliceRule: OpRule<OpAttrs['dynamic_update_slice']> = {
  category: 'update', arity: [2, Infinity], attrs: {}, rowStep: false,
  literalDtype(index, ins): DType | undefined {
    if (index >= 2) return 'i32';
    return ins[index === 0 ? 1 : 0]?.dtype;
  },
  infer: inferUpdate,
  evaluate: (ins, _attrs, ctx) => [evaluateUpdate(ins, ctx.eqn)],
};

/** `all_reduce`: a sum over the participants, which in the single-device oracle is the operand itself. */
export const allReduceRule: OpRule<OpAttrs['all_reduce']> = {
  category: 'collective', arity: [1, 1], attrs: { reduce: { kind: 'reduce' } }, rowStep: false,
  literalDtype: () => undefined,
  infer(ins, { reduce }) {
    const a = ins[0]!;
    if (reduce !== 'sum') fail('/reduce', `all_reduce reduces by "sum", got ${JSON.stringify(reduce)}`);
    requireDtype('all_reduce', '/in/0', a.dtype, NUMERIC);
    return [{ dtype: a.dtype, shape: a.shape }];
  },
  evaluate(ins) {
    const a = ins[0]!;
    return [{ dtype: a.dtype, shape: [...a.shape], data: a.data.slice() }];
  },
};
