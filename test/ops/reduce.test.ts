import { expect } from 'chai';
import { F32_MAX, INT_MAX, INT_MIN, refuses, run1, same, t, ty } from './helpers.js';

describe('ops/reduce', () => {
  const m = t('f32', [2, 3], [1, 2, 3, 10, 20, 30]);

  it('sums and maxes over the given axes, dropping them from the shape', () => {
    const rows = run1('reduce_sum', [m], { axes: [1] });
    expect(rows.shape).to.deep.equal([2]);
    same(rows.data, [6, 60]);
    same(run1('reduce_sum', [m], { axes: [0] }).data, [11, 22, 33]);
    const all = run1('reduce_sum', [m], { axes: [0, 1] });
    expect(all.shape).to.deep.equal([]);
    same(all.data, [66]);
    same(run1('reduce_max', [m], { axes: [1] }).data, [3, 30]);
    same(run1('reduce_max', [t('f32', [2, 2, 2], [1, 8, 3, 4, 5, 6, 7, 2])], { axes: [0, 2] }).data, [8, 7]);
    same(run1('reduce_sum', [m], { axes: [] }).data, [1, 2, 3, 10, 20, 30]);
  });

  it('accumulates in f64 and rounds once (f16, bf16)', () => {
    // 65504 + 32 - 32 overflows an f16 accumulator, not an f64 one.
    same(run1('reduce_sum', [t('f16', [3], [65504, 32, -32])], { axes: [0] }).data, [65504]);
    same(run1('reduce_sum', [t('f16', [2], [65504, 8])], { axes: [0] }).data, [65504]);
    same(run1('reduce_sum', [t('f16', [2], [65504, 16])], { axes: [0] }).data, [Infinity]);
    // 1 + 2^-11 + 2^-24 is just above the f16 tie, so it rounds up. Summing in f32 first would round
    // the 2^-24 (half an f32 ulp at 1) away to even and leave the tie, which goes down to 1.
    same(run1('reduce_sum', [t('f16', [3], [1, 2 ** -11, 2 ** -24])], { axes: [0] }).data, [1 + 2 ** -10]);
    same(run1('reduce_sum', [t('bf16', [3], [1, 2 ** -8, 2 ** -30])], { axes: [0] }).data, [1 + 2 ** -7]);
    same(run1('reduce_sum', [t('f32', [3], [F32_MAX, F32_MAX, -F32_MAX])], { axes: [0] }).data, [F32_MAX]);
  });

  it('handles signed zeros, NaN, infinities and empty axes', () => {
    same(run1('reduce_sum', [t('f32', [2], [-0, -0])], { axes: [0] }).data, [-0]);
    same(run1('reduce_sum', [t('f32', [2], [-0, 0])], { axes: [0] }).data, [0]);
    same(run1('reduce_sum', [t('f32', [2], [Infinity, -Infinity])], { axes: [0] }).data, [NaN]);
    same(run1('reduce_max', [t('f32', [3], [1, NaN, 2])], { axes: [0] }).data, [NaN]);
    same(run1('reduce_max', [t('f32', [2], [-0, 0])], { axes: [0] }).data, [0]);
    same(run1('reduce_max', [t('f32', [2], [0, -0])], { axes: [0] }).data, [0]);
    same(run1('reduce_max', [t('f16', [2], [-Infinity, -0])], { axes: [0] }).data, [-0]);
    const empty = t('f32', [2, 0], []);
    same(run1('reduce_sum', [empty], { axes: [1] }).data, [0, 0]);
    same(run1('reduce_max', [empty], { axes: [1] }).data, [-Infinity, -Infinity]);
  });

  it('i32 sums wrap; an empty i32 max is INT_MIN', () => {
    same(run1('reduce_sum', [t('i32', [2], [INT_MAX, 1])], { axes: [0] }).data, [INT_MIN]);
    same(run1('reduce_sum', [t('i32', [3], [INT_MAX, 1, -1])], { axes: [0] }).data, [INT_MAX]);
    same(run1('reduce_max', [t('i32', [3], [INT_MIN, -5, -9])], { axes: [0] }).data, [-5]);
    same(run1('reduce_max', [t('i32', [0], [])], { axes: [0] }).data, [INT_MIN]);
  });

  it('fp64 mode keeps the unrounded sum', () => {
    same(run1('reduce_sum', [t('f16', [2], [65504, 16])], { axes: [0] }, { fp64: true }).data, [65520]);
  });

  it('refuses unsorted, repeated or out-of-range axes and bool operands', () => {
    refuses('reduce_sum', [ty('f32', [2, 3])], { axes: [1, 0] }, '/axes/1');
    refuses('reduce_sum', [ty('f32', [2, 3])], { axes: [1, 1] }, '/axes/1');
    refuses('reduce_max', [ty('f32', [2, 3])], { axes: [2] }, '/axes/0');
    refuses('reduce_max', [ty('f32', [2, 3])], { axes: [-1] }, '/axes/0');
    refuses('reduce_sum', [ty('bool', [2])], { axes: [0] }, '/in/0');
    refuses('reduce_sum', [ty('f32', [2])], {}, '/axes');
  });
});

