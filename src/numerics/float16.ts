/**
 * f16 and bf16 from f64 in one rounding (round to nearest, ties to even, subnormals kept), and their
 * 16-bit patterns. Going through f32 first would round twice, so both round straight from f64.
 */
import type { DType } from './dtype.js';

function roundHalfEven(y: number): number {
  const f = Math.floor(y);
  const d = y - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

const f64 = new Float64Array(1);
const f64Words = new Uint32Array(f64.buffer);
/** The index of the f64's high word (sign, exponent, top of the fraction) in f64Words: 1 on a little-endian machine. */
const HIGH = new Uint8Array(Float64Array.of(1).buffer)[7] === 0x3f ? 1 : 0;

/** floor(log2(a)) for a finite positive a, exact (Math.log2 alone can be off by one near powers of two). */
export function exponentOf(a: number): number {
  // A normal f64's biased exponent field is floor(log2(a)) + 1023 exactly; subnormals take the slow path.
  f64[0] = a;
  const biased = (f64Words[HIGH]! >>> 20) & 0x7ff;
  if (biased !== 0 && biased !== 0x7ff) return biased - 1023;
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  return e;
}

/** 2 ** k for k from -POW2_BIAS up to 1023 at POW2[k + POW2_BIAS] (a lookup rather than Math.pow per value). */
const POW2_BIAS = 160;
const POW2 = Float64Array.from({ length: 1024 + POW2_BIAS }, (_, i) => 2 ** (i - POW2_BIAS));

/** Rounds to a binary format with `mant` fraction bits, least normal exponent `emin`, overflow at `limit`. */
function roundBinary(x: number, mant: number, emin: number, limit: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const a = Math.abs(x);
  if (a >= limit) return x > 0 ? Infinity : -Infinity;
  // e - mant is at least emin - mant (-136 for bf16), inside the table.
  const e = Math.max(exponentOf(a), emin);
  const q = POW2[e - mant + POW2_BIAS]!;
  const r = roundHalfEven(a / q) * q;
  if (r === 0) return x > 0 ? 0 : -0;
  return x > 0 ? r : -r;
}

/** The largest finite f16, 65504. */
export const F16_MAX = 65504;
/** The largest finite bf16. */
export const BF16_MAX = (2 - 2 ** -7) * 2 ** 127;

/** Rounds an f64 to the nearest f16 value (ties to even). */
export function roundF16(x: number): number {
  return roundBinary(x, 10, -14, 65520);
}

/** Rounds an f64 to the nearest bf16 value (ties to even). */
export function roundBF16(x: number): number {
  return roundBinary(x, 7, -126, (2 - 2 ** -8) * 2 ** 127);
}

function wrapI32(x: number): number {
  return Number.isFinite(x) ? (x | 0) : 0;
}

/**
 * Rounds an exact f64 result once to `dtype`. i32 results wrap (two's complement) and bool results are
 * 0 or 1 (non-zero is true); these callers pass integer results already computed exactly.
 */
export function roundToDtype(dtype: DType, x: number): number {
  switch (dtype) {
    case 'f32': return Math.fround(x);
    case 'f16': return roundF16(x);
    case 'bf16': return roundBF16(x);
    case 'i32': return wrapI32(x);
    case 'bool': return x !== 0 && !Number.isNaN(x) ? 1 : 0;
  }
}

/** The f16 bit pattern of an f16 value (NaN as the quiet 0x7e00). */
export function f16ToBits(v: number): number {
  if (Number.isNaN(v)) return 0x7e00;
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a === Infinity) return sign | 0x7c00;
  if (a === 0) return sign;
  if (a < 2 ** -14) return sign | Math.round(a / 2 ** -24);
  const e = exponentOf(a);
  const m = Math.round((a / POW2[e + POW2_BIAS]! - 1) * 1024);
  return sign | ((e + 15) << 10) | m;
}

let halfValues: Float64Array | undefined;

/** The value of an f16 bit pattern (from a table of all 65536, built on first use from f16Value). */
export function f16FromBits(b: number): number {
  if (halfValues === undefined) {
    halfValues = new Float64Array(65536);
    for (let i = 0; i < 65536; i++) halfValues[i] = f16Value(i);
  }
  return halfValues[b & 0xffff]!;
}

/** The value of an f16 bit pattern, computed from its fields. */
function f16Value(b: number): number {
  const sign = b & 0x8000 ? -1 : 1;
  const e = (b >> 10) & 0x1f;
  const m = b & 0x3ff;
  if (e === 0x1f) return m === 0 ? sign * Infinity : NaN;
  if (e === 0) return sign * m * 2 ** -24;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The bf16 bit pattern of a bf16 value (NaN as the quiet 0x7fc0): the top half of its f32 pattern. */
export function bf16ToBits(v: number): number {
  if (Number.isNaN(v)) return 0x7fc0;
  f32[0] = v;
  return (u32[0]! >>> 16) & 0xffff;
}

/** The value of a bf16 bit pattern. */
export function bf16FromBits(b: number): number {
  u32[0] = (b & 0xffff) << 16;
  return f32[0]!;
}
