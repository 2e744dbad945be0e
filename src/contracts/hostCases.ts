/**
 * Inputs for the host target's contract sweep (host.ts): the f32 edge values every elementwise op is
 * driven through (signed zeros, subnormals, the largest finite, infinities, NaN, and each function's
 * domain edges), and the random bulk (uniform, log-uniform over the whole exponent range, and raw bit
 * patterns), all f32 values.
 */
import { mulberry32 } from '../numerics/random.js';

const F32_MAX = 3.4028234663852886e38;

/** Values at the edges of the f32 line and of the unary functions' domains. */
export const EDGE_VALUES: readonly number[] = [
  0, -0, 2 ** -149, -(2 ** -149), 2 ** -127, -(2 ** -130), 2 ** -126, -(2 ** -126), 1.1754942e-38, F32_MAX, -F32_MAX,
  Infinity, -Infinity, NaN, 1, -1, 0.5, -0.5, 2, 3, 1e-8, -1e-8, 1e-4, 1 - 2 ** -24, 1 + 2 ** -23,
  // exp's overflow and underflow edges, logistic and tanh's saturation, erf's.
  88.72283, 88.7229, -87.33654, -103.27893, -103.98, 89, -89, 20, -20, 9.01, -9.01, 3.92, -3.92, 6, -6, 16.6, -16.6,
  // sin and cos: multiples of pi/2, and large arguments at the promised edge.
  Math.PI, -Math.PI, Math.PI / 2, 3 * Math.PI / 2, 100 * Math.PI, 1e4, 99999, -99999, 1e5, 16777216, 1e10,
].map(Math.fround);

/** A seeded f32 generator (uniform, log-uniform of both signs and raw bits in turns), and `u`: uniform in [0, 1). */
export interface F32Source {
  (): number;
  readonly u: () => number;
}

/** The sweep's generator for one op's seed (see F32Source). */
export function f32Source(seed: number): F32Source {
  const r = mulberry32(seed);
  const bits = new Uint32Array(1);
  const asF32 = new Float32Array(bits.buffer);
  let k = 0;
  const next = () => {
    switch (k++ % 4) {
      case 0: return Math.fround(r() * 2 - 1);
      case 1: return Math.fround((r() < 0.5 ? -1 : 1) * 2 ** (r() * 60 - 30));
      case 2: return Math.fround((r() * 40 - 20));
      default: bits[0] = Math.floor(r() * 2 ** 32); return asF32[0]!;
    }
  };
  return Object.assign(next, { u: mulberry32(seed ^ 0x5bd1e995) });
}

/** `n` values: `edges` first, then from `next`. */
export function fill(n: number, next: () => number, edges: readonly number[] = []): number[] {
  const out = edges.slice(0, n);
  while (out.length < n) out.push(next());
  return out;
}

/** Every ordered pair of edge values, as two columns. */
export function edgePairs(): [number[], number[]] {
  const a: number[] = [];
  const b: number[] = [];
  for (const x of EDGE_VALUES) for (const y of EDGE_VALUES) { a.push(x); b.push(y); }
  return [a, b];
}

/** Random bytes that make a valid quantized weight: every f16/bf16 scale field finite and below 2^8. */
export function quantBytes(n: number, u: () => number): Uint8Array {
  const out = new Uint8Array(n);
  // A byte below 0x5c, read as the high byte of an f16, is finite and below 2^8.
  for (let i = 0; i < n; i++) out[i] = Math.floor(u() * 0x5c);
  return out;
}
