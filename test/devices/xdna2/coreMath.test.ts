import { expect } from 'chai';
import { CORE_MATH as M, coreAdd, coreSub, makeCoreMath, XDNA2_PRIMS } from '../../../src/devices/xdna2/coreMath.js';
import { ERF_SATURATE, EXP_CLAMP, TANH_SATURATE } from '../../../src/devices/xdna2/coreFunctions.js';
import { F32_MAX, F32_MIN_NORMAL, fromBits } from '../../../src/devices/xdna2/f32.js';
import { binaryKernel, gatherKernel, rowMaxKernel, rowSumKernel, unaryKernel } from '../../../src/devices/xdna2/kernels.js';
import { rng, randomF32 } from '../../../src/devices/xdna2/contractCases.js';
import { bitsOf, f32Bytes, f32Of, u32Bytes, u32Of } from './helpers.js';

const EPS = 2 ** -23;

describe('xdna2 core math: the adder rounds toward zero', () => {
  it('truncates where round-to-nearest-even rounds up (the directed rounding is observable)', () => {
    const b = 3 * 2 ** -25; // 0.75 of a unit of 1
    expect(Math.fround(1 + b), 'RNE').to.equal(1 + EPS);
    expect(coreAdd(1, b)).to.equal(1);
    expect(coreAdd(-1, -b)).to.equal(-1);
    // A tie: RNE goes to even (1), and so does truncation; just above the tie RNE goes up, truncation not.
    expect(coreAdd(1 + EPS, 2 ** -24)).to.equal(1 + EPS);
    expect(Math.fround((1 + EPS) + 2 ** -24), 'RNE').to.equal(1 + 2 * EPS);
  });

  it('truncates the exact sum even when the f64 sum of the operands rounds (operands far apart)', () => {
    // 2^100 - 2^-100 is just below 2^100: f64 rounds it back to 2^100, truncation must not.
    expect(coreAdd(2 ** 100, -(2 ** -100))).to.equal(fromBits(bitsOf(2 ** 100) - 1));
    expect(coreAdd(2 ** 100, 2 ** -100)).to.equal(2 ** 100);
  });

  it('is exact on a cancellation that leaves a small result, and follows IEEE for zeros', () => {
    expect(coreSub(1.5, 1.25)).to.equal(0.25);
    expect(coreAdd(fromBits(bitsOf(1) + 1), -1)).to.equal(EPS);
    expect(coreSub(2 * F32_MIN_NORMAL, 1.5 * F32_MIN_NORMAL)).to.equal(0.5 * F32_MIN_NORMAL);
    expect(Object.is(coreAdd(3, -3), 0)).to.equal(true);
    expect(Object.is(coreAdd(-0, -0), -0)).to.equal(true);
    const r = rng(7);
    for (let i = 0; i < 20000; i++) {
      const a = randomF32(r, -30, 30);
      const b = Math.fround(-a * (0.5 + r()));
      const exact = a + b; // |a + b| <= min(|a|, |b|): exact in f64
      if (Math.abs(exact) <= Math.min(Math.abs(a), Math.abs(b))) expect(coreAdd(a, b)).to.equal(exact);
    }
  });

  it('stays within 2 x 2^-23 of the larger operand, and saturates at the largest f32', () => {
    const r = rng(3);
    for (let i = 0; i < 50000; i++) {
      const a = randomF32(r, -40, 40);
      const b = randomF32(r, -40, 40);
      expect(Math.abs(coreAdd(a, b) - (a + b))).to.be.at.most(2 * EPS * Math.max(Math.abs(a), Math.abs(b)));
    }
    expect(coreAdd(F32_MAX, F32_MAX)).to.equal(F32_MAX);
    expect(coreAdd(Infinity, 1)).to.equal(Infinity);
    expect(coreAdd(Infinity, -Infinity)).to.be.NaN;
  });
});

