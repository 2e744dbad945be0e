/**
 * Compares a result tensor with a reference under a tolerance. Integer and bool tensors are always
 * compared exactly, whatever the tolerance: the oracle's integer arithmetic is exact and so must a
 * device's be. For the float tolerances other than `exact`, +0 and -0 are equal and matching NaN
 * positions are equal; a NaN or infinity on one side only fails (see measures.ts).
 */
import type { Tensor } from './dtype.js';
import { isFloat } from './dtype.js';
import { measure, sameValue } from './measures.js';
import type { Measures } from './measures.js';
import { minNormal, ulpDistance } from './ulp.js';

/** How close a result must be to its reference. */
export type Tolerance =
  /** bit-equal elements (-0 differs from +0; any NaN equals any NaN, since tensors hold f64 NaN) */
  | { readonly kind: 'exact' }
  /** every element within `ulps` representable values of the dtype */
  | { readonly kind: 'ulps'; readonly ulps: number }
  /** every element: |got - want| <= abs + rel * |want| */
  | { readonly kind: 'absrel'; readonly abs: number; readonly rel: number }
  /** the whole tensor: ||got - want||_2 <= rel * ||want||_2 */
  | { readonly kind: 'normwise'; readonly rel: number };

/** The element that violates the tolerance most (or, on a pass, differs most). */
interface Worst {
  readonly index: number;
  readonly got: number;
  readonly want: number;
}

/** The outcome of compareTensor. */
export interface Comparison {
  readonly pass: boolean;
  /** The tolerance applied: the one asked for, or `exact` for i32 and bool. */
  readonly tolerance: Tolerance;
  /** All NaN when the dtypes or shapes differ and nothing could be measured. */
  readonly measures: Measures;
  /** null when every element is bit-equal to the reference (or nothing could be compared). */
  readonly worst: Worst | null;
  /** Why it failed, for people; absent on a pass. */
  readonly reason?: string;
}

const EXACT: Tolerance = { kind: 'exact' };

const UNMEASURED: Measures = { maxAbs: NaN, maxRel: NaN, normwiseRel: NaN, cosine: NaN, maxUlps: NaN };

function bitEqual(g: number, w: number): boolean {
  return Object.is(g, w) || (Number.isNaN(g) && Number.isNaN(w));
}

/** How badly one differing element breaks the tolerance (larger is worse), and whether it does. */
function score(tol: Tolerance, dtype: Tensor['dtype'], g: number, w: number): { bad: boolean; s: number } {
  const finite = Number.isFinite(g) && Number.isFinite(w);
  switch (tol.kind) {
    case 'exact':
      return { bad: true, s: finite ? Math.abs(g - w) : Infinity };
    case 'ulps': {
      if (sameValue(g, w)) return { bad: false, s: 0 };
      const u = finite ? ulpDistance(dtype, g, w) : Infinity;
      return { bad: !(u <= tol.ulps), s: u };
    }
    case 'absrel': {
      if (sameValue(g, w)) return { bad: false, s: 0 };
      const r = finite ? Math.abs(g - w) / (tol.abs + tol.rel * Math.abs(w)) : Infinity;
      return { bad: !(r <= 1), s: r };
    }
    case 'normwise':
      // Judged on the whole tensor; per element only the size of the difference picks the worst.
      return { bad: false, s: finite ? Math.abs(g - w) : Infinity };
  }
}

function describe(v: number): string {
  return Object.is(v, -0) ? '-0' : String(v);
}

/** Compares `result` with `reference` under `tol`: dtype and shape must match, then the values. */
export function compareTensor(result: Tensor, reference: Tensor, tol: Tolerance): Comparison {
  if (result.dtype !== reference.dtype) {
    return { pass: false, tolerance: tol, measures: UNMEASURED, worst: null, reason: `dtype ${result.dtype} differs from the reference's ${reference.dtype}` };
  }
  const sameShape = result.shape.length === reference.shape.length && result.shape.every((d, i) => d === reference.shape[i]);
  if (!sameShape || result.data.length !== reference.data.length) {
    return { pass: false, tolerance: tol, measures: UNMEASURED, worst: null, reason: `shape [${result.shape.join(', ')}] differs from the reference's [${reference.shape.join(', ')}]` };
  }
  const dtype = result.dtype;
  const eff = isFloat(dtype) ? tol : EXACT;
  const got = result.data;
  const want = reference.data;
  let worst: Worst | null = null;
  let worstScore = -1;
  let worstBad = false;
  let bad = 0;
  for (let i = 0; i < got.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    if (bitEqual(g, w)) continue;
    const sc = score(eff, dtype, g, w);
    if (sc.bad) bad++;
    // A violating element always outranks a tolerated one; among equals the larger score, then the first.
    if ((sc.bad && !worstBad) || (sc.bad === worstBad && sc.s > worstScore)) {
      worst = { index: i, got: g, want: w };
      worstScore = sc.s;
      worstBad = sc.bad;
    }
  }
  const measures = measure(dtype, got, want, minNormal(dtype));
  let pass = bad === 0;
  let reason: string | undefined;
  if (eff.kind === 'normwise') {
    pass = measures.normwiseRel <= eff.rel;
    if (!pass) reason = `normwise relative error ${measures.normwiseRel} exceeds ${eff.rel}`;
  } else if (!pass && worst !== null) {
    const at = `at index ${worst.index} (got ${describe(worst.got)}, want ${describe(worst.want)})`;
    reason = `${bad} of ${got.length} elements outside the ${tolName(eff)} tolerance; worst ${at}`;
  }
  return reason === undefined ? { pass, tolerance: eff, measures, worst } : { pass, tolerance: eff, measures, worst, reason };
}

/** A short human name of a tolerance, for messages and reports. */
export function tolName(tol: Tolerance): string {
  switch (tol.kind) {
    case 'exact': return 'exact';
    case 'ulps': return `${tol.ulps} ulp`;
    case 'absrel': return `abs ${tol.abs} + rel ${tol.rel}`;
    case 'normwise': return `normwise ${tol.rel}`;
  }
}
