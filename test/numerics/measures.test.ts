import { expect } from 'chai';
import {
  DEFAULT_REL_FLOOR, cosineSimilarity, maxAbsError, maxRelError, maxUlpError, measure, normwiseRelError,
} from '../../src/numerics/measures.js';

const f = (xs: readonly number[]): Float64Array => Float64Array.from(xs);

describe('numerics/measures', () => {
  it('measures a plain difference', () => {
    const got = f([1, 2.5, -4, 0]);
    const want = f([1, 2, -3, 0]);
    expect(maxAbsError(got, want)).to.equal(1);
    expect(maxRelError(got, want)).to.equal(1 / 3); // at -3; 0.5/2 at 2 is smaller
  });

  it('takes the largest relative error, with the floor for tiny references', () => {
    expect(maxRelError(f([1.1, 2.5]), f([1, 2]))).to.be.closeTo(0.25, 1e-15);
    // A reference of 0 would make any difference infinitely relative; the floor bounds it.
    expect(maxRelError(f([1e-40]), f([0]))).to.equal(1e-40 / DEFAULT_REL_FLOOR);
    expect(maxRelError(f([1e-3]), f([0]), 1e-3)).to.equal(1);
  });

  it('computes the normwise relative error and the cosine', () => {
    const want = f([3, 4]);
    expect(normwiseRelError(f([3, 4]), want)).to.equal(0);
    expect(normwiseRelError(f([3, 5]), want)).to.be.closeTo(1 / 5, 1e-15);
    expect(cosineSimilarity(f([6, 8]), want)).to.be.closeTo(1, 1e-15);
    expect(cosineSimilarity(f([-4, 3]), want)).to.be.closeTo(0, 1e-15);
    expect(cosineSimilarity(f([-3, -4]), want)).to.be.closeTo(-1, 1e-15);
    // Scaled sums: neither huge nor tiny values break the norms.
    expect(normwiseRelError(f([3e200, 5e200]), f([3e200, 4e200]))).to.be.closeTo(1 / 5, 1e-15);
    expect(normwiseRelError(f([3e-200, 5e-200]), f([3e-200, 4e-200]))).to.be.closeTo(1 / 5, 1e-15);
    expect(cosineSimilarity(f([1e300, 1e300]), f([1e300, 1e300]))).to.be.closeTo(1, 1e-15);
  });

  it('handles all-zero vectors', () => {
    expect(normwiseRelError(f([0, 0]), f([0, 0]))).to.equal(0);
    expect(normwiseRelError(f([1, 0]), f([0, 0]))).to.equal(Infinity);
    expect(cosineSimilarity(f([0, 0]), f([0, 0]))).to.equal(1);
    expect(cosineSimilarity(f([1, 0]), f([0, 0]))).to.equal(0);
  });

  it('counts matching NaN and infinity positions as equal', () => {
    const got = f([NaN, Infinity, -Infinity, 1, -0]);
    const want = f([NaN, Infinity, -Infinity, 1, 0]);
    const m = measure('f32', got, want);
    expect(m).to.deep.equal({ maxAbs: 0, maxRel: 0, normwiseRel: 0, cosine: 1, maxUlps: 0 });
  });

  it('makes a one-sided NaN or infinity Infinity (cosine NaN)', () => {
    for (const [g, w] of [[NaN, 1], [1, NaN], [Infinity, 65504], [-Infinity, Infinity], [Infinity, NaN]] as const) {
      const m = measure('f16', f([1, g]), f([1, w]));
      expect(m.maxAbs, `${g} vs ${w}`).to.equal(Infinity);
      expect(m.maxRel).to.equal(Infinity);
      expect(m.normwiseRel).to.equal(Infinity);
      expect(m.maxUlps).to.equal(Infinity);
      expect(m.cosine).to.be.NaN;
    }
  });

  it('measures ulps in the dtype', () => {
    expect(maxUlpError('f32', f([1 + 2 ** -22, 2]), f([1, 2]))).to.equal(2);
    expect(maxUlpError('f16', f([1 + 2 ** -10]), f([1]))).to.equal(1);
    expect(maxUlpError('bf16', f([1 + 2 ** -10]), f([1]))).to.equal(0); // 1 + 2^-10 rounds to 1 in bf16
  });

  it('refuses inputs of different lengths', () => {
    expect(() => maxAbsError(f([1]), f([1, 2]))).to.throw(RangeError);
  });
});