describe('xdna2 core math: IEEE mul, div, recip; compares', () => {
  it('multiplies and divides bit for bit as IEEE f32', () => {
    const r = rng(11);
    const f = new Float32Array(1);
    for (let i = 0; i < 50000; i++) {
      const a = randomF32(r, -60, 60);
      const b = randomF32(r, -60, 60);
      f[0] = a * b;
      expect(M.mul(a, b)).to.equal(f[0]);
      f[0] = a / b;
      expect(M.div(a, b)).to.equal(f[0]);
    }
    expect(M.recip(3)).to.equal(Math.fround(1 / 3));
    expect(M.div(1, 0)).to.equal(Infinity);
  });

  it('max is a compare and select: +0 over -0, the larger of neighbours', () => {
    expect(Object.is(M.max(-0, 0), 0)).to.equal(true);
    expect(Object.is(M.max(0, -0), 0)).to.equal(true);
    expect(M.max(-F32_MAX, -Infinity)).to.equal(-F32_MAX);
    expect(M.max(1, fromBits(bitsOf(1) + 1))).to.equal(fromBits(bitsOf(1) + 1));
    expect(M.ge(-0, 0)).to.equal(true);
    expect(M.ge(NaN, 1)).to.equal(false);
  });
});

describe('xdna2 core math: software routines', () => {
  it('exp clamps its argument to +-88: larger arguments saturate, never infinity', () => {
    const top = M.exp(EXP_CLAMP);
    expect(top).to.be.closeTo(Math.exp(88), Math.exp(88) * 1e-5);
    expect(M.exp(88.5)).to.equal(top);
    expect(M.exp(1000)).to.equal(top);
    expect(M.exp(Infinity)).to.equal(top);
    expect(M.exp(-1000)).to.equal(M.exp(-88));
    expect(M.exp(-88)).to.be.greaterThan(0);
    expect(M.exp(NaN)).to.be.NaN;
    for (const x of [-87, -10, -1, 0, 1e-7, 1, 10, 87.9]) expect(Math.abs(M.exp(x) - Math.exp(x))).to.be.at.most(2e-6 + 1e-5 * Math.exp(x));
  });

  it('log is within 2e-6 + 1e-5 relative on positive normals, and -inf / NaN outside', () => {
    for (const x of [F32_MIN_NORMAL, 1e-30, 0.5, Math.fround(Math.SQRT1_2), 1, fromBits(bitsOf(1) + 1), 2, 1e30, F32_MAX]) {
      expect(Math.abs(M.log(x) - Math.log(x))).to.be.at.most(2e-6 + 1e-5 * Math.abs(Math.log(x)));
    }
    expect(M.log(0)).to.equal(-Infinity);
    expect(M.log(-1)).to.be.NaN;
  });

  it('tanh and erf saturate to exactly +-1 and keep the sign of zero', () => {
    for (const x of [TANH_SATURATE, 20, F32_MAX, Infinity]) {
      expect(M.tanh(x)).to.equal(1);
      expect(M.tanh(-x)).to.equal(-1);
    }
    for (const x of [ERF_SATURATE, 6, F32_MAX, Infinity]) {
      expect(M.erf(x)).to.equal(1);
      expect(M.erf(-x)).to.equal(-1);
    }
    expect(Object.is(M.tanh(-0), -0)).to.equal(true);
    expect(Object.is(M.erf(-0), -0)).to.equal(true);
  });

  it('sqrt, a bit-halving estimate and four Newton steps, is within 4e-7 relative on positive normals', () => {
    const r = rng(5);
    let worst = 0;
    for (let i = 0; i < 100000; i++) {
      const x = randomF32(r, -126, 127, true);
      worst = Math.max(worst, Math.abs(M.sqrt(x) - Math.sqrt(x)) / Math.sqrt(x));
    }
    for (const x of [F32_MIN_NORMAL, F32_MAX, 1, 2, 4, 0.25, fromBits(bitsOf(1) - 1)]) {
      worst = Math.max(worst, Math.abs(M.sqrt(x) - Math.sqrt(x)) / Math.sqrt(x));
    }
    expect(worst).to.be.at.most(4e-7);
    expect(M.sqrt(4)).to.equal(2);
    expect(Object.is(M.sqrt(-0), -0)).to.equal(true);
    expect(M.sqrt(-1)).to.be.NaN;
  });

  it('a broken adder reaches every routine built on it', () => {
    const broken = makeCoreMath({ ...XDNA2_PRIMS, add: (a, b) => XDNA2_PRIMS.add(a, b) * 2 });
    expect(broken.exp(1)).to.not.be.closeTo(Math.E, 1e-3);
  });
});

