/**
 * The inputs NPU4 contract verification feeds its programs (npu4Ops.ts): F32 tensors whose values
 * reach the edges of the narrowed domain (near 65504 with every result kept in range, FP16's smallest
 * normals, its subnormal range, magnitudes mixed in one tensor, cancellations) and a seeded random bulk;
 * for the exact ops, every FP16 bit pattern. A generator draws one element (or one operand pair) at a
 * time from a seeded generator, so a failure can be replayed with the same seed.
 */
import type { Tensor } from '../ir/tensor.js';
import type { DType, Shape } from '../ir/types.js';
import { numel } from '../ir/types.js';
import { F16_MAX, f16FromBits } from '../numerics/float16.js';

export { rng } from '../devices/xdna2/contractCases.js';

/** Draws one element. */
export type Gen = (r: () => number) => number;
/** Draws one operand pair of a binary op. */
export type PairGen = (r: () => number) => readonly [number, number];

/** The largest magnitude the contract covers (FP16's largest finite value). */
export const MAX = F16_MAX;

/** A uniform f32 in [lo, hi]. */
export function uni(lo: number, hi: number): Gen {
  return (r) => Math.fround(lo + r() * (hi - lo));
}

/** A log-uniform magnitude in [lo, hi], with a random sign unless `positive`. */
export function mag(lo: number, hi: number, positive = false): Gen {
  return (r) => {
    // fround may round past hi by half an f32 ulp; the contract's range must hold exactly.
    const v = Math.min(Math.fround(lo * (hi / lo) ** r()), Math.fround(hi));
    return positive || r() < 0.5 ? v : -v;
  };
}

/** Two independent operands. */
function both(a: Gen, b: Gen): PairGen {
  return (r) => [a(r), b(r)];
}

/** One of several generators, chosen per element. */
export function oneOf<G extends (r: () => number) => unknown>(...gens: readonly G[]): G {
  return ((r: () => number) => gens[Math.floor(r() * gens.length)]!(r)) as G;
}

/** An F32 tensor of `shape` whose leading elements are `edges` and the rest drawn from `gen`. */
export function f32Tensor(shape: Shape, r: () => number, gen: Gen, edges: readonly number[] = []): Tensor {
  const n = numel(shape);
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) d[i] = Math.fround(i < edges.length ? edges[i]! : gen(r));
  return { dtype: 'f32', shape: [...shape], data: d };
}

/** Two F32 tensors of `shape` from operand pairs: `edges` first, the rest drawn from `gen`. */
export function f32Pair(shape: Shape, r: () => number, gen: PairGen, edges: readonly (readonly [number, number])[] = []): [Tensor, Tensor] {
  const n = numel(shape);
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const [x, y] = i < edges.length ? edges[i]! : gen(r);
    a[i] = Math.fround(x);
    b[i] = Math.fround(y);
  }
  return [{ dtype: 'f32', shape: [...shape], data: a }, { dtype: 'f32', shape: [...shape], data: b }];
}

let allF16Values: Float64Array | undefined;
let finiteF16Values: Float64Array | undefined;

/**
 * Every FP16 value by bit pattern (NaNs and infinities included), in pattern order. Built at the first
 * call, not when the module loads (a CLI start that never sweeps NPU4 does not pay for it); read only.
 */
export function allF16(): Float64Array {
  if (allF16Values === undefined) {
    const a = new Float64Array(65536);
    for (let b = 0; b < a.length; b++) a[b] = f16FromBits(b);
    allF16Values = a;
  }
  return allF16Values;
}

/** The finite FP16 values: the ones an F32 input can carry into a narrowed graph exactly (as allF16). */
export function finiteF16(): Float64Array {
  finiteF16Values ??= allF16().filter((v) => Number.isFinite(v));
  return finiteF16Values;
}

