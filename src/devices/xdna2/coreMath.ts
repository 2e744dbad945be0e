/**
 * The XDNA2 core's f32 arithmetic, as the documents describe the hardware (docs "What runs"): the
 * adder rounds toward zero, mul and div are IEEE, and every transcendental is the core's own software
 * routine built from those operations (coreFunctions.ts). Everything is a plain function of numbers
 * that are f32 values; the kernels (kernels.ts) keep the bits.
 *
 * The adder: ROUND TOWARD ZERO (truncation of the exact sum to f32). Why it meets the contract
 * "within 2 x 2^-23 of the larger operand": the truncation error is below one unit of the exact sum S,
 * ulp(S) <= 2^-23 |S| for a normal S, and |S| <= |a| + |b| <= 2 max(|a|, |b|), so
 * |result - S| < 2^-23 |S| <= 2 x 2^-23 max(|a|, |b|). Why a cancellation is exact: when
 * |S| <= min(|a|, |b|), S is a whole multiple of the smaller operand's unit u and |S| < 2^24 u, so S
 * is an f32 and truncating it changes nothing (Sterbenz's lemma is the case b/2 <= -a <= 2b).
 * Where it differs from round-to-nearest-even: 1 + 0.75 x 2^-23 is 1 here, 1 + 2^-23 under RNE.
 * Zeros follow IEEE: x + (-x) is +0, (-0) + (-0) is -0. A finite sum past the largest f32 gives
 * +-F32_MAX (truncation never reaches infinity); inf and NaN operands propagate as IEEE says.
 *
 * mul: Math.fround of the f64 product, which is exact (24 + 24 significant bits < 53, and the exponent
 * range of two f32 fits f64's without underflow), so this is the correctly rounded f32 product.
 * div and recip: Math.fround of the f64 quotient. That rounds twice, but double rounding is innocuous
 * for division when the intermediate format has at least 2p + 2 bits (Figueroa, "When is double
 * rounding innocuous?", 1995): 53 >= 2 x 24 + 2, and the f64 quotient of two f32 is never subnormal
 * (|q| >= 2^-149 / 2^128 = 2^-277), so the result is the correctly rounded f32 quotient, bit for bit.
 */
import { F32_MAX, bitsOf, orderKey, towardZero } from './f32.js';
import type { CoreFunctions, CorePrims } from './coreFunctions.js';
export type { CorePrims } from './coreFunctions.js';
import { makeFunctions } from './coreFunctions.js';


/** The whole core: its primitives and the routines built from them. */
export interface CoreMath extends CorePrims, CoreFunctions {
  readonly sub: (a: number, b: number) => number;
  readonly neg: (a: number) => number;
  readonly recip: (a: number) => number;
  /** a >= b as the comparator answers (false when either is NaN). */
  readonly ge: (a: number, b: number) => boolean;
  /**
   * Compare and select on the integer comparator (f32.ts orderKey): the larger operand, +0 over -0;
   * a NaN with its sign clear wins over everything, one with its sign set loses (outside the domain).
   */
  readonly max: (a: number, b: number) => number;
}

/** The core's adder: the exact sum of two f32, truncated toward zero to f32 (see the file's doc). */
export function coreAdd(a: number, b: number): number {
  const s = a + b;
  // Non-finite operands: IEEE propagation (two f32 never overflow f64, so a finite pair stays finite).
  if (!Number.isFinite(s)) return s;
  if (s === 0) return s;
  // s + e is the exact sum (Knuth's TwoSum is exact for f64 operands), even when a + b needs more than
  // 53 bits (operands 30 or more binades apart).
  const bb = s - a;
  const e = (a - (s - bb)) + (b - bb);
  const r = Math.fround(s);
  if (!Number.isFinite(r)) return s > 0 ? F32_MAX : -F32_MAX;
  // r is within one f32 unit of the exact sum and s - r is exact (Sterbenz), so this has the sign of
  // (exact - r) and is zero only when r is the exact sum.
  const d = (s - r) + e;
  if ((r > 0 && d < 0) || (r < 0 && d > 0)) return towardZero(r);
  return r;
}

/** a - b on the core: the adder with b's sign flipped (a negation is exact). */
export function coreSub(a: number, b: number): number {
  return coreAdd(a, -b);
}

/** The core's multiplier: the correctly rounded (RNE) f32 product. */
function coreMul(a: number, b: number): number {
  return Math.fround(a * b);
}

/** The core's divider: the correctly rounded (RNE) f32 quotient (see the file's doc on double rounding). */
function coreDiv(a: number, b: number): number {
  return Math.fround(a / b);
}

/** The XDNA2 core's primitives as the documents describe them. */
export const XDNA2_PRIMS: CorePrims = { add: coreAdd, mul: coreMul, div: coreDiv };

/** Builds a whole core from its primitives: every composite routine goes through them. */
export function makeCoreMath(prims: CorePrims): CoreMath {
  const { add, mul, div } = prims;
  return {
    add, mul, div,
    sub: (a, b) => add(a, -b),
    neg: (a) => -a,
    recip: (a) => div(1, a),
    ge: (a, b) => a >= b,
    max: (a, b) => (orderKey(bitsOf(a)) < orderKey(bitsOf(b)) ? b : a),
    ...makeFunctions(prims),
  };
}

/** The simulated XDNA2 core. */
export const CORE_MATH: CoreMath = makeCoreMath(XDNA2_PRIMS);
