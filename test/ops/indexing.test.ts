import { expect } from 'chai';
import { IndexOutOfRange } from '../../src/errors/index.js';
import type { Tensor } from '../../src/ir/tensor.js';
import { refuses, run1, s, same, t, ty } from './helpers.js';

function outOfRange(f: () => unknown): IndexOutOfRange {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(IndexOutOfRange);
    return e as IndexOutOfRange;
  }
  expect.fail('expected IndexOutOfRange');
}

describe('ops/gather', () => {
  const src = t('f32', [3, 2], [1, 2, 3, 4, 5, 6]);

  it('takes along the axis with indices of any shape', () => {
    const r = run1('gather', [src, t('i32', [2], [2, 0])], { axis: 0 });
    expect(r.shape).to.deep.equal([2, 2]);
    same(r.data, [5, 6, 1, 2]);
    const c = run1('gather', [src, t('i32', [2, 2], [1, 1, 0, 1])], { axis: 1 });
    expect(c.shape).to.deep.equal([3, 2, 2]);
    same(c.data, [2, 2, 1, 2, 4, 4, 3, 4, 6, 6, 5, 6]);
    const one = run1('gather', [src, s('i32', 1)], { axis: 0 });
    expect(one.shape).to.deep.equal([2]);
    same(one.data, [3, 4]);
    same(run1('gather', [t('bool', [3], [0, 1, 0]), t('i32', [3], [1, 1, 0])], { axis: 0 }).data, [1, 1, 0]);
  });

  it('throws IndexOutOfRange for an index past the end or negative (no wrapping)', () => {
    const hi = outOfRange(() => run1('gather', [src, t('i32', [2], [0, 3])], { axis: 0 }, { eqn: 7 }));
    expect([hi.eqn, hi.index, hi.extent]).to.deep.equal([7, 3, 3]);
    expect(hi.toWire()).to.include({ code: 'IndexOutOfRange', eqn: 7, index: 3, extent: 3 });
    const lo = outOfRange(() => run1('gather', [src, t('i32', [1], [-1])], { axis: 1 }, { eqn: 2 }));
    expect([lo.eqn, lo.index, lo.extent]).to.deep.equal([2, -1, 2]);
  });

  it('refuses non-i32 indices and an axis outside the source', () => {
    refuses('gather', [ty('f32', [3, 2]), ty('f32', [2])], { axis: 0 }, '/in/1');
    refuses('gather', [ty('f32', [3, 2]), ty('i32', [2])], { axis: 2 }, '/axis');
  });
});

describe('ops/iota', () => {
  it('counts along the dimension', () => {
    const r = run1('iota', [], { shape: [2, 3], dimension: 1, dtype: 'i32' });
    same(r.data, [0, 1, 2, 0, 1, 2]);
    same(run1('iota', [], { shape: [2, 3], dimension: 0, dtype: 'f32' }).data, [0, 0, 0, 1, 1, 1]);
  });

  it('rounds to the dtype once (f16 cannot hold 2049), except in fp64 mode', () => {
    const r = run1('iota', [], { shape: [2052], dimension: 0, dtype: 'f16' });
    same(r.data.subarray(2047), [2047, 2048, 2048, 2050, 2052]);
    const x = run1('iota', [], { shape: [2052], dimension: 0, dtype: 'f16' }, { fp64: true });
    same(x.data.subarray(2047), [2047, 2048, 2049, 2050, 2051]);
  });

  it('refuses bool, an out-of-range dimension and operands', () => {
    refuses('iota', [], { shape: [2], dimension: 0, dtype: 'bool' }, '/dtype');
    refuses('iota', [], { shape: [2], dimension: 1, dtype: 'i32' }, '/dimension');
    refuses('iota', [], { shape: [], dimension: 0, dtype: 'i32' }, '/dimension');
    refuses('iota', [ty('i32', [2])], { shape: [2], dimension: 0, dtype: 'i32' }, '/in');
  });
});

describe('ops/dynamic_update_slice', () => {
  const dus = (op: Tensor, up: Tensor, starts: number[], eqn = 0) =>
    run1('dynamic_update_slice', [op, up, ...starts.map((v) => s('i32', v))], {}, { eqn });

  it('writes the update at the start indices and keeps the rest', () => {
    const z = t('f32', [4], [0, 0, 0, 0]);
    same(dus(z, t('f32', [2], [7, 8]), [1]).data, [0, 7, 8, 0]);
    same(dus(z, t('f32', [2], [7, -0]), [2]).data, [0, 0, 7, -0]);
    same(z.data, [0, 0, 0, 0]); // the operand is not written in place
    const m = t('i32', [3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    same(dus(m, t('i32', [1, 2], [0, 0]), [2, 1]).data, [1, 2, 3, 4, 5, 6, 7, 0, 0]);
    same(dus(t('bool', [2], [0, 0]), t('bool', [1], [1]), [1]).data, [0, 1]);
  });

  it('throws IndexOutOfRange when the window does not fit, instead of clamping', () => {
    const cache = t('f32', [4, 2], [0, 0, 0, 0, 0, 0, 0, 0]);
    const row = t('f32', [1, 2], [1, 2]);
    same(dus(cache, row, [3, 0]).data, [0, 0, 0, 0, 0, 0, 1, 2]);
    const e = outOfRange(() => dus(cache, row, [4, 0], 9));
    // The fields name the start and the number of valid starts along that dim (4 - 1 + 1).
    expect([e.eqn, e.index, e.extent]).to.deep.equal([9, 4, 4]);
    const neg = outOfRange(() => dus(cache, row, [0, -1], 3));
    expect([neg.eqn, neg.index, neg.extent]).to.deep.equal([3, -1, 1]);
    const wide = outOfRange(() => dus(t('f32', [4], [0, 0, 0, 0]), t('f32', [2], [7, 8]), [3]));
    expect([wide.index, wide.extent]).to.deep.equal([3, 3]);
  });

  it('refuses start indices that are not i32 scalars, a wrong count, and a larger update', () => {
    refuses('dynamic_update_slice', [ty('f32', [4]), ty('f32', [2]), ty('f32', [])], {}, '/in/2');
    refuses('dynamic_update_slice', [ty('f32', [4]), ty('f32', [2]), ty('i32', [1])], {}, '/in/2');
    refuses('dynamic_update_slice', [ty('f32', [4, 2]), ty('f32', [1, 2]), ty('i32', [])], {}, '/in');
    refuses('dynamic_update_slice', [ty('f32', [4]), ty('f32', [5]), ty('i32', [])], {}, '/in/1');
    refuses('dynamic_update_slice', [ty('f32', [4]), ty('f16', [1]), ty('i32', [])], {}, '/in/1');
    refuses('dynamic_update_slice', [ty('f32', [4]), ty('f32', [1, 1]), ty('i32', [])], {}, '/in/1');
  });
});

describe('ops/all_reduce', () => {
  it('is the identity on one device', () => {
    same(run1('all_reduce', [t('f32', [3], [1, -0, NaN])], { reduce: 'sum' }).data, [1, -0, NaN]);
  });

  it('refuses a reduction other than sum', () => {
    refuses('all_reduce', [ty('f32', [3])], { reduce: 'max' }, '/reduce');
  });
});