/** A tensor of `dtype` and `shape` cycling through `values` from `start`. */
export function cycled(dtype: DType, shape: Shape, values: Float64Array, start = 0): Tensor {
  const n = numel(shape);
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) d[i] = values[(start + i) % values.length]!;
  return { dtype, shape: [...shape], data: d };
}

/** I32 indices in [0, extent). */
export function indices(shape: Shape, r: () => number, extent: number): Tensor {
  const d = Float64Array.from({ length: numel(shape) }, () => Math.floor(r() * extent));
  return { dtype: 'i32', shape: [...shape], data: d };
}

/**
 * The operand pairs of add; sub negates the second operand so each profile means the same for both.
 * Every sum stays within ±65504: a near-max operand gets a partner with room to spare, or one of the
 * other sign. `cancel` subtracts nearly equal values, which FP16 storage of the inputs alone ruins.
 */
export function addProfiles(sign: 1 | -1): Readonly<Record<string, PairGen>> {
  const s = (g: PairGen): PairGen => (r) => { const [a, b] = g(r); return [a, sign * b]; };
  return {
    'near-max': s((r) => {
      const a = mag(2 ** 14, MAX)(r);
      // 32 spare: FP16 may round each operand up by half its spacing (16 at the top), and the device's
      // F32 result of the FP16 values must stay in range too.
      const room = Math.max(0, MAX - 32 - Math.abs(a));
      return r() < 0.5 ? [a, Math.sign(a) * r() * room] : [a, -Math.sign(a) * uni(0, MAX)(r)];
    }),
    'fp16-min-normal': s(both(mag(2 ** -14, 2 ** -10), mag(2 ** -14, 2 ** -10))),
    'fp16-subnormal': s(both(mag(2 ** -24, 2 ** -14), mag(2 ** -24, 2 ** -14))),
    'fp16-deep-subnormal': s(both(mag(2 ** -24, 2 ** -20), mag(2 ** -24, 2 ** -20))),
    'mixed': s(both(mag(2 ** -20, 2 ** 14), mag(2 ** -20, 2 ** 14))),
    'cancel': s((r) => { const a = mag(2 ** -4, 2 ** 10)(r); return [a, -a * (1 + uni(-(2 ** -9), 2 ** -9)(r))]; }),
    'bulk': s(both(mag(2 ** -8, 2 ** 8), mag(2 ** -8, 2 ** 8))),
  };
}

/** add's (and sub's) pairs at the very ends of the range. */
export const ADD_EDGES: readonly (readonly [number, number])[] = [
  [MAX, -MAX], [MAX, -1], [MAX / 2, MAX / 2], [-MAX / 2, -MAX / 2], [MAX, 0], [-MAX, -0], [0, -0], [2 ** -14, -(2 ** -14)], [MAX, -(MAX - 32)],
];

/** The operand pairs of mul: products stay within ±65504 (a near-max operand meets one at most 1). */
export const MUL_PROFILES: Readonly<Record<string, PairGen>> = {
  'near-max': oneOf(both(mag(128, 255.9), mag(128, 255.9)), both(mag(2 ** 14, MAX), mag(0.25, 1))),
  'fp16-min-normal': both(mag(2 ** -14, 2 ** -10), mag(1, 4)),
  'fp16-subnormal': both(mag(2 ** -24, 2 ** -14), mag(0.5, 1)),
  'underflow': both(mag(2 ** -12, 2 ** -7), mag(2 ** -12, 2 ** -7)),
  'mixed': both(mag(2 ** -10, 2 ** 7), mag(2 ** -4, 2 ** 7)),
  'bulk': both(mag(2 ** -6, 2 ** 6), mag(2 ** -6, 2 ** 6)),
};
export const MUL_EDGES: readonly (readonly [number, number])[] = [[MAX, 1], [-MAX, 1], [MAX, -1], [255.9375, 255.9], [2 ** -14, 1], [MAX, 2 ** -14], [0, MAX], [-0, 3]];

