import { expect } from 'chai';
import type { RowBody } from '../../src/ir/types.js';
import { roundF16 } from '../../src/numerics/float16.js';
import { refuses, run, run1, same, t, ty } from './helpers.js';

/** The spec's RMSNorm body over rows of `c` elements. */
function rmsBody(c: number, eps: number): RowBody {
  return {
    params: ['x', 'w'],
    steps: [
      { op: 'mul', in: ['x', 'x'], out: 'sq' },
      { op: 'reduce_sum', in: ['sq'], out: 'ss' },
      { op: 'div', in: ['ss', { lit: c }], out: 'ms' },
      { op: 'add', in: ['ms', { lit: eps }], out: 'mse' },
      { op: 'sqrt', in: ['mse'], out: 'rms' },
      { op: 'div', in: ['x', 'rms'], out: 'xn' },
      { op: 'mul', in: ['xn', 'w'], out: 'y' },
    ],
    results: ['y'],
  };
}

/** RMSNorm of one row written out straight, each step rounded by `r`: the reference the kernel must match. */
function rmsRow(x: readonly number[], w: readonly number[], eps: number, r: (v: number) => number): number[] {
  const sq = x.map((v) => r(v * v));
  const ss = r(sq.reduce((a, b) => a + b, 0));
  const rms = r(Math.sqrt(r(r(ss / r(x.length)) + r(eps))));
  return x.map((v, i) => r(r(v / rms) * w[i]!));
}

