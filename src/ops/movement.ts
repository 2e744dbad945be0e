/**
 * Data movement: reshape, transpose, broadcast, slice and concat. They take every dtype and copy
 * values unchanged (no rounding: the values already belong to their dtype, or are fp64 references).
 */
import type { Tensor } from '../ir/tensor.js';
import type { Shape } from '../ir/types.js';
import { exactNumel, numel } from '../ir/types.js';
import type { OpAttrs, OpRule } from './rule.js';
import { fail, forEachIndex, requireAxis, requireShape, shapeStr, stridesOf } from './common.js';

const none = () => undefined;

/** Copies `src` into a new tensor of `shape`, reading element `from(outIndex)` for every output index. */
function gatherInto(src: Tensor, shape: Shape, from: (idx: readonly number[]) => number): Tensor {
  const out = new Float64Array(numel(shape));
  forEachIndex(shape, (idx, flat) => { out[flat] = src.data[from(idx)]!; });
  return { dtype: src.dtype, shape: [...shape], data: out };
}

/** `reshape`: the same elements in row-major order under a new shape of equal element count. */
export const reshapeRule: OpRule<OpAttrs['reshape']> = {
  category: 'movement', arity: [1, 1], attrs: { shape: { kind: 'ints' } }, rowStep: false, literalDtype: none,
  infer(ins, { shape }) {
    const a = ins[0]!;
    requireShape('/shape', shape);
    // Counted exactly: [2^53 - 1, 3] and [6755399441055743, 4] hold the same number of elements as doubles.
    const want = exactNumel(shape);
    const have = exactNumel(a.shape);
    if (want !== have) fail('/shape', `shape ${shapeStr(shape)} holds ${want} elements, the operand ${shapeStr(a.shape)} holds ${have}`);
    return [{ dtype: a.dtype, shape: [...shape] }];
  },
  evaluate(ins, { shape }) {
    const a = ins[0]!;
    return [{ dtype: a.dtype, shape: [...shape], data: a.data.slice() }];
  },
};

/** `transpose`: output dim i is operand dim `perm[i]`. */
export const transposeRule: OpRule<OpAttrs['transpose']> = {
  category: 'movement', arity: [1, 1], attrs: { perm: { kind: 'ints' } }, rowStep: false, literalDtype: none,
  infer(ins, { perm }) {
    const a = ins[0]!;
    const r = a.shape.length;
    if (perm.length !== r) fail('/perm', `perm has ${perm.length} entries for a rank-${r} operand`);
    perm.forEach((p, i) => {
      requireAxis(`/perm/${i}`, p, r, 'perm entry');
      if (perm.indexOf(p) !== i) fail(`/perm/${i}`, `perm is not a permutation: ${p} appears twice`);
    });
    return [{ dtype: a.dtype, shape: perm.map((p) => a.shape[p]!) }];
  },
  evaluate(ins, { perm }) {
    const a = ins[0]!;
    const st = stridesOf(a.shape);
    const shape = perm.map((p) => a.shape[p]!);
    return [gatherInto(a, shape, (idx) => {
      let o = 0;
      for (let i = 0; i < idx.length; i++) o += idx[i]! * st[perm[i]!]!;
      return o;
    })];
  },
};

/**
 * `broadcast`: operand dim i goes to output dim `dims[i]`. `dims` is strictly increasing (no implicit
 * transpose), and each operand extent equals its output extent or is 1 (then it repeats).
 */
export const broadcastRule: OpRule<OpAttrs['broadcast']> = {
  category: 'movement', arity: [1, 1], attrs: { shape: { kind: 'ints' }, dims: { kind: 'ints' } },
  rowStep: false, literalDtype: none,
  infer(ins, { shape, dims }) {
    const a = ins[0]!;
    requireShape('/shape', shape);
    if (dims.length !== a.shape.length) fail('/dims', `dims has ${dims.length} entries for a rank-${a.shape.length} operand`);
    dims.forEach((d, i) => {
      requireAxis(`/dims/${i}`, d, shape.length, 'output dim');
      if (i > 0 && d <= dims[i - 1]!) fail(`/dims/${i}`, `dims must be strictly increasing; ${d} follows ${dims[i - 1]}`);
      const e = a.shape[i]!;
      if (e !== 1 && e !== shape[d]) {
        fail(`/dims/${i}`, `operand dim ${i} of extent ${e} goes to output dim ${d} of extent ${shape[d]}; it must be ${shape[d]} or 1`);
      }
    });
    return [{ dtype: a.dtype, shape: [...shape] }];
  },
  evaluate(ins, { shape, dims }) {
    const a = ins[0]!;
    const st = stridesOf(a.shape);
    return [gatherInto(a, shape, (idx) => {
      let o = 0;
      for (let i = 0; i < dims.length; i++) if (a.shape[i] !== 1) o += idx[dims[i]!]! * st[i]!;
      return o;
    })];
  },
};