describe('ops/matmul', () => {
  it('multiplies [M, K] x [K, N]', () => {
    // [[1, 2, 3], [4, 5, 6]] x [[1, 0], [0, 1], [1, 1]] = [[4, 5], [10, 11]]
    const r = run1('matmul', [t('f32', [2, 3], [1, 2, 3, 4, 5, 6]), t('f32', [3, 2], [1, 0, 0, 1, 1, 1])]);
    expect(r.shape).to.deep.equal([2, 2]);
    same(r.data, [4, 5, 10, 11]);
  });

  it('multiplies batches independently', () => {
    // batch 0: [1, 2] . [3, 4] = 11; batch 1: [5, 6] . [7, 8] = 83
    const r = run1('matmul', [t('i32', [2, 1, 2], [1, 2, 5, 6]), t('i32', [2, 2, 1], [3, 4, 7, 8])]);
    expect(r.shape).to.deep.equal([2, 1, 1]);
    same(r.data, [11, 83]);
  });

  it('accumulates in f64 and rounds once', () => {
    same(run1('matmul', [t('bf16', [1, 3], [1, 1, 1]), t('bf16', [3, 1], [1, 2 ** -8, 2 ** -30])]).data, [1 + 2 ** -7]);
    same(run1('matmul', [t('f32', [1, 2], [F32_MAX, F32_MAX]), t('f32', [2, 1], [1, -1])]).data, [0]);
    same(run1('matmul', [t('f16', [1, 2], [256, 256]), t('f16', [2, 1], [256, -256])]).data, [0]);
    same(run1('matmul', [t('f16', [1, 1], [256]), t('f16', [1, 1], [256])]).data, [Infinity]);
    same(run1('matmul', [t('f16', [1, 1], [256]), t('f16', [1, 1], [256])], {}, { fp64: true }).data, [65536]);
  });

  it('handles signed zeros, NaN and K = 0', () => {
    same(run1('matmul', [t('f32', [1, 2], [-1, 1]), t('f32', [2, 1], [0, -0])]).data, [-0]);
    same(run1('matmul', [t('f32', [1, 2], [-1, 1]), t('f32', [2, 1], [0, 0])]).data, [0]);
    same(run1('matmul', [t('f32', [1, 2], [0, 1]), t('f32', [2, 1], [Infinity, 1])]).data, [NaN]);
    const r = run1('matmul', [t('f32', [2, 0], []), t('f32', [0, 3], [])]);
    expect(r.shape).to.deep.equal([2, 3]);
    same(r.data, [0, 0, 0, 0, 0, 0]);
  });

  it('wraps i32 products and sums', () => {
    same(run1('matmul', [t('i32', [1, 1], [65536]), t('i32', [1, 1], [65536])]).data, [0]);
    same(run1('matmul', [t('i32', [1, 2], [INT_MAX, 1]), t('i32', [2, 1], [1, 1])]).data, [INT_MIN]);
    // Products past 2^53 lose low bits in f64; the expected value is exact two's complement via BigInt.
    const a = [123456789, -987654321];
    const b = [987654321, 555555555];
    const want = BigInt.asIntN(32, BigInt(a[0]!) * BigInt(b[0]!) + BigInt(a[1]!) * BigInt(b[1]!));
    same(run1('matmul', [t('i32', [1, 2], a), t('i32', [2, 1], b)]).data, [Number(want)]);
    same(run1('matmul', [t('i32', [1, 1], [123456789]), t('i32', [1, 1], [987654321])]).data, [Number(BigInt.asIntN(32, 123456789n * 987654321n))]);
  });

  it('refuses bad ranks, contracting dims, batch dims and dtypes', () => {
    refuses('matmul', [ty('f32', [3]), ty('f32', [3, 2])], {}, '/in/0');
    refuses('matmul', [ty('f32', [2, 3]), ty('f32', [4, 2])], {}, '/in/1');
    refuses('matmul', [ty('f32', [2, 2, 3]), ty('f32', [3, 3, 2])], {}, '/in/1');
    refuses('matmul', [ty('f32', [2, 2, 3]), ty('f32', [3, 2])], {}, '/in/1');
    refuses('matmul', [ty('f32', [2, 3]), ty('f16', [3, 2])], {}, '/in/1');
    refuses('matmul', [ty('bool', [2, 3]), ty('bool', [3, 2])], {}, '/in/0');
  });
});
