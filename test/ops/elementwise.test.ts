import { expect } from 'chai';
import { IntegerDivideByZero } from '../../src/errors/index.js';
import { erf } from '../../src/numerics/erf.js';
import { F32_MAX, INT_MAX, INT_MIN, ev, refuses, run1, s, same, t, ty } from './helpers.js';

const F16_MAX = 65504;
const BF16_MAX = (2 - 2 ** -7) * 2 ** 127;

describe('ops/elementwise: binary arithmetic on floats', () => {
  it('keeps signed zeros as IEEE addition, subtraction and multiplication do', () => {
    same(ev('add', 'f32', [-0, -0]), -0);
    same(ev('add', 'f32', [-0, 0]), 0);
    same(ev('sub', 'f32', [0, 0]), 0);
    same(ev('sub', 'f32', [-0, 0]), -0);
    same(ev('mul', 'f16', [-1, 0]), -0);
    same(ev('div', 'bf16', [0, -5]), -0);
  });

  it('follows IEEE for infinities and NaN', () => {
    same(ev('add', 'f32', [Infinity, -Infinity]), NaN);
    same(ev('mul', 'f32', [0, Infinity]), NaN);
    same(ev('div', 'f32', [1, 0]), Infinity);
    same(ev('div', 'f32', [1, -0]), -Infinity);
    same(ev('div', 'f16', [0, 0]), NaN);
    same(ev('sub', 'bf16', [Infinity, 1]), Infinity);
  });

  it('overflows to infinity only past the rounding boundary (f32, f16, bf16)', () => {
    // f32: the largest finite has an odd significand, so MAX + half an ulp (2^103) ties away to 2^128.
    same(ev('add', 'f32', [F32_MAX, 2 ** 102]), F32_MAX);
    same(ev('add', 'f32', [F32_MAX, 2 ** 103]), Infinity);
    same(ev('add', 'f32', [-F32_MAX, -F32_MAX]), -Infinity);
    // f16: ulp at 65504 is 32. +8 rounds back; +16 is the tie 65520, whose even neighbour is 65536 = inf.
    same(ev('add', 'f16', [F16_MAX, 8]), F16_MAX);
    same(ev('add', 'f16', [F16_MAX, 16]), Infinity);
    same(ev('add', 'f16', [F16_MAX, 32]), Infinity);
    same(ev('mul', 'f16', [256, 256]), Infinity);
    // bf16: ulp at the largest finite is 2^120.
    same(ev('add', 'bf16', [BF16_MAX, 2 ** 118]), BF16_MAX);
    same(ev('add', 'bf16', [BF16_MAX, 2 ** 119]), Infinity);
  });

  it('rounds subnormal results to nearest even (f32, f16, bf16)', () => {
    same(ev('mul', 'f32', [2 ** -149, 0.5]), 0); // a tie between 0 and the least subnormal: 0 is even
    same(ev('mul', 'f32', [-(2 ** -149), 0.5]), -0);
    same(ev('mul', 'f32', [2 ** -149, 0.75]), 2 ** -149);
    same(ev('mul', 'f32', [3 * 2 ** -149, 0.5]), 2 * 2 ** -149); // 1.5 quanta: tie, 2 is even
    same(ev('mul', 'f16', [2 ** -14, 0.5]), 2 ** -15); // normal to subnormal, exact
    same(ev('mul', 'f16', [2 ** -24, 0.5]), 0);
    same(ev('mul', 'f16', [-(2 ** -24), 0.5]), -0);
    same(ev('mul', 'f16', [3 * 2 ** -24, 0.5]), 2 * 2 ** -24);
    same(ev('add', 'f16', [2 ** -24, 2 ** -24]), 2 ** -23);
    same(ev('mul', 'bf16', [2 ** -133, 0.5]), 0);
    same(ev('mul', 'bf16', [3 * 2 ** -133, 0.5]), 2 * 2 ** -133);
    same(ev('sub', 'bf16', [2 ** -126, 2 ** -133]), 2 ** -126 - 2 ** -133);
  });

  it('rounds an exact tie once, to even', () => {
    // f16 has 10 fraction bits: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
    same(ev('add', 'f16', [1, 2 ** -11]), 1);
    same(ev('add', 'f16', [1 + 2 ** -10, 2 ** -11]), 1 + 2 ** -9);
    same(ev('add', 'bf16', [1, 2 ** -8]), 1);
    same(ev('add', 'bf16', [1, 3 * 2 ** -8]), 1 + 2 ** -6);
    same(ev('add', 'f32', [1, 2 ** -24]), 1);
    same(ev('add', 'f32', [1 + 2 ** -23, 2 ** -24]), 1 + 2 ** -22);
    // 1/3 in f16: 1/3 = 0.0101010101010...b; 11 significant bits from 2^-2 round up to 1365/4096.
    same(ev('div', 'f16', [1, 3]), 1365 / 4096);
  });

  it('max and min propagate NaN and order -0 below +0', () => {
    for (const d of ['f32', 'f16', 'bf16'] as const) {
      same(ev('max', d, [-0, 0]), 0);
      same(ev('max', d, [0, -0]), 0);
      same(ev('min', d, [-0, 0]), -0);
      same(ev('min', d, [0, -0]), -0);
      same(ev('max', d, [NaN, 1]), NaN);
      same(ev('max', d, [1, NaN]), NaN);
      same(ev('min', d, [-Infinity, NaN]), NaN);
      same(ev('max', d, [-Infinity, 3]), 3);
    }
  });

  it('broadcasts a scalar operand against either side', () => {
    same(run1('sub', [t('f32', [3], [1, 2, 3]), s('f32', 1)]).data, [0, 1, 2]);
    same(run1('sub', [s('f32', 10), t('f32', [3], [1, 2, 3])]).data, [9, 8, 7]);
    same(run1('div', [t('f32', [2, 2], [1, 2, 4, 8]), s('f32', 2)]).data, [0.5, 1, 2, 4]);
  });

  it('fp64 mode skips the final rounding', () => {
    same(ev('add', 'f16', [1, 2 ** -11], true), 1 + 2 ** -11);
    same(ev('add', 'f16', [F16_MAX, 32], true), F16_MAX + 32);
    same(ev('div', 'f32', [1, 3], true), 1 / 3);
    expect(ev('div', 'f32', [1, 3])).to.not.equal(1 / 3);
  });
});

