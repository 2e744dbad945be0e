/**
 * f32 as the core holds it: values and their 32-bit patterns. Kernels keep tensors as raw little-endian
 * bytes and only turn a word into a number where they compute with it, so a bit pattern the core
 * merely moves (a NaN payload, a -0) is never touched by a JavaScript number.
 */

const F = new Float32Array(1);
const U = new Uint32Array(F.buffer);

/** The largest finite f32. */
export const F32_MAX = 3.4028234663852886e38;
/** The smallest positive normal f32. */
export const F32_MIN_NORMAL = 2 ** -126;

/** The 32-bit pattern of an f32 value (rounded to f32 first). */
export function bitsOf(x: number): number {
  F[0] = x;
  return U[0]!;
}

/** The f32 value of a 32-bit pattern. */
export function fromBits(b: number): number {
  U[0] = b >>> 0;
  return F[0]!;
}

/** The f32 one unit toward zero from a nonzero finite f32 (sign-magnitude: the pattern minus one). */
export function towardZero(x: number): number {
  return fromBits(bitsOf(x) - 1);
}

/** The f32 `k` units away from zero from a finite f32 (for building broken cores in tests). */
export function awayFromZero(x: number, k: number): number {
  if (x === 0) return fromBits((bitsOf(x) & 0x80000000) + k);
  return fromBits(bitsOf(x) + k);
}

/**
 * The comparator's key of a pattern: sign-magnitude made monotonic as an unsigned integer, so the core
 * compares f32 by integer compare. Every non-NaN value orders as IEEE does, and -0 sits just below +0;
 * a NaN with the sign clear orders above +inf, one with the sign set below -inf.
 */
export function orderKey(bits: number): number {
  return bits & 0x80000000 ? (~bits) >>> 0 : (bits | 0x80000000) >>> 0;
}

/** 2^n as an f32, for n in [-149, 127] (exact: every such power of two is an f32). */
export function pow2(n: number): number {
  return 2 ** n;
}

/** The Float32Array view of bytes at a 4-byte-aligned offset (kernels only see their own copies). */
export function f32View(bytes: Uint8Array): Float32Array {
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
}

/** The Uint32Array view of aligned bytes. */
export function u32View(bytes: Uint8Array): Uint32Array {
  return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
}
