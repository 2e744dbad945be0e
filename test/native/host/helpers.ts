/**
 * Shared by the host kernel tests: the addon (or why it is absent, so a suite skips saying so), a
 * seeded generator, an arena to lay tensors out in, and the error bound of a dot product.
 */
import { loadHostKernels, type HostIsa, type HostKernels } from '../../../src/devices/host/native.js';
import { mulberry32 } from '../../../src/numerics/random.js';
import { skipWith } from '../../skip.js';

let cached: HostKernels | string | undefined;

/** The host kernels, or the NoDevice message saying why they are absent. */
function hostOrReason(): HostKernels | string {
  if (cached === undefined) {
    try {
      cached = loadHostKernels();
    } catch (e) {
      cached = e instanceof Error ? e.message : String(e);
    }
  }
  return cached;
}

/**
 * The host kernels for a suite; skips the suite's tests, saying why, when the addon is not built
 * (the reason is in each skipped test's title: test/skip.ts).
 */
export function useHost(ctx: Mocha.Context): HostKernels {
  const h = hostOrReason();
  if (typeof h === 'string') {
    skipWith(ctx, h);
  }
  return h;
}

/** Runs `f` under each SIMD path this CPU has, restoring the widest afterwards. */
export function eachIsa(h: HostKernels, f: (isa: HostIsa) => void): void {
  const available = h.info().available;
  try {
    for (const isa of available) {
      h.setIsa(isa);
      f(isa);
    }
  } finally {
    h.setIsa(available[available.length - 1]!);
  }
}

/** A seeded generator with the draws the tests need. */
export class Rng {
  private readonly next: () => number;
  constructor(seed: number) { this.next = mulberry32(seed); }
  /** Uniform in [0, 1). */
  u(): number { return this.next(); }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  /** A byte. */
  byte(): number { return Math.floor(this.next() * 256); }
  /** Uniform in [-a, a), rounded to f32. */
  f32(a = 1): number { return Math.fround((this.next() * 2 - 1) * a); }
  pick<T>(xs: readonly T[]): T { return xs[Math.floor(this.next() * xs.length)]!; }
}

/** Tensors laid out in one arena, each at a 64-byte aligned offset. */
export class Arena {
  readonly bytes: Uint8Array;
  private top = 0;
  constructor(size: number, shared = false) {
    this.bytes = new Uint8Array(shared ? new SharedArrayBuffer(size) : new ArrayBuffer(size));
  }
  /** Reserves `n` bytes; returns their offset. */
  alloc(n: number): number {
    const at = this.top;
    this.top = Math.ceil((at + n) / 64) * 64;
    if (this.top > this.bytes.length) throw new Error(`test arena of ${this.bytes.length} bytes is full`);
    return at;
  }
  f32(off: number, n: number): Float32Array { return new Float32Array(this.bytes.buffer, this.bytes.byteOffset + off, n); }
  i32(off: number, n: number): Int32Array { return new Int32Array(this.bytes.buffer, this.bytes.byteOffset + off, n); }
  u8(off: number, n: number): Uint8Array { return this.bytes.subarray(off, off + n); }
  /** Places f32 values; returns their offset. */
  putF32(values: ArrayLike<number>): number {
    const at = this.alloc(values.length * 4);
    this.f32(at, values.length).set(Array.from(values));
    return at;
  }
  putI32(values: ArrayLike<number>): number {
    const at = this.alloc(values.length * 4);
    this.i32(at, values.length).set(Array.from(values));
    return at;
  }
}

/** The unit roundoff of f32. */
export const U32 = 2 ** -24;
/** gamma(n) = n*u / (1 - n*u): the classic bound of n roundings (Higham, Accuracy and Stability, 3.1). */
export const gamma = (n: number, u = U32): number => (n * u) / (1 - n * u);

/**
 * The bound docs/HOST.md derives for a dot product of length K of f32 activations with dequantized
 * weights, against the exact value: gamma(K + 2) * sum |x_k w_k|. The reference is itself an f64 sum,
 * off by at most gamma_f64(K) of the same sum, which is added.
 */
export function dotBound(k: number, absSum: number): number {
  return (gamma(k + 2) + gamma(k, 2 ** -53)) * absSum;
}