/** The operand pairs of div: quotients stay within ±65504. */
export const DIV_PROFILES: Readonly<Record<string, PairGen>> = {
  'near-max': oneOf(both(mag(2 ** 14, MAX), mag(1, 4)), both(mag(256, 2000), mag(2 ** -5, 2 ** -4))),
  'fp16-min-normal': both(mag(2 ** -14, 2 ** -10), mag(0.5, 1)),
  'tiny-divisor': both(mag(1, 2), mag(2 ** -14, 2 ** -13)),
  'fp16-subnormal': both(mag(2 ** -24, 2 ** -15), mag(1, 2)),
  'mixed': both(mag(2 ** -10, 2 ** 10), mag(2 ** -3, 2 ** 3)),
  'bulk': both(mag(2 ** -8, 2 ** 8), mag(2 ** -4, 2 ** 4)),
};
export const DIV_EDGES: readonly (readonly [number, number])[] = [[MAX, 1], [MAX, -1], [1, 2 ** -14], [2 ** -14, 1], [1, MAX], [MAX, MAX], [0, 1], [-0, 7]];

/** The operand pairs of max and ge: anywhere in ±65504, with equal and nearly equal pairs. */
export const COMPARE_PROFILES: Readonly<Record<string, PairGen>> = {
  'near-max': both(mag(2 ** 14, MAX), mag(2 ** 14, MAX)),
  'fp16-min-normal': both(mag(2 ** -14, 2 ** -10), mag(2 ** -14, 2 ** -10)),
  'fp16-subnormal': both(mag(2 ** -24, 2 ** -14), mag(2 ** -24, 2 ** -14)),
  'mixed': both(mag(2 ** -20, MAX), mag(2 ** -20, MAX)),
  // Pairs FP16 may round to one value: ge on the device compares what it holds.
  'near-ties': (r) => { const a = mag(2 ** -8, 2 ** 8)(r); return [a, r() < 0.3 ? a : a * (1 + uni(-(2 ** -10), 2 ** -10)(r))]; },
  'bulk': both(mag(2 ** -8, 2 ** 8), mag(2 ** -8, 2 ** 8)),
};
export const COMPARE_EDGES: readonly (readonly [number, number])[] = [[MAX, -MAX], [MAX, MAX], [0, -0], [-0, 0], [2 ** -24, 0], [-MAX, -(MAX - 32)]];

/** Element profiles of the unary ops and reductions (sign-free ones for sqrt), keyed by case name. */
export function unaryProfiles(positive: boolean): Readonly<Record<string, Gen>> {
  return {
    'near-max': mag(2 ** 14, MAX, positive),
    'fp16-min-normal': mag(2 ** -14, 2 ** -10, positive),
    'fp16-subnormal': mag(2 ** -24, 2 ** -14, positive),
    // Only the few lowest FP16 values: stored up to half a step off, which no normwise bound survives.
    'fp16-deep-subnormal': mag(2 ** -24, 2 ** -20, positive),
    'mixed': mag(2 ** -20, MAX, positive),
    'bulk': mag(2 ** -8, 2 ** 8, positive),
  };
}
export const UNARY_EDGES: readonly number[] = [MAX, -MAX, 0, -0, 2 ** -14, -(2 ** -14), 2 ** -24, MAX - 32];

/** exp's arguments: results near 65504 (ln 65504 = 11.0898), in FP16's smallest normals and below. */
export const EXP_PROFILES: Readonly<Record<string, Gen>> = {
  'near-max': uni(10, 11.07),
  // Arguments FP16 rounds up past ln(65504): the device's exp leaves the range where the oracle's does not.
  'range-edge': uni(11.08, 11.0898),
  'fp16-min-normal': uni(-9.6, -7),
  'fp16-subnormal': uni(-16.5, -9.8),
  'mixed': uni(-9.6, 11.07),
  'near-zero': mag(2 ** -24, 2 ** -4),
  'bulk': uni(-4, 4),
};
export const EXP_EDGES: readonly number[] = [11.07, 11.0703125, 0, -0, 10];
