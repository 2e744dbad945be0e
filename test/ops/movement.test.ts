import { expect } from 'chai';
import { refuses, run1, same, t, ty } from './helpers.js';

describe('ops/reshape', () => {
  it('keeps row-major order under the new shape, for every dtype', () => {
    const r = run1('reshape', [t('f32', [2, 3], [1, 2, 3, 4, 5, -0])], { shape: [3, 2] });
    expect(r.shape).to.deep.equal([3, 2]);
    same(r.data, [1, 2, 3, 4, 5, -0]);
    same(run1('reshape', [t('bool', [4], [1, 0, 0, 1])], { shape: [2, 1, 2] }).data, [1, 0, 0, 1]);
    expect(run1('reshape', [t('i32', [1], [7])], { shape: [] }).shape).to.deep.equal([]);
  });

  it('refuses a different element count or a negative extent', () => {
    const e = refuses('reshape', [ty('f32', [2, 3])], { shape: [4, 2] }, '/shape');
    expect(e.reason).to.contain('8').and.contain('6');
    refuses('reshape', [ty('f32', [2, 3])], { shape: [-2, -3] }, '/shape/0');
  });
});

describe('ops/transpose', () => {
  it('moves operand dim perm[i] to output dim i', () => {
    // [[1, 2, 3], [4, 5, 6]] transposed is [[1, 4], [2, 5], [3, 6]].
    const r = run1('transpose', [t('f32', [2, 3], [1, 2, 3, 4, 5, 6])], { perm: [1, 0] });
    expect(r.shape).to.deep.equal([3, 2]);
    same(r.data, [1, 4, 2, 5, 3, 6]);
    // x[a][b][c] = 100a + 10b + c with shape [2, 3, 2]; perm [2, 0, 1] gives y[c][a][b] = x[a][b][c].
    const x: number[] = [];
    for (let a = 0; a < 2; a++) for (let b = 0; b < 3; b++) for (let c = 0; c < 2; c++) x.push(100 * a + 10 * b + c);
    const y = run1('transpose', [t('i32', [2, 3, 2], x)], { perm: [2, 0, 1] });
    expect(y.shape).to.deep.equal([2, 2, 3]);
    same(y.data, [0, 10, 20, 100, 110, 120, 1, 11, 21, 101, 111, 121]);
  });

  it('refuses a perm that is not a permutation of the dims', () => {
    refuses('transpose', [ty('f32', [2, 3])], { perm: [0, 0] }, '/perm/1');
    refuses('transpose', [ty('f32', [2, 3])], { perm: [0, 2] }, '/perm/1');
    refuses('transpose', [ty('f32', [2, 3])], { perm: [0] }, '/perm');
  });
});

describe('ops/broadcast', () => {
  it('places operand dims at dims[i] and repeats the rest and extent-1 dims', () => {
    same(run1('broadcast', [t('f32', [3], [1, 2, 3])], { shape: [2, 3], dims: [1] }).data, [1, 2, 3, 1, 2, 3]);
    same(run1('broadcast', [t('f32', [2], [1, 2])], { shape: [2, 3], dims: [0] }).data, [1, 1, 1, 2, 2, 2]);
    same(run1('broadcast', [t('f32', [2, 1], [1, 2])], { shape: [2, 3], dims: [0, 1] }).data, [1, 1, 1, 2, 2, 2]);
    same(run1('broadcast', [t('bool', [], [1])], { shape: [2, 2], dims: [] }).data, [1, 1, 1, 1]);
  });

  it('refuses dims out of order, out of range, or extents that are neither equal nor 1', () => {
    refuses('broadcast', [ty('f32', [2, 2])], { shape: [2, 2], dims: [1, 0] }, '/dims/1');
    refuses('broadcast', [ty('f32', [2])], { shape: [2, 2], dims: [2] }, '/dims/0');
    const e = refuses('broadcast', [ty('f32', [3])], { shape: [2, 4], dims: [1] }, '/dims/0');
    expect(e.reason).to.contain('4 or 1');
    refuses('broadcast', [ty('f32', [3])], { shape: [3], dims: [] }, '/dims');
    refuses('broadcast', [ty('f32', [3])], { shape: [3] }, '/dims');
  });
});

describe('ops/slice', () => {
  it('takes start to limit with an optional stride', () => {
    same(run1('slice', [t('f32', [5], [0, 1, 2, 3, 4])], { start: [1], limit: [5], stride: [2] }).data, [1, 3]);
    same(run1('slice', [t('f32', [5], [0, 1, 2, 3, 4])], { start: [0], limit: [5], stride: [3] }).data, [0, 3]);
    const r = run1('slice', [t('i32', [2, 3], [1, 2, 3, 4, 5, 6])], { start: [0, 1], limit: [2, 3] });
    expect(r.shape).to.deep.equal([2, 2]);
    same(r.data, [2, 3, 5, 6]);
    expect(run1('slice', [t('f32', [3], [1, 2, 3])], { start: [3], limit: [3] }).shape).to.deep.equal([0]);
  });

  it('refuses bounds outside the operand and non-positive strides', () => {
    refuses('slice', [ty('f32', [4])], { start: [0], limit: [5] }, '/limit/0');
    refuses('slice', [ty('f32', [4])], { start: [3], limit: [2] }, '/limit/0');
    refuses('slice', [ty('f32', [4])], { start: [-1], limit: [2] }, '/start/0');
    refuses('slice', [ty('f32', [4])], { start: [0], limit: [4], stride: [0] }, '/stride/0');
    refuses('slice', [ty('f32', [4, 4])], { start: [0], limit: [4] }, '/start');
  });
});

describe('ops/concat', () => {
  it('joins along the axis', () => {
    const r = run1('concat', [t('f32', [2, 1], [1, 2]), t('f32', [2, 2], [3, 4, 5, 6])], { axis: 1 });
    expect(r.shape).to.deep.equal([2, 3]);
    same(r.data, [1, 3, 4, 2, 5, 6]);
    same(run1('concat', [t('i32', [1, 2], [1, 2]), t('i32', [2, 2], [3, 4, 5, 6])], { axis: 0 }).data, [1, 2, 3, 4, 5, 6]);
    same(run1('concat', [t('bool', [2], [1, 0])], { axis: 0 }).data, [1, 0]);
    same(run1('concat', [t('f16', [1], [1]), t('f16', [0], []), t('f16', [2], [-0, 3])], { axis: 0 }).data, [1, -0, 3]);
  });

  it('refuses mixed dtypes, shapes that differ off the axis, and a bad axis', () => {
    refuses('concat', [ty('f32', [2]), ty('f16', [2])], { axis: 0 }, '/in/1');
    refuses('concat', [ty('f32', [2, 2]), ty('f32', [2, 3]), ty('f32', [3, 2])], { axis: 1 }, '/in/2');
    refuses('concat', [ty('f32', [2, 2]), ty('f32', [2])], { axis: 0 }, '/in/1');
    refuses('concat', [ty('f32', [2])], { axis: 1 }, '/axis');
    refuses('concat', [], { axis: 0 }, '/in');
  });
});
