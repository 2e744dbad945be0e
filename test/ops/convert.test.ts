import { expect } from 'chai';
import type { DType } from '../../src/ir/types.js';
import { INT_MAX, INT_MIN, refuses, run1, same, t, ty } from './helpers.js';

function conv(from: DType, to: DType, data: readonly number[], fp64 = false): Float64Array {
  const r = run1('convert', [t(from, [data.length], data)], { dtype: to }, { fp64 });
  expect(r.dtype).to.equal(to);
  return r.data;
}

describe('ops/convert', () => {
  it('float to i32 truncates toward zero, saturates, and sends NaN to 0', () => {
    same(conv('f32', 'i32', [2.7, -2.7, -0.5, -0, 3e9, -3e9, Infinity, -Infinity, NaN, 2147483520]),
      [2, -2, 0, 0, INT_MAX, INT_MIN, INT_MAX, INT_MIN, 0, 2147483520]);
    same(conv('f16', 'i32', [65504, -65504, 1.5]), [65504, -65504, 1]);
    same(conv('bf16', 'i32', [2 ** 40]), [INT_MAX]);
  });

  it('i32 to floats rounds once to nearest even, overflowing f16 to inf', () => {
    // f16 spacing at 2048 is 2: 2049 ties to 2048 (even), 2051 ties to 2052.
    same(conv('i32', 'f16', [2049, 2051, 65519, 65520, 70000, -70000]), [2048, 2052, 65504, Infinity, Infinity, -Infinity]);
    same(conv('i32', 'f32', [16777217, 16777219, INT_MAX, INT_MIN]), [16777216, 16777220, 2 ** 31, -(2 ** 31)]);
    same(conv('i32', 'bf16', [257, 259]), [256, 260]);
  });

  it('float to float rounds once; wider to narrower keeps signed zeros, inf and NaN', () => {
    same(conv('f32', 'bf16', [1 + 2 ** -8, 1 + 3 * 2 ** -8, -0, Infinity, NaN]), [1, 1 + 2 ** -6, -0, Infinity, NaN]);
    same(conv('f32', 'f16', [65520, 65519.99609375, 2 ** -25, 2 ** -25 + 2 ** -40, -(2 ** -26)]), [Infinity, 65504, 0, 2 ** -24, -0]);
    same(conv('f16', 'f32', [2 ** -24, -65504]), [2 ** -24, -65504]);
    same(conv('bf16', 'f16', [2 ** -30]), [0]);
  });

  it('bool converts to 0 or 1, and x != 0 converts to bool (NaN is true)', () => {
    same(conv('bool', 'f32', [0, 1]), [0, 1]);
    same(conv('bool', 'i32', [1, 0]), [1, 0]);
    same(conv('f32', 'bool', [0, -0, 0.5, -Infinity, NaN, 2 ** -149]), [0, 0, 1, 1, 1, 1]);
    same(conv('i32', 'bool', [0, -5, INT_MIN]), [0, 1, 1]);
    same(conv('bool', 'bool', [1, 0]), [1, 0]);
  });

  it('fp64 mode leaves float results unrounded but integers exact', () => {
    same(conv('f32', 'f16', [1 + 2 ** -11, 70000], true), [1 + 2 ** -11, 70000]);
    same(conv('i32', 'f16', [2049], true), [2049]);
    same(conv('f32', 'i32', [2.7, 3e9], true), [2, INT_MAX]);
    same(conv('f32', 'f16', [1 + 2 ** -11]), [1]);
  });

  it('keeps the shape and refuses a missing or bad dtype attribute', () => {
    const r = run1('convert', [t('f32', [2, 1], [1, 2])], { dtype: 'i32' });
    expect(r.shape).to.deep.equal([2, 1]);
    refuses('convert', [ty('f32', [2])], {}, '/dtype');
    refuses('convert', [ty('f32', [2])], { dtype: 'f64' }, '/dtype');
  });
});