describe('ops/row_kernel', () => {
  it('runs the spec RMSNorm with exact values (eps 0)', () => {
    // Row 0: [2, 2, 2, 2] has rms 2, so y = w. Row 1: [3, 4, 0, 0] has ss 25, ms 6.25, rms 2.5, so
    // xn = [1.2, 1.6, 0, 0], each rounded to f32 once; times w = [1, 2, -1, 0.5] gives -0 in the third.
    const x = t('f32', [2, 4], [2, 2, 2, 2, 3, 4, 0, 0]);
    const w = t('f32', [4], [1, 2, -1, 0.5]);
    const y = run1('row_kernel', [x, w], { body: rmsBody(4, 0) });
    expect(y.shape).to.deep.equal([2, 4]);
    same(y.data, [1, 2, -1, 0.5, Math.fround(1.2), 2 * Math.fround(1.6), -0, 0]);
  });

  it('runs the spec RMSNorm with eps 1e-6, each step rounded to f32', () => {
    const rows = [[0.5, -1.25, 3, 7.75], [1e-3, 2e-3, -4e-3, 0]].map((r) => r.map(Math.fround));
    const w = [1.5, -0.25, 1, 2];
    const y = run1('row_kernel', [t('f32', [2, 4], rows.flat()), t('f32', [4], w)], { body: rmsBody(4, 1e-6) });
    same(y.data, rows.flatMap((r) => rmsRow(r, w, 1e-6, Math.fround)));
  });

  it('rounds every step to the row dtype, which fp64 mode does not', () => {
    // f16: 256 * 256 = 65536 overflows, so rms is inf and y is 0; in fp64, rms is 256 and y is w.
    const x = t('f16', [1, 4], [256, 256, 256, 256]);
    const w = t('f16', [4], [1, -1, 0.5, 2]);
    same(run1('row_kernel', [x, w], { body: rmsBody(4, 0) }).data, [0, -0, 0, 0]);
    same(run1('row_kernel', [x, w], { body: rmsBody(4, 0) }, { fp64: true }).data, [1, -1, 0.5, 2]);
    const small = [0.1, -0.3, 0.7, 1.9].map(roundF16);
    same(run1('row_kernel', [t('f16', [1, 4], small), w], { body: rmsBody(4, 1e-6) }).data, rmsRow(small, [1, -1, 0.5, 2], 1e-6, roundF16));
  });

  it('returns several results: a vector [..., C] and a scalar [...]', () => {
    const body: RowBody = {
      params: ['x'],
      steps: [
        { op: 'reduce_max', in: ['x'], out: 'm' },
        { op: 'sub', in: ['x', 'm'], out: 'd' },
        { op: 'reduce_sum', in: ['x'], out: 's' },
      ],
      results: ['d', 's'],
    };
    const [d, sum] = run('row_kernel', [t('f32', [2, 2, 3], [1, 5, 2, -1, -3, -2, 0, 0, 0, 9, 8, 7])], { body });
    expect(d!.shape).to.deep.equal([2, 2, 3]);
    same(d!.data, [-4, 0, -3, 0, -2, -1, 0, 0, 0, 0, -1, -2]);
    expect(sum!.shape).to.deep.equal([2, 2]);
    same(sum!.data, [8, -6, 0, 24]);
  });

  it('shares a [C] operand across every row, and treats [C]-only operands as one row', () => {
    const body: RowBody = { params: ['x', 'b'], steps: [{ op: 'add', in: ['x', 'b'], out: 'y' }], results: ['y'] };
    same(run1('row_kernel', [t('f32', [3, 2], [1, 2, 3, 4, 5, 6]), t('f32', [2], [10, 20])], { body }).data, [11, 22, 13, 24, 15, 26]);
    same(run1('row_kernel', [t('f32', [2], [10, 20]), t('f32', [3, 2], [1, 2, 3, 4, 5, 6])], { body }).data, [11, 22, 13, 24, 15, 26]);
    same(run1('row_kernel', [t('f32', [2], [1, 2]), t('f32', [2], [10, 20])], { body }).data, [11, 22]);
    // A param returned as it is, when shared, is repeated for every row.
    const id: RowBody = { params: ['x', 'b'], steps: [], results: ['b'] };
    same(run1('row_kernel', [t('i32', [2, 2], [1, 2, 3, 4]), t('i32', [2], [7, 8])], { body: id }).data, [7, 8, 7, 8]);
  });

  it('broadcasts scalars against vectors and materializes literals in the row dtype', () => {
    const body: RowBody = {
      params: ['x'],
      steps: [
        { op: 'mul', in: ['x', { lit: 0.1 }], out: 'y' },
        { op: 'reduce_sum', in: ['x'], out: 's' },
        { op: 'div', in: [{ lit: 1 }, 's'], out: 'inv' },
      ],
      results: ['y', 'inv'],
    };
    // f16(0.1) = 1638 * 2^-14 = 0.0999755859375 (0.1 * 2^14 = 1638.4).
    const [y, inv] = run('row_kernel', [t('f16', [1, 2], [1, 3])], { body });
    same(y!.data, [1638 * 2 ** -14, roundF16(3 * 1638 * 2 ** -14)]);
    same(inv!.data, [0.25]);
    const [y64] = run('row_kernel', [t('f16', [1, 2], [1, 3])], { body }, { fp64: true });
    same(y64!.data, [1 * 0.1, 3 * 0.1]);
  });

  it('handles zero rows', () => {
    const body: RowBody = { params: ['x'], steps: [{ op: 'reduce_sum', in: ['x'], out: 's' }], results: ['x', 's'] };
    const [x, s] = run('row_kernel', [t('f32', [0, 3], [])], { body });
    expect(x!.shape).to.deep.equal([0, 3]);
    expect(s!.shape).to.deep.equal([0]);
  });

  it('refuses bodies that do not fit their operands or break SSA', () => {
    const x = ty('f32', [2, 4]);
    const step = (op: string, ins: RowBody['steps'][number]['in'], out: string) => ({ op, in: ins, out });
    const b = (params: string[], steps: RowBody['steps'], results: string[]): { body: RowBody } => ({ body: { params, steps, results } });
    refuses('row_kernel', [x], b(['x', 'w'], [], ['x']), '/body/params');
    refuses('row_kernel', [x, x], b(['x', 'x'], [], ['x']), '/body/params/1');
    refuses('row_kernel', [x], b(['x'], [step('matmul', ['x', 'x'], 'y')], ['y']), '/body/steps/0/op');
    refuses('row_kernel', [x], b(['x'], [step('ge', ['x', 'x'], 'y')], ['y']), '/body/steps/0/op');
    refuses('row_kernel', [x], b(['x'], [step('convert', ['x'], 'y')], ['y']), '/body/steps/0/op');
    refuses('row_kernel', [x], b(['x'], [step('nope', ['x'], 'y')], ['y']), '/body/steps/0/op');
    refuses('row_kernel', [x], b(['x'], [step('exp', ['x'], 'y'), step('add', ['z', 'y'], 'u')], ['u']), '/body/steps/1/in/0');
    refuses('row_kernel', [x], b(['x'], [step('exp', ['y'], 'y')], ['y']), '/body/steps/0/in/0');
    refuses('row_kernel', [x], b(['x'], [step('exp', ['x'], 'y'), step('neg', ['x'], 'y')], ['y']), '/body/steps/1/out');
    refuses('row_kernel', [x], b(['x'], [step('exp', ['x'], 'x')], ['x']), '/body/steps/0/out');
    refuses('row_kernel', [x], b(['x'], [step('exp', ['x'], 'y')], ['z']), '/body/results/0');
    refuses('row_kernel', [x], b(['x'], [], []), '/body/results');
    refuses('row_kernel', [x], b(['x'], [step('add', ['x', { lit: 1, dtype: 'i32' }], 'y')], ['y']), '/body/steps/0/in/1');
    refuses('row_kernel', [x], b(['x'], [step('add', ['x'], 'y')], ['y']), '/body/steps/0/in');
    refuses('row_kernel', [x], b(['x'], [step('reduce_sum', ['x'], 's'), step('reduce_max', ['s'], 'm')], ['m']), '/body/steps/1/in/0');
    refuses('row_kernel', [ty('i32', [2, 4])], b(['x'], [step('exp', ['x'], 'y')], ['y']), '/body/steps/0/in/0');
    // A reduce of a scalar names what it reduces: a step's name quoted, a literal by its value (not [object Object]).
    expect(refuses('row_kernel', [x], b(['x'], [step('reduce_sum', ['x'], 's'), step('reduce_max', ['s'], 'm')], ['m']), '/body/steps/1/in/0').reason).to.contain('"s" is already a scalar');
    expect(refuses('row_kernel', [x], b(['x'], [step('reduce_sum', [{ lit: 2 }], 's')], ['s']), '/body/steps/0/in/0').reason).to.contain('the literal 2 is already a scalar');
  });

  it('refuses operands that are not rows of one shape and dtype', () => {
    const id = { body: { params: ['a', 'b'], steps: [], results: ['a'] } };
    refuses('row_kernel', [ty('f32', [2, 4]), ty('f32', [3, 4])], id, '/in/1');
    refuses('row_kernel', [ty('f32', [2, 4]), ty('f32', [3])], id, '/in/1');
    refuses('row_kernel', [ty('f32', [2, 4]), ty('f16', [4])], id, '/in/1');
    refuses('row_kernel', [ty('f32', [2, 4]), ty('f32', [])], id, '/in/1');
    refuses('row_kernel', [ty('bool', [2, 4]), ty('bool', [4])], id, '/in/0');
    refuses('row_kernel', [], { body: { params: [], steps: [], results: [] } }, '/in');
  });
});