describe('xdna2 core kernels: patterns the core only moves survive', () => {
  const payloadNaN = 0x7fc12345;
  const negNaN = 0xffa00001;

  it('gather copies 32-bit patterns: NaN payloads and -0 bit for bit', () => {
    const src = u32Bytes([payloadNaN, 0x80000000, bitsOf(1.5), negNaN]);
    const out = gatherKernel({ dtype: 'f32', shape: [4], bytes: src }, u32Bytes([3, 0, 1, 2, 1]), 0);
    expect(u32Of(out)).to.deep.equal([negNaN, payloadNaN, 0x80000000, bitsOf(1.5), 0x80000000]);
  });

  it('gather does not check an index: one off the axis reads the wrapped address, never faults', () => {
    const src = f32Bytes([10, 11, 12, 13, 20, 21, 22, 23]); // [2, 4]
    const out = gatherKernel({ dtype: 'f32', shape: [2, 4], bytes: src }, u32Bytes([4, -1 >>> 0]), 1);
    // Row 0 index 4 is flat 4 (row 1's first); row 0 index -1 wraps to flat 7; row 1 index 4 wraps to 0.
    expect(f32Of(out)).to.deep.equal([20, 23, 10, 13]);
    expect(f32Of(gatherKernel({ dtype: 'f32', shape: [3], bytes: f32Bytes([1, 2, 3]) }, u32Bytes([1000000]), 0))).to.have.length(1);
  });

  it('neg flips the sign bit only; max and the row max select whole patterns', () => {
    expect(u32Of(unaryKernel('neg', M, u32Bytes([payloadNaN, 0, 0x80000000])))).to.deep.equal([(payloadNaN | 0x80000000) >>> 0, 0x80000000, 0]);
    expect(u32Of(binaryKernel('max', M, u32Bytes([payloadNaN, 0x80000000]), u32Bytes([bitsOf(F32_MAX), 0]), 2))).to.deep.equal([payloadNaN, 0]);
    expect(u32Of(rowMaxKernel(u32Bytes([0x80000000, 0x80000000, bitsOf(-1)]), [1, 3]))).to.deep.equal([0x80000000]);
  });

  it('a row sum adds in order through the adder (4096 columns within 2 x cols x 2^-23 of the magnitudes)', () => {
    const r = rng(9);
    const row = Array.from({ length: 4096 }, () => randomF32(r, -10, 10));
    const got = f32Of(rowSumKernel(M, f32Bytes(row), [1, 4096]))[0]!;
    const f = Float32Array.from(row);
    let exact = 0;
    let mag = 0;
    for (const v of f) { exact += v; mag += Math.abs(v); }
    expect(Math.abs(got - exact)).to.be.at.most(2 * 4096 * EPS * mag);
    // In order, truncating: 1 + 2^-24 + 2^-24 is 1 (each partial truncates), not 1 + 2^-23.
    expect(f32Of(rowSumKernel(M, f32Bytes([1, 2 ** -24, 2 ** -24]), [1, 3]))).to.deep.equal([1]);
    expect(u32Of(rowSumKernel(M, f32Bytes([-0, -0]), [1, 2]))).to.deep.equal([0x80000000]);
  });
});
