/**
 * Error measures of a result against a reference, both as Float64Array of equal length.
 *
 * Non-finite values: an element pair "matches" when both are NaN or both are the same value (+0 and
 * -0 match, as do equal infinities); a matching pair contributes no error to any measure and is left
 * out of the norms. A pair that does not match and is not two finite numbers (NaN on one side only,
 * an infinity against anything else) makes every max measure and the normwise error Infinity, and the
 * cosine similarity NaN: there is no finite number that would describe it honestly.
 */
import { ulpDistance } from './ulp.js';
import type { UlpDType } from './ulp.js';

/** The measures of one comparison. */
export interface Measures {
  /** max |got - want| */
  readonly maxAbs: number;
  /** max |got - want| / max(|want|, floor); the floor keeps tiny references from dominating. */
  readonly maxRel: number;
  /** ||got - want||_2 / ||want||_2 */
  readonly normwiseRel: number;
  /** <got, want> / (||got||_2 ||want||_2) */
  readonly cosine: number;
  /** max ulp distance in the dtype */
  readonly maxUlps: number;
}

/** The default floor of maxRel: the smallest normal f32, so only subnormal references are clamped. */
export const DEFAULT_REL_FLOOR = 2 ** -126;

/** True when an element pair matches: both NaN, or the same value (+0 and -0 alike). */
export function sameValue(got: number, want: number): boolean {
  return got === want || (Number.isNaN(got) && Number.isNaN(want));
}

/** True when a pair differs in a way no finite error describes: a NaN or infinity not matched. */
function nonFiniteMismatch(got: number, want: number): boolean {
  return !sameValue(got, want) && !(Number.isFinite(got) && Number.isFinite(want));
}

function checkLengths(got: Float64Array, want: Float64Array): void {
  if (got.length !== want.length) throw new RangeError(`measures need equal lengths, got ${got.length} and ${want.length}`);
}

// The largest `err(g, w)` over elements that differ; Infinity where a NaN or infinity is on one side only.
function maxOver(got: Float64Array, want: Float64Array, err: (g: number, w: number) => number): number {
  checkLengths(got, want);
  let m = 0;
  for (let i = 0; i < got.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    if (sameValue(g, w)) continue;
    if (nonFiniteMismatch(g, w)) return Infinity;
    m = Math.max(m, err(g, w));
  }
  return m;
}

/** The largest elementwise |got - want| (0 for empty inputs). */
export function maxAbsError(got: Float64Array, want: Float64Array): number {
  return maxOver(got, want, (g, w) => Math.abs(g - w));
}

/** The largest elementwise |got - want| / max(|want|, floor). */
export function maxRelError(got: Float64Array, want: Float64Array, floor = DEFAULT_REL_FLOOR): number {
  return maxOver(got, want, (g, w) => Math.abs(g - w) / Math.max(Math.abs(w), floor));
}

/** ||got - want||_2 / ||want||_2; 0 when both are all zero, Infinity when only the reference is. */
export function normwiseRelError(got: Float64Array, want: Float64Array): number {
  checkLengths(got, want);
  // Scaled sums of squares, so huge or tiny values neither overflow nor underflow the norms.
  const scale = Math.max(maxFinite(got), maxFinite(want)) || 1;
  let dd = 0;
  let ww = 0;
  for (let i = 0; i < got.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    if (sameValue(g, w)) {
      if (Number.isFinite(w)) ww += (w / scale) ** 2;
      continue;
    }
    if (nonFiniteMismatch(g, w)) return Infinity;
    dd += ((g - w) / scale) ** 2;
    ww += (w / scale) ** 2;
  }
  if (ww === 0) return dd === 0 ? 0 : Infinity;
  return Math.sqrt(dd / ww);
}

/** <got, want> / (||got|| ||want||): 1 when both are all zero, 0 when only one is. */
export function cosineSimilarity(got: Float64Array, want: Float64Array): number {
  checkLengths(got, want);
  const scale = Math.max(maxFinite(got), maxFinite(want)) || 1;
  let gw = 0;
  let gg = 0;
  let ww = 0;
  for (let i = 0; i < got.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    if (!Number.isFinite(g) || !Number.isFinite(w)) {
      if (sameValue(g, w)) continue;
      return NaN;
    }
    const gs = g / scale;
    const ws = w / scale;
    gw += gs * ws;
    gg += gs * gs;
    ww += ws * ws;
  }
  if (gg === 0 && ww === 0) return 1;
  if (gg === 0 || ww === 0) return 0;
  return gw / Math.sqrt(gg * ww);
}

/**
 * The largest elementwise ulp distance in `dtype`. Unlike ulpDistance alone, an unmatched infinity is
 * Infinity here (not the 1 ulp from the largest finite value), like every other measure.
 */
export function maxUlpError(dtype: UlpDType, got: Float64Array, want: Float64Array): number {
  return maxOver(got, want, (g, w) => ulpDistance(dtype, g, w));
}

/** Every measure at once; `relFloor` defaults to DEFAULT_REL_FLOOR. */
export function measure(dtype: UlpDType, got: Float64Array, want: Float64Array, relFloor = DEFAULT_REL_FLOOR): Measures {
  return {
    maxAbs: maxAbsError(got, want),
    maxRel: maxRelError(got, want, relFloor),
    normwiseRel: normwiseRelError(got, want),
    cosine: cosineSimilarity(got, want),
    maxUlps: maxUlpError(dtype, got, want),
  };
}

function maxFinite(a: Float64Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const v = Math.abs(a[i]!);
    if (v !== Infinity && v > m) m = v;
  }
  return m;
}