function sliceShape(start: readonly number[], limit: readonly number[], stride: readonly number[]): number[] {
  return start.map((s, i) => Math.ceil((limit[i]! - s) / stride[i]!));
}

/** `slice`: elements `start[i] + k * stride[i]` below `limit[i]`; `0 <= start <= limit <= extent`, stride >= 1. */
export const sliceRule: OpRule<OpAttrs['slice']> = {
  category: 'movement', arity: [1, 1],
  attrs: { start: { kind: 'ints' }, limit: { kind: 'ints' }, stride: { kind: 'ints', optional: true } },
  rowStep: false, literalDtype: none,
  infer(ins, { start, limit, stride }) {
    const a = ins[0]!;
    const r = a.shape.length;
    const st = stride ?? start.map(() => 1);
    for (const [name, v] of [['start', start], ['limit', limit], ['stride', st]] as const) {
      if (v.length !== r) fail(`/${name}`, `${name} has ${v.length} entries for a rank-${r} operand`);
    }
    for (let i = 0; i < r; i++) {
      const e = a.shape[i]!;
      if (start[i]! < 0 || start[i]! > e) fail(`/start/${i}`, `start ${start[i]} is outside [0, ${e}] for dim ${i} of extent ${e}`);
      if (limit[i]! < start[i]! || limit[i]! > e) fail(`/limit/${i}`, `limit ${limit[i]} is outside [${start[i]}, ${e}] (start to extent) for dim ${i}`);
      if (st[i]! < 1) fail(`/stride/${i}`, `stride ${st[i]} is not positive`);
    }
    return [{ dtype: a.dtype, shape: sliceShape(start, limit, st) }];
  },
  evaluate(ins, { start, limit, stride }) {
    const a = ins[0]!;
    const st = stride ?? start.map(() => 1);
    const strides = stridesOf(a.shape);
    return [gatherInto(a, sliceShape(start, limit, st), (idx) => {
      let o = 0;
      for (let i = 0; i < idx.length; i++) o += (start[i]! + idx[i]! * st[i]!) * strides[i]!;
      return o;
    })];
  },
};

/** `concat`: one or more operands of one dtype and rank, equal in every dim but `axis`. */
export const concatRule: OpRule<OpAttrs['concat']> = {
  category: 'movement', arity: [1, Infinity], attrs: { axis: { kind: 'int' } }, rowStep: false, literalDtype: none,
  infer(ins, { axis }) {
    const a = ins[0]!;
    requireAxis('/axis', axis, a.shape.length, 'axis');
    let total = 0;
    ins.forEach((t, j) => {
      if (t.dtype !== a.dtype) fail(`/in/${j}`, `concat: dtype ${t.dtype} differs from the first operand's ${a.dtype}`);
      const same = t.shape.length === a.shape.length && t.shape.every((d, i) => i === axis || d === a.shape[i]);
      if (!same) fail(`/in/${j}`, `concat: shape ${shapeStr(t.shape)} differs from the first operand's ${shapeStr(a.shape)} outside axis ${axis}`);
      total += t.shape[axis]!;
    });
    return [{ dtype: a.dtype, shape: a.shape.map((d, i) => (i === axis ? total : d)) }];
  },
  evaluate(ins, { axis }) {
    const a = ins[0]!;
    const outer = numel(a.shape.slice(0, axis));
    const inner = numel(a.shape.slice(axis + 1));
    const total = ins.reduce((s, t) => s + t.shape[axis]!, 0);
    const out = new Float64Array(outer * total * inner);
    let off = 0;
    for (const t of ins) {
      const w = t.shape[axis]! * inner;
      for (let o = 0; o < outer; o++) out.set(t.data.subarray(o * w, (o + 1) * w), o * total * inner + off);
      off += w;
    }
    const shape = a.shape.map((d, i) => (i === axis ? total : d));
    return [{ dtype: a.dtype, shape, data: out }];
  },
};

