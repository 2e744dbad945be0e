import { expect } from 'chai';
import { bf16FromBits, f16FromBits } from '../../src/numerics/float16.js';
import { minNormal, ulpDistance, ulpOf } from '../../src/numerics/ulp.js';

const F32_MIN_SUB = 2 ** -149;

describe('numerics/ulp', () => {
  it('counts representable values between two numbers in each dtype', () => {
    expect(ulpDistance('f32', 1, 1 + 2 ** -23)).to.equal(1);
    expect(ulpDistance('f32', 1, 1 + 2 ** -22)).to.equal(2);
    expect(ulpDistance('f16', 1, 1 + 2 ** -10)).to.equal(1);
    expect(ulpDistance('bf16', 1, 1 + 2 ** -7)).to.equal(1);
    expect(ulpDistance('bf16', 1, 2)).to.equal(128);
    expect(ulpDistance('f64', 1, 1 + 2 ** -52)).to.equal(1);
    expect(ulpDistance('f64', 1, 2)).to.equal(2 ** 52);
    // Across a power of two the step halves below it.
    expect(ulpDistance('f32', 1 - 2 ** -24, 1 + 2 ** -23)).to.equal(2);
  });

  it('treats +0 and -0 as the same point and counts across zero', () => {
    expect(ulpDistance('f32', 0, -0)).to.equal(0);
    expect(ulpDistance('f64', 0, -0)).to.equal(0);
    expect(ulpDistance('f16', -0, 0)).to.equal(0);
    expect(ulpDistance('f32', -F32_MIN_SUB, F32_MIN_SUB)).to.equal(2);
    expect(ulpDistance('f16', -(2 ** -24), 2 ** -24)).to.equal(2);
    expect(ulpDistance('f64', -5e-324, 5e-324)).to.equal(2);
  });

  it('agrees with the pattern order over every f16 and bf16 pattern', () => {
    // Consecutive non-NaN patterns of the same sign are exactly 1 ulp apart, subnormals and infinity included.
    for (const [dtype, fromBits] of [['f16', f16FromBits], ['bf16', bf16FromBits]] as const) {
      let bad = 0;
      for (let p = 0; p < 0x7fff; p++) {
        const a = fromBits(p);
        const b = fromBits(p + 1);
        if (Number.isNaN(a) || Number.isNaN(b)) continue;
        if (ulpDistance(dtype, a, b) !== 1 || ulpDistance(dtype, -a, -b) !== 1) bad++;
      }
      expect(bad, dtype).to.equal(0);
      expect(ulpDistance(dtype, fromBits(0x0001), fromBits(0x7bff))).to.equal(0x7bfe);
    }
  });

  it('handles NaN and infinities', () => {
    expect(ulpDistance('f32', NaN, NaN)).to.equal(0);
    expect(ulpDistance('f32', NaN, 1)).to.equal(Infinity);
    expect(ulpDistance('f16', 0, NaN)).to.equal(Infinity);
    expect(ulpDistance('f16', 65504, Infinity)).to.equal(1);
    expect(ulpDistance('f64', Infinity, Infinity)).to.equal(0);
  });

  it('rounds operands that are not values of the dtype', () => {
    expect(ulpDistance('f16', 1.0001, 1)).to.equal(0); // 1.0001 rounds to 1 in f16
    expect(ulpDistance('f32', 70000, 65504)).to.equal(ulpDistance('f32', Math.fround(70000), 65504));
    expect(ulpDistance('f16', 70000, 65504)).to.equal(1); // 70000 overflows f16
  });

  it('is |a - b| for integer dtypes', () => {
    expect(ulpDistance('i32', 3, -4)).to.equal(7);
    expect(ulpDistance('bool', 0, 1)).to.equal(1);
  });

  it('gives the spacing at x', () => {
    expect(ulpOf('f32', 1)).to.equal(2 ** -23);
    expect(ulpOf('f32', 1.5)).to.equal(2 ** -23);
    expect(ulpOf('f32', 0.99)).to.equal(2 ** -24);
    expect(ulpOf('f32', -3)).to.equal(2 ** -22);
    expect(ulpOf('f32', 0)).to.equal(F32_MIN_SUB);
    expect(ulpOf('f32', 1e-40)).to.equal(F32_MIN_SUB);
    expect(ulpOf('f16', 1)).to.equal(2 ** -10);
    expect(ulpOf('f16', 65504)).to.equal(32);
    expect(ulpOf('f16', 1e5)).to.equal(32); // beyond the range: the top binade's step
    expect(ulpOf('f16', 2 ** -20)).to.equal(2 ** -24);
    expect(ulpOf('bf16', 1)).to.equal(2 ** -7);
    expect(ulpOf('f64', 1)).to.equal(2 ** -52);
    expect(ulpOf('f64', 5e-324)).to.equal(5e-324);
    expect(ulpOf('f32', Infinity)).to.be.NaN;
    expect(ulpOf('f32', NaN)).to.be.NaN;
    expect(ulpOf('i32', 12345)).to.equal(1);
    expect(minNormal('f16')).to.equal(2 ** -14);
    expect(minNormal('f32')).to.equal(2 ** -126);
  });
});