describe('ops/elementwise: i32', () => {
  it('add, sub and neg wrap around', () => {
    same(ev('add', 'i32', [INT_MAX, 1]), INT_MIN);
    same(ev('add', 'i32', [INT_MIN, INT_MIN]), 0);
    same(ev('sub', 'i32', [INT_MIN, 1]), INT_MAX);
    same(ev('neg', 'i32', [INT_MIN]), INT_MIN);
    same(ev('abs', 'i32', [INT_MIN]), INT_MIN);
    same(ev('abs', 'i32', [-7]), 7);
    same(ev('neg', 'i32', [0]), 0); // an integer has no -0
  });

  it('mul wraps exactly where an f64 product would lose low bits', () => {
    same(ev('mul', 'i32', [65536, 65536]), 0);
    same(ev('mul', 'i32', [INT_MAX, INT_MAX]), 1); // (2^31 - 1)^2 = 2^62 - 2^32 + 1
    same(ev('mul', 'i32', [INT_MIN, -1]), INT_MIN);
    // Checked against BigInt two's complement arithmetic, an independent exact computation.
    const pairs = [[123456789, 987654321], [-2147483647, 2147483646], [99999989, -77777791], [46341, 46341]] as const;
    for (const [a, b] of pairs) {
      same(ev('mul', 'i32', [a, b]), Number(BigInt.asIntN(32, BigInt(a) * BigInt(b))));
    }
    // The f64 product of the first pair is not exact, so an f64-then-wrap kernel would disagree.
    expect((123456789 * 987654321) | 0).to.not.equal(Number(BigInt.asIntN(32, 123456789n * 987654321n)));
  });

  it('div truncates toward zero and wraps INT_MIN / -1', () => {
    same(ev('div', 'i32', [7, 2]), 3);
    same(ev('div', 'i32', [7, -2]), -3);
    same(ev('div', 'i32', [-7, 2]), -3);
    same(ev('div', 'i32', [0, -5]), 0);
    same(ev('div', 'i32', [-1, 3]), 0);
    same(ev('div', 'i32', [INT_MIN, -1]), INT_MIN);
    same(ev('div', 'i32', [INT_MAX, 1]), INT_MAX);
    same(ev('div', 'i32', [INT_MIN, 7]), -306783378);
  });

  it('div by zero throws IntegerDivideByZero naming the equation', () => {
    try {
      run1('div', [t('i32', [2], [1, 2]), t('i32', [2], [1, 0])], {}, { eqn: 5 });
      expect.fail('no error');
    } catch (e) {
      expect(e).to.be.instanceOf(IntegerDivideByZero);
      const err = e as IntegerDivideByZero;
      expect(err.code).to.equal('IntegerDivideByZero');
      expect(err.eqn).to.equal(5);
      expect(err.toWire()).to.include({ code: 'IntegerDivideByZero', eqn: 5 });
    }
  });

  it('max, min and ge compare integers', () => {
    same(ev('max', 'i32', [INT_MIN, -1]), -1);
    same(ev('min', 'i32', [INT_MAX, -1]), -1);
    same(run1('ge', [t('i32', [3], [1, 2, 3]), s('i32', 2)]).data, [0, 1, 1]);
  });
});

