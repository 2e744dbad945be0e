/**
 * The core's software routines (it has no transcendental unit): range reduction and polynomials, every
 * step one f32 operation of the core (its round-toward-zero adder, its IEEE multiplier and divider),
 * so their error is the core's and not JavaScript's f64. Coefficients are the Cephes single-precision
 * ones (expf, logf, tanhf), Abramowitz and Stegun 7.1.26 for erf away from zero, and erf's Taylor
 * series near it; constants are f32 values (Math.fround), as the core's literal pool holds them.
 *
 * Special inputs, decided by compares before any arithmetic (as the core's code would branch):
 * exp clamps its argument to [-88, 88] (so exp(1000) is exp(88) ~ 1.65e38, never infinity; a NaN passes
 * the clamp and gives NaN); log of 0 is -inf, of a negative or NaN is NaN, of +inf is +inf; tanh and
 * erf return exactly +-1 from |x| >= 9 and |x| >= 4 (where the f32 result is 1 to within one unit),
 * keep +-0 and give NaN for NaN; sqrt of +-0 is itself, of a negative or NaN is NaN, of +inf is +inf.
 */
import { bitsOf, fromBits, pow2 } from './f32.js';

/** The operations every other core routine is built from; swap one to model a different (or broken) core. */
export interface CorePrims {
  /** The core's adder on two f32 values. */
  readonly add: (a: number, b: number) => number;
  /** The core's multiplier on two f32 values. */
  readonly mul: (a: number, b: number) => number;
  /** The core's divider on two f32 values. */
  readonly div: (a: number, b: number) => number;
}

const f = Math.fround;

/** The routines built from the primitives. */
export interface CoreFunctions {
  readonly exp: (x: number) => number;
  readonly log: (x: number) => number;
  readonly tanh: (x: number) => number;
  readonly erf: (x: number) => number;
  readonly sqrt: (x: number) => number;
}

/** The core clamps exp's argument to +-EXP_CLAMP, so larger arguments saturate. */
export const EXP_CLAMP = 88;
/** |x| from which tanh is exactly +-1. */
export const TANH_SATURATE = 9;
/** |x| from which erf is exactly +-1. */
export const ERF_SATURATE = 4;
/** The bit-halving estimate's constant: (bits >> 1) + this approximates sqrt within 3.5 percent. */
const SQRT_MAGIC = 0x1fbd1df5;
/** Newton steps after the estimate. */
const SQRT_NEWTON_STEPS = 4;

const LOG2E = f(1.4426950408889634);
// ln 2 split (Cody and Waite): n * LN2_HI is exact for |n| < 2^9, so x - n ln 2 loses nothing there.
const LN2_HI = f(0.693359375);
const LN2_LO = f(-2.12194440e-4);
const EXP_P = [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1].map(f);
const LOG_P = [
  7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
  -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
].map(f);
const SQRT_HALF = f(Math.SQRT1_2);
const TANH_P = [-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1].map(f);
// Abramowitz and Stegun 7.1.26: erf x = 1 - t (a1 + t (a2 + ...)) e^(-x^2), t = 1 / (1 + p x); |error| <= 1.5e-7.
const AS_P = f(0.3275911);
const AS_A = [1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592].map(f);
// erf x = (2 / sqrt pi) sum (-1)^n x^(2n+1) / (n! (2n+1)): the series' coefficients, highest first.
const ERF_T = [1 / (720 * 13), -1 / (120 * 11), 1 / (24 * 9), -1 / (6 * 7), 1 / (2 * 5), -1 / 3, 1]
  .map((c) => f(c * 1.1283791670955126));
const ERF_SERIES_BELOW = 0.5;

/** The core's routines over the given primitives. */
export function makeFunctions(p: CorePrims): CoreFunctions {
  const { add, mul, div } = p;
  const sub = (a: number, b: number) => add(a, -b);
  // Horner's scheme, one core multiply and one core add per coefficient.
  const horner = (cs: readonly number[], x: number): number => {
    let y = cs[0]!;
    for (let i = 1; i < cs.length; i++) y = add(mul(y, x), cs[i]!);
    return y;
  };

  const exp = (x0: number): number => {
    // Compare and select, so NaN passes through both.
    const x = x0 > EXP_CLAMP ? EXP_CLAMP : x0 < -EXP_CLAMP ? -EXP_CLAMP : x0;
    if (Number.isNaN(x)) return NaN;
    const n = Math.round(mul(x, LOG2E));
    const r = sub(sub(x, mul(n, LN2_HI)), mul(n, LN2_LO));
    const z = mul(r, r);
    const y = add(add(mul(horner(EXP_P, r), z), r), 1);
    // 2^n for n in [-127, 127] is an f32, so the scaling is one IEEE multiply.
    return mul(y, pow2(n));
  };

  const log = (x: number): number => {
    if (Number.isNaN(x) || x < 0) return NaN;
    if (x === 0) return -Infinity;
    if (x === Infinity) return x;
    let v = x;
    let e = 0;
    // A subnormal (outside the domain) is normalized first, so its exponent field means something.
    if (v < 2 ** -126) { v = mul(v, pow2(24)); e = -24; }
    const b = bitsOf(v);
    e += ((b >>> 23) & 0xff) - 126;
    let m = fromBits((b & 0x7fffff) | 0x3f000000); // [0.5, 1)
    if (m < SQRT_HALF) { e -= 1; m = sub(add(m, m), 1); } else m = sub(m, 1);
    const z = mul(m, m);
    let y = mul(mul(horner(LOG_P, m), m), z);
    y = add(y, mul(e, LN2_LO));
    y = add(y, mul(-0.5, z));
    return add(add(m, y), mul(e, LN2_HI));
  };

  const tanh = (x: number): number => {
    if (x === 0 || Number.isNaN(x)) return x;
    const a = Math.abs(x);
    if (a >= TANH_SATURATE) return x > 0 ? 1 : -1;
    if (a > 0.625) {
      const s = exp(add(a, a));
      const t = sub(1, div(2, add(s, 1)));
      return x > 0 ? t : -t;
    }
    const s = mul(x, x);
    return add(mul(mul(horner(TANH_P, s), s), x), x);
  };

  const erf = (x: number): number => {
    if (x === 0 || Number.isNaN(x)) return x;
    const a = Math.abs(x);
    if (a >= ERF_SATURATE) return x > 0 ? 1 : -1;
    if (a < ERF_SERIES_BELOW) return mul(horner(ERF_T, mul(x, x)), x);
    const t = div(1, add(1, mul(AS_P, a)));
    const tail = mul(mul(horner(AS_A, t), t), exp(-mul(a, a)));
    const r = sub(1, tail);
    return x > 0 ? r : -r;
  };

  const sqrt = (x: number): number => {
    if (x === 0) return x;
    if (!(x > 0)) return NaN;
    if (x === Infinity) return x;
    // The bit-halving estimate: halving the pattern halves the exponent (and roughly the mantissa's
    // logarithm); the constant re-biases the exponent and centres the error.
    let y = fromBits((bitsOf(x) >>> 1) + SQRT_MAGIC);
    for (let i = 0; i < SQRT_NEWTON_STEPS; i++) y = mul(0.5, add(y, div(x, y)));
    return y;
  };

  return { exp, log, tanh, erf, sqrt };
}
