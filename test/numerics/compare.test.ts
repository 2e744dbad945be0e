import { expect } from 'chai';
import { tensor } from '../../src/ir/tensor.js';
import { CLASS_TOLERANCES, NUMERICS_CLASSES, toleranceFor } from '../../src/numerics/classes.js';
import { compareTensor } from '../../src/numerics/compare.js';
import type { Tolerance } from '../../src/numerics/compare.js';
import { DTYPES } from '../../src/ir/types.js';

const EXACT: Tolerance = { kind: 'exact' };

describe('numerics/compare', () => {
  it('passes identical tensors with no worst element', () => {
    const a = tensor('f32', [2, 2], [1, -0, NaN, Infinity]);
    const c = compareTensor(a, tensor('f32', [2, 2], [1, -0, NaN, Infinity]), EXACT);
    expect(c.pass).to.equal(true);
    expect(c.worst).to.equal(null);
    expect(c.reason).to.equal(undefined);
  });

  it('exact is bit-equality: -0 differs from +0', () => {
    const c = compareTensor(tensor('f32', [2], [1, -0]), tensor('f32', [2], [1, 0]), EXACT);
    expect(c.pass).to.equal(false);
    expect(c.worst).to.deep.equal({ index: 1, got: -0, want: 0 });
    expect(c.reason).to.match(/1 of 2 elements/);
    // The other kinds treat the zeros alike.
    expect(compareTensor(tensor('f32', [2], [1, -0]), tensor('f32', [2], [1, 0]), { kind: 'ulps', ulps: 0 }).pass).to.equal(true);
  });

  it('ulps: passes within the bound, fails past it and names the worst element', () => {
    const want = tensor('f32', [3], [1, 2, 4]);
    const got2 = tensor('f32', [3], [1 + 2 ** -22, 2, 4]); // 2 ulps
    const got3 = tensor('f32', [3], [1 + 2 ** -22, 2 + 3 * 2 ** -22, 4]); // 2 and 3 ulps
    expect(compareTensor(got2, want, { kind: 'ulps', ulps: 2 }).pass).to.equal(true);
    const c = compareTensor(got3, want, { kind: 'ulps', ulps: 2 });
    expect(c.pass).to.equal(false);
    expect(c.worst).to.deep.equal({ index: 1, got: 2 + 3 * 2 ** -22, want: 2 });
    expect(c.measures.maxUlps).to.equal(3);
    // On a pass, worst still points at the largest difference.
    expect(compareTensor(got2, want, { kind: 'ulps', ulps: 2 }).worst?.index).to.equal(0);
  });

  it('ulps count in the tensor dtype', () => {
    const want = tensor('f16', [1], [1]);
    const got = tensor('f16', [1], [1 + 2 ** -9]); // 2 f16 ulps
    expect(compareTensor(got, want, { kind: 'ulps', ulps: 2 }).pass).to.equal(true);
    expect(compareTensor(got, want, { kind: 'ulps', ulps: 1 }).pass).to.equal(false);
  });

  it('absrel: |got - want| <= abs + rel |want| elementwise', () => {
    const tol: Tolerance = { kind: 'absrel', abs: 1e-3, rel: 1e-2 };
    const want = tensor('f32', [2], [0, 100]);
    expect(compareTensor(tensor('f32', [2], [9e-4, 100.9]), want, tol).pass).to.equal(true);
    const c = compareTensor(tensor('f32', [2], [2e-3, 100.9]), want, tol);
    expect(c.pass).to.equal(false);
    expect(c.worst?.index).to.equal(0);
  });

  it('normwise: judges the whole tensor', () => {
    const want = tensor('f32', [4], [1, 1, 1, 1]);
    const got = tensor('f32', [4], [1, 1, 1, 1.01]); // ||d|| / ||w|| = 0.01 / 2
    expect(compareTensor(got, want, { kind: 'normwise', rel: 6e-3 }).pass).to.equal(true);
    const c = compareTensor(got, want, { kind: 'normwise', rel: 4e-3 });
    expect(c.pass).to.equal(false);
    expect(c.reason).to.match(/normwise/);
    expect(c.worst?.index).to.equal(3);
  });

  it('an error exactly at its bound passes: the bound is <=, for absrel and normwise alike', () => {
    // Powers of two throughout, so every error and bound below is exact.
    const want = tensor('f32', [2], [4, 1]);
    const got = tensor('f32', [2], [2, 1]);
    expect(compareTensor(got, want, { kind: 'absrel', abs: 2, rel: 0 }).pass).to.equal(true);
    expect(compareTensor(got, want, { kind: 'absrel', abs: 0, rel: 0.5 }).pass).to.equal(true);
    expect(compareTensor(got, want, { kind: 'absrel', abs: 1, rel: 0.25 }).pass).to.equal(true);
    expect(compareTensor(got, want, { kind: 'absrel', abs: 1, rel: 0.25 - 2 ** -20 }).pass).to.equal(false);
    // ||got - want|| / ||want|| = 2 / 4 with one element.
    const one = (v: number) => tensor('f32', [1], [v]);
    expect(compareTensor(one(2), one(4), { kind: 'normwise', rel: 0.5 }).pass).to.equal(true);
    expect(compareTensor(one(2), one(4), { kind: 'normwise', rel: 0.5 - 2 ** -20 }).pass).to.equal(false);
  });

  it('NaN: matching positions pass, a one-sided NaN fails every kind', () => {
    const want = tensor('f32', [2], [NaN, 1]);
    for (const tol of [EXACT, { kind: 'ulps', ulps: 1e9 }, { kind: 'absrel', abs: 1e9, rel: 1e9 }, { kind: 'normwise', rel: 1e9 }] as Tolerance[]) {
      expect(compareTensor(tensor('f32', [2], [NaN, 1]), want, tol).pass, tol.kind).to.equal(true);
      const c = compareTensor(tensor('f32', [2], [0, 1]), want, tol);
      expect(c.pass, tol.kind).to.equal(false);
      expect(c.worst).to.deep.equal({ index: 0, got: 0, want: NaN });
      expect(compareTensor(tensor('f32', [2], [NaN, Infinity]), tensor('f32', [2], [NaN, 3e38]), tol).pass, `${tol.kind} inf`).to.equal(false);
    }
  });

  it('refuses a dtype or shape mismatch with a reason', () => {
    const a = tensor('f32', [2, 3], [1, 2, 3, 4, 5, 6]);
    const d = compareTensor(tensor('f16', [2, 3], [1, 2, 3, 4, 5, 6]), a, EXACT);
    expect(d.pass).to.equal(false);
    expect(d.reason).to.match(/dtype f16 differs from the reference's f32/);
    expect(d.measures.maxAbs).to.be.NaN;
    const s = compareTensor(tensor('f32', [3, 2], [1, 2, 3, 4, 5, 6]), a, { kind: 'normwise', rel: 1 });
    expect(s.pass).to.equal(false);
    expect(s.reason).to.match(/shape \[3, 2\] differs from the reference's \[2, 3\]/);
  });

  it('compares integer tensors exactly whatever the tolerance', () => {
    const c = compareTensor(tensor('i32', [2], [1, 3]), tensor('i32', [2], [1, 2]), { kind: 'normwise', rel: 1 });
    expect(c.pass).to.equal(false);
    expect(c.tolerance).to.deep.equal(EXACT);
    expect(compareTensor(tensor('bool', [2], [1, 0]), tensor('bool', [2], [1, 0]), { kind: 'ulps', ulps: 5 }).pass).to.equal(true);
  });
});

describe('numerics/classes', () => {
  it('has a tolerance for every class and dtype, integers exact', () => {
    for (const cls of NUMERICS_CLASSES) {
      for (const d of DTYPES) expect(toleranceFor(cls, d), `${cls} ${d}`).to.be.an('object');
      expect(toleranceFor(cls, 'i32')).to.deep.equal(EXACT);
      expect(toleranceFor(cls, 'bool')).to.deep.equal(EXACT);
    }
    expect(CLASS_TOLERANCES.Exact.f32).to.deep.equal(EXACT);
    expect(toleranceFor('Faithful', 'f16')).to.deep.equal({ kind: 'ulps', ulps: 2 });
    expect(toleranceFor('Contract', 'f32')).to.deep.equal({ kind: 'absrel', abs: 2e-6, rel: 1e-5 });
  });

  it('lets a target replace the Contract default for floats only', () => {
    const own: Tolerance = { kind: 'absrel', abs: 1e-4, rel: 1e-3 };
    expect(toleranceFor('Contract', 'f32', own)).to.equal(own);
    expect(toleranceFor('Contract', 'i32', own)).to.deep.equal(EXACT);
    expect(toleranceFor('Faithful', 'f32', own)).to.deep.equal({ kind: 'ulps', ulps: 2 });
  });

  it('orders the classes from strict to loose on the same error', () => {
    // One f32 element off by 3 ulps: fails Exact and Faithful, passes Contract and NarrowStorage.
    const want = tensor('f32', [2], [1, 1]);
    const got = tensor('f32', [2], [1, 1 + 3 * 2 ** -23]);
    const pass = NUMERICS_CLASSES.map((cls) => compareTensor(got, want, toleranceFor(cls, 'f32')).pass);
    expect(pass).to.deep.equal([false, false, true, true]);
    // An FP16-storage sized error (one f16 rounding on every element) passes only NarrowStorage.
    const n = 64;
    const w = Float64Array.from({ length: n }, (_, i) => Math.fround(Math.sin(i + 1)));
    const g = w.map((v, i) => v * (1 + 2 ** -11 * (i % 2 ? 1 : -1)));
    const pass16 = NUMERICS_CLASSES.map((cls) => compareTensor(tensor('f32', [n], g.map(Math.fround)), tensor('f32', [n], w), toleranceFor(cls, 'f32')).pass);
    expect(pass16).to.deep.equal([false, false, false, true]);
    // A wrong kernel (one element with the wrong sign) fails even NarrowStorage.
    const bad = Float64Array.from(w);
    bad[3] = -bad[3]!;
    expect(compareTensor(tensor('f32', [n], bad), tensor('f32', [n], w), toleranceFor('NarrowStorage', 'f32')).pass).to.equal(false);
  });
});
