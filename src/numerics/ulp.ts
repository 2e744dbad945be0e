/**
 * Units in the last place. A distance in ulps counts the representable values between two numbers:
 * the distance of their bit patterns once those are mapped to an ordered integer line (negative
 * patterns mirrored below zero), so it is exact and independent of the magnitude.
 */
import type { DType } from './dtype.js';
import { exponentOf, roundToDtype } from './float16.js';

/** The dtypes ulps are defined for: the program's dtypes plus f64, for measuring the oracle itself. */
export type UlpDType = DType | 'f64';

interface Format { readonly mant: number; readonly emin: number; readonly emax: number }

// Fraction bits and the normal exponent range of each binary format.
const FORMATS = {
  f64: { mant: 52, emin: -1022, emax: 1023 },
  f32: { mant: 23, emin: -126, emax: 127 },
  f16: { mant: 10, emin: -14, emax: 15 },
  bf16: { mant: 7, emin: -126, emax: 127 },
} as const satisfies Record<string, Format>;

const f64 = new Float64Array(1);
const i64 = new BigInt64Array(f64.buffer);
const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);

/**
 * An f32 value's position on the ordered line of f32 patterns: +0 and -0 are both 0, the next value up
 * is 1, and negative values mirror the positive ones (sign-magnitude patterns made monotonic).
 */
function ordered32(v: number): number {
  f32[0] = v;
  const b = i32[0]!;
  return b < 0 ? -(b & 0x7fffffff) : b;
}

/** The same for f64, in BigInt: 63 magnitude bits do not fit a double exactly. */
function ordered64(v: number): bigint {
  f64[0] = v;
  const b = i64[0]!;
  return b < 0n ? -(b & 0x7fffffffffffffffn) : b;
}

/** An f16 value's position on the f16 pattern line (sign-mirrored, +0 = -0 = 0). */
function ordered16(v: number): number {
  const a = Math.abs(v);
  let m: number;
  if (a === Infinity) m = 0x7c00;
  else if (a < 2 ** -14) m = a / 2 ** -24; // subnormals: count of the smallest step
  else {
    const e = exponentOf(a);
    m = ((e + 15) << 10) + (a / 2 ** e - 1) * 1024;
  }
  return v < 0 ? -m : m;
}

/**
 * The distance in ulps of `dtype` between a and b: how many representable values apart they are
 * (+0 and -0 are 0 apart, the largest finite value and infinity 1). Values not of the dtype are rounded
 * to it first. NaN vs NaN is 0, NaN vs anything else Infinity. For i32 and bool it is |a - b|.
 */
export function ulpDistance(dtype: UlpDType, a: number, b: number): number {
  const an = Number.isNaN(a);
  const bn = Number.isNaN(b);
  if (an || bn) return an && bn ? 0 : Infinity;
  switch (dtype) {
    case 'f64': {
      const d = ordered64(a) - ordered64(b);
      return Number(d < 0n ? -d : d);
    }
    case 'f32':
      return Math.abs(ordered32(a) - ordered32(b));
    case 'bf16':
      // bf16 patterns are the top 16 bits of f32 patterns, so the f32 line counts 2^16 per bf16 step.
      return Math.abs(ordered32(roundToDtype('bf16', a)) - ordered32(roundToDtype('bf16', b))) / 65536;
    case 'f16':
      return Math.abs(ordered16(roundToDtype('f16', a)) - ordered16(roundToDtype('f16', b)));
    case 'i32':
    case 'bool':
      return Math.abs(a - b);
  }
}

/**
 * The spacing of `dtype` at x: 2^(e - mant) for |x| in [2^e, 2^(e+1)), the subnormal step below the
 * normal range (also at 0), the top binade's step beyond the largest finite value. NaN for NaN and
 * infinities; 1 for i32 and bool.
 */
export function ulpOf(dtype: UlpDType, x: number): number {
  if (dtype === 'i32' || dtype === 'bool') return 1;
  if (!Number.isFinite(x)) return NaN;
  const f: Format = FORMATS[dtype];
  const a = Math.abs(x);
  const e = a === 0 ? f.emin : Math.min(Math.max(exponentOf(a), f.emin), f.emax);
  return 2 ** (e - f.mant);
}

/** The smallest positive normal value of a float dtype (1 for i32 and bool). */
export function minNormal(dtype: UlpDType): number {
  if (dtype === 'i32' || dtype === 'bool') return 1;
  return 2 ** FORMATS[dtype].emin;
}
