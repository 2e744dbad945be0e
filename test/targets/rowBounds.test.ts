import { expect } from 'chai';
import type { RowBody } from '../../src/ir/types.js';
import { MISSING_BOUND, deriveRowBound } from '../../src/targets/rowBounds.js';
import { XDNA2_PUBLISHED_RMSNORM_BOUND, XDNA2_STEP_CONTRACTS } from '../../src/targets/xdna2/contracts.js';
import { rmsBody } from './helpers.js';
import { HOST_TYPED_STEP_CONTRACTS } from '../../src/targets/host/verify.js';

const u = 2 ** -23;
const derive = (body: object, cols = 64, inputs?: number[]) => deriveRowBound(body as RowBody, cols, XDNA2_STEP_CONTRACTS, inputs);
const body = (steps: object[], results: string[], params = ['x']) => ({ params, steps, results });

describe('row kernel bound derivation', () => {
  // The seed publishes 8.5e-6 for a 64-column RMSNorm; the derivation (docs/XDNA2.md) gives 71.36 x 2^-23
  // without the weight and 72.36 x 2^-23 with it. Stated margin: within 2 percent of 8.5e-6.
  it('RMSNorm over 64 columns: within 2 percent of the published 8.5e-6, with and without a weight', () => {
    const plain = derive(rmsBody(false));
    const weighted = derive(rmsBody(true));
    if (!plain.ok || !weighted.ok) throw new Error('RMSNorm must have a bound');
    expect(plain.rel).to.be.closeTo(8.5063e-6, 1e-9);
    expect(weighted.rel).to.be.closeTo(8.6256e-6, 1e-9);
    for (const r of [plain.rel, weighted.rel]) expect(Math.abs(r / XDNA2_PUBLISHED_RMSNORM_BOUND - 1)).to.be.below(0.02);
  });

  it('shows each step: signs and ε in units of 2^-23', () => {
    const b = derive(rmsBody(true));
    if (!b.ok) throw new Error('no bound');
    expect(b.steps.map((s) => [s.op, s.sign, Math.round((s.rel / u) * 100) / 100])).to.deep.equal([
      ['mul', 'nonneg', 0], // x*x: a square, exact
      ['reduce_sum', 'nonneg', 128], // 64 non-negative terms: 2 x 64
      ['div', 'nonneg', 129], // / 64: exact, re-rounded
      ['add', 'posnormal', 132], // + 1e-6: cannot cancel, 2 for the add, 1 re-rounding
      ['sqrt', 'posnormal', 70.36], // halves, + re-rounding + 4e-7 (3.36)
      ['div', 'any', 71.36], // x / rms: exact, relative errors add, re-rounded
      ['mul', 'any', 72.36], // * w
    ]);
  });

  it('grows with the row: a sum of n non-negative terms adds 2 x n x 2^-23', () => {
    const a = derive(rmsBody(false), 64);
    const b = derive(rmsBody(false), 128);
    if (!a.ok || !b.ok) throw new Error('no bound');
    // 128 more units before the sqrt halves them: 64 more after.
    expect((b.rel - a.rel) / u).to.be.closeTo(64, 0.01);
  });

  it('starts from the params\' own ε when the row inputs are inexact', () => {
    const exact = derive(rmsBody(false));
    const fuzzy = derive(rmsBody(false), 64, [1e-6]);
    if (!exact.ok || !fuzzy.ok) throw new Error('no bound');
    expect(fuzzy.rel).to.be.greaterThan(exact.rel + 1e-6);
  });

  it('refuses each step that has no bound, naming it', () => {
    const cases: [object, number, string][] = [
      [body([{ op: 'sub', in: ['x', { lit: 1 }], out: 'y' }], ['y']), 0, MISSING_BOUND.sub],
      [body([{ op: 'add', in: ['x', { lit: 1 }], out: 'y' }], ['y']), 0, MISSING_BOUND.add],
      [body([{ op: 'mul', in: ['x', 'x'], out: 's' }, { op: 'add', in: ['s', { lit: -1 }], out: 'y' }], ['y']), 1, MISSING_BOUND.add],
      [body([{ op: 'reduce_sum', in: ['x'], out: 'y' }], ['y']), 0, MISSING_BOUND.reduceSum],
      // A square is non-negative but may be zero, so its sqrt is not provably of a positive normal.
      [body([{ op: 'mul', in: ['x', 'x'], out: 's' }, { op: 'sqrt', in: ['s'], out: 'y' }], ['y']), 1, MISSING_BOUND.sqrt],
      [body([{ op: 'exp', in: ['x'], out: 'y' }], ['y']), 0, 'exp: no relative bound inside a row kernel (its contract has an absolute part)'],
      [body([{ op: 'mul', in: ['x', 'x'], out: 's' }, { op: 'tanh', in: ['s'], out: 'y' }], ['y']), 1, 'tanh: no relative bound inside a row kernel (its contract has an absolute part)'],
      [body([{ op: 'abs', in: ['x'], out: 'y' }], ['y']), 0, 'abs: no contract for this op on the target, so no bound'],
    ];
    for (const [b, step, bound] of cases) expect(derive(b)).to.deep.include({ ok: false, step, bound });
  });

  it('a product of two non-negative values and a max with a positive literal are provably signed', () => {
    const b = derive(body([
      { op: 'mul', in: ['x', 'x'], out: 's' },
      { op: 'max', in: ['x', { lit: 1e-3 }], out: 'p' },
      { op: 'sqrt', in: ['p'], out: 'r' },
      { op: 'mul', in: ['s', 'r'], out: 'q' },
      { op: 'reduce_sum', in: ['q'], out: 't' },
    ], ['t']));
    expect(b.ok).to.equal(true);
    if (b.ok) expect(b.steps.map((s) => s.sign)).to.deep.equal(['nonneg', 'posnormal', 'posnormal', 'nonneg', 'nonneg']);
  });

  it('typed (f16) steps: exact on exact operands, a libm step 1 ulp of the dtype carried through a softmax; a libm step of an inexact value has none', () => {
    const softmax = body([
      { op: 'reduce_max', in: ['x'], out: 'm' }, { op: 'sub', in: ['x', 'm'], out: 'd' }, { op: 'exp', in: ['d'], out: 'e' },
      { op: 'reduce_sum', in: ['e'], out: 's' }, { op: 'div', in: ['e', 's'], out: 'y' },
    ], ['y']);
    const b = deriveRowBound(softmax as RowBody, 16, HOST_TYPED_STEP_CONTRACTS.f16);
    if (!b.ok) throw new Error(`no bound: ${b.bound}`);
    const uu = 2 ** -11;
    expect(b.steps.map((s) => [s.op, s.sign])).to.deep.equal([['reduce_max', 'any'], ['sub', 'any'], ['exp', 'nonneg'], ['reduce_sum', 'nonneg'], ['div', 'nonneg']]);
    expect(b.steps.map((s) => Math.round(s.rel / uu))).to.deep.equal([0, 0, 2, 4, 8]);
    expect(b.rel).to.be.greaterThan(8 * uu).and.lessThan(8.1 * uu);
    const twice = deriveRowBound(body([{ op: 'exp', in: ['x'], out: 'e' }, { op: 'exp', in: ['e'], out: 'ee' }], ['ee']) as RowBody, 16, HOST_TYPED_STEP_CONTRACTS.f16);
    expect(twice.ok).to.equal(false);
    expect(!twice.ok && twice.bound).to.equal(MISSING_BOUND.libmInexact('exp'));
    // Without the typed contracts (f32 bodies) nothing changes: exp still has no relative bound.
    expect(derive(softmax).ok).to.equal(false);
  });
});