describe('ops/elementwise: ge', () => {
  it('yields bool, false for NaN, and -0 >= +0', () => {
    const r = run1('ge', [t('f32', [5], [1, NaN, -0, 1, -Infinity]), t('f32', [5], [1, 1, 0, NaN, -Infinity])]);
    expect(r.dtype).to.equal('bool');
    same(r.data, [1, 0, 1, 0, 1]);
  });
});

describe('ops/elementwise: unary', () => {
  it('neg, abs, recip at zeros and infinities', () => {
    same(ev('neg', 'f32', [0]), -0);
    same(ev('neg', 'f16', [-0]), 0);
    same(ev('abs', 'bf16', [-0]), 0);
    same(ev('abs', 'f32', [-Infinity]), Infinity);
    same(ev('recip', 'f32', [-0]), -Infinity);
    same(ev('recip', 'f16', [Infinity]), 0);
    same(ev('recip', 'f16', [-Infinity]), -0);
    same(ev('recip', 'f16', [2 ** -15]), 32768); // 1 / (an f16 subnormal)
    same(ev('recip', 'f16', [2 ** -16]), Infinity); // 65536 is past f16's range
  });

  it('sqrt and rsqrt', () => {
    same(ev('sqrt', 'f32', [-0]), -0);
    same(ev('sqrt', 'f32', [-1]), NaN);
    same(ev('sqrt', 'f32', [Infinity]), Infinity);
    // sqrt(2) = 1.41421356...; times 1024 is 1448.15, so f16 gives 1448/1024.
    same(ev('sqrt', 'f16', [2]), 1448 / 1024);
    same(ev('rsqrt', 'f32', [4]), 0.5);
    same(ev('rsqrt', 'f32', [0]), Infinity);
    same(ev('rsqrt', 'f32', [-0]), -Infinity);
    same(ev('rsqrt', 'f32', [Infinity]), 0);
    same(ev('rsqrt', 'bf16', [-4]), NaN);
  });

  it('exp and log at the edges', () => {
    same(ev('exp', 'f32', [-Infinity]), 0);
    same(ev('exp', 'f32', [Infinity]), Infinity);
    same(ev('exp', 'f32', [0]), 1);
    same(ev('exp', 'f32', [-0]), 1);
    same(ev('exp', 'f32', [89]), Infinity); // e^89 = 4.5e38 > f32 max
    same(ev('exp', 'f16', [12]), Infinity); // e^12 = 162754.8
    // e^11 = 59874.14; f16 spacing there is 32, and 59874.14 / 32 = 1871.07.
    same(ev('exp', 'f16', [11]), 1871 * 32);
    same(ev('log', 'f32', [0]), -Infinity);
    same(ev('log', 'f32', [-0]), -Infinity);
    same(ev('log', 'f32', [-1]), NaN);
    same(ev('log', 'f32', [1]), 0);
    same(ev('log', 'f16', [Infinity]), Infinity);
  });

  it('tanh, sin, cos keep odd symmetry at -0 and saturate', () => {
    same(ev('tanh', 'f32', [-0]), -0);
    same(ev('tanh', 'f32', [20]), 1);
    same(ev('tanh', 'f16', [-Infinity]), -1);
    same(ev('sin', 'f32', [-0]), -0);
    same(ev('sin', 'f32', [Infinity]), NaN);
    same(ev('cos', 'f32', [Infinity]), NaN);
    same(ev('cos', 'bf16', [0]), 1);
    same(ev('sin', 'f16', [NaN]), NaN);
  });

  it('erf uses the numerics erf and rounds once', () => {
    same(ev('erf', 'f32', [0]), 0);
    same(ev('erf', 'f32', [-0]), -0);
    same(ev('erf', 'f32', [Infinity]), 1);
    same(ev('erf', 'f32', [-Infinity]), -1);
    same(ev('erf', 'f32', [NaN]), NaN);
    same(ev('erf', 'f32', [10]), 1);
    // erf(1) = 0.8427007929497148693...; f32 neighbours differ in the 8th digit.
    expect(ev('erf', 'f32', [1])).to.be.closeTo(0.8427007929497149, 6e-8);
    same(ev('erf', 'f32', [1]), Math.fround(erf(1)));
    // f16 of 0.84270079: spacing 2^-11 in [0.5, 1); 0.84270079 * 2048 = 1725.85, so 1726 / 2048.
    same(ev('erf', 'f16', [1]), 1726 / 2048);
  });

  it('logistic is exact in the tails and at the centre', () => {
    same(ev('logistic', 'f32', [0]), 0.5);
    same(ev('logistic', 'f32', [-0]), 0.5);
    same(ev('logistic', 'f32', [Infinity]), 1);
    same(ev('logistic', 'f32', [-Infinity]), 0);
    same(ev('logistic', 'f32', [NaN]), NaN);
    same(ev('logistic', 'f32', [800]), 1);
    same(ev('logistic', 'f32', [-800]), 0);
    // For x = -100, 1 + e^-100 is 1 in f64, so the value is e^-100 = 3.72e-44: an f32 subnormal.
    const v = ev('logistic', 'f32', [-100]);
    same(v, Math.fround(Math.exp(-100)));
    expect(v).to.be.greaterThan(0).and.lessThan(2 ** -126);
    // f16: logistic(-10) = 4.53979e-5 is below the least normal 2^-14, so subnormal with spacing 2^-24:
    // 4.53979e-5 * 2^24 = 761.65, so 762 quanta.
    same(ev('logistic', 'f16', [-10]), 762 * 2 ** -24);
  });
});

describe('ops/elementwise: shape and dtype rules', () => {
  it('refuses mismatched dtypes and shapes at the second operand', () => {
    const e = refuses('add', [ty('f32', [4]), ty('f16', [4])], {}, '/in/1');
    expect(e.reason).to.contain('f16').and.contain('f32');
    refuses('mul', [ty('f32', [4]), ty('f32', [3])], {}, '/in/1');
    refuses('ge', [ty('f32', [2, 2]), ty('f32', [4])], {}, '/in/1');
  });

  it('refuses bool arithmetic and float-only ops on i32', () => {
    refuses('add', [ty('bool', [2]), ty('bool', [2])], {}, '/in/0');
    refuses('ge', [ty('bool', [2]), ty('bool', [2])], {}, '/in/0');
    refuses('neg', [ty('bool', [2])], {}, '/in/0');
    for (const op of ['exp', 'log', 'tanh', 'erf', 'sqrt', 'rsqrt', 'logistic', 'sin', 'cos', 'recip'] as const) {
      const e = refuses(op, [ty('i32', [2])], {}, '/in/0');
      expect(e.reason).to.contain('i32');
      refuses(op, [ty('bool', [2])], {}, '/in/0');
    }
  });

  it('refuses a wrong operand count', () => {
    refuses('add', [ty('f32', [2])], {}, '/in');
    refuses('exp', [ty('f32', [2]), ty('f32', [2])], {}, '/in');
  });
});
