/**
 * The judgement of NPU4 contract cases and the per-op report they add up to.
 *
 * The domain. The contract bounds the normwise error of a narrowed graph over F32 values within
 * ±65504, but no FP16 device can meet it where storing the inputs and results in FP16 already costs
 * more than the bound: values in FP16's subnormal range (spaced 2^-24 apart, so 1e-7 is stored 19%
 * off) and cancellations (1000.1 - 1000 is 0 once both are FP16). So a case is in the domain when its
 * inputs and oracle results lie within ±65504 and the "ideal" FP16 device (the oracle run on the FP16
 * values of the inputs, its results rounded to FP16) stays within half the bound, leaving the other half
 * for the device's own roundings inside the graph. Cases outside are still run and reported (`outside`),
 * never hidden; they just cannot fail the op.
 */
import { NarrowingRangeInput, NarrowingRangeResult } from '../errors/index.js';
import type { Tensor } from '../ir/tensor.js';
import { isFloat } from '../ir/types.js';
import { f16ToBits, roundF16 } from '../numerics/float16.js';
import { normwiseRelError } from '../numerics/measures.js';
import type { TensorMap } from '../oracle/types.js';
import type { ContractCase, ContractGroup } from './npu4Ops.js';

/** The share of the bound the ideal FP16 device may use for a case to be in the domain. */
export const DOMAIN_SHARE = 0.5;

/** One case's outcome. */
export interface CaseReport {
  readonly name: string;
  readonly check: ContractCase['check'];
  readonly elements: number;
  /** The worst normwise relative error of a float result against the F32 oracle (0 for exact cases that match). */
  readonly error: number;
  /** The same error of the ideal FP16 device (the file's doc); Infinity when it leaves the range. */
  readonly ideal: number;
  /** Elements that differ bit for bit from the oracle on the FP16 values of the inputs (exact cases). */
  readonly mismatches: number;
  /** Elements that differ from the F32 oracle itself (exact cases): where narrowing moved the answer. */
  readonly vsF32: number;
  readonly inDomain: boolean;
  /** The case's largest |input| (NaN when an input is NaN): the binade the report plots it in. */
  readonly scale: number;
  /** Why the case is outside the domain, or what the session refused. */
  readonly why?: string;
}

/** One op's verification against the NPU4 contract. */
export interface Npu4ContractReport {
  readonly op: string;
  readonly group: ContractGroup;
  /** The contract, as people read it. */
  readonly contract: string;
  readonly cases: number;
  readonly inDomain: number;
  /** Result elements checked, over every case. */
  readonly elements: number;
  /** The in-domain normwise case with the largest error; null when the op has none. */
  readonly worst: { readonly case: string; readonly error: number; readonly ratio: number } | null;
  /** The out-of-domain case with the largest error, for information; null when every case is in the domain. */
  readonly outside: { readonly case: string; readonly error: number; readonly ideal: number; readonly why: string } | null;
  /** Mismatching elements over the exact cases. */
  readonly mismatches: number;
  /** In-domain cases over the bound, plus exact cases with a mismatch. */
  readonly failures: number;
  readonly pass: boolean;
  readonly notes: readonly string[];
  readonly caseReports: readonly CaseReport[];
}

/** The FP16 values the device holds of an input map: each F32 tensor rounded to FP16. */
export function narrowedInputs(inputs: TensorMap): TensorMap {
  const out: Record<string, Tensor> = {};
  for (const [k, t] of Object.entries(inputs)) out[k] = t.dtype === 'f32' ? { ...t, data: t.data.map(roundF16) } : t;
  return out;
}

/** One f32 and its bit pattern, reused per element rather than allocated. */
const f32Scratch = new Float32Array(1);
const f32Bits = new Uint32Array(f32Scratch.buffer);

/** Elements whose bit patterns differ (NaN matches NaN: tensors hold f64, which keeps no payload). */
function bitMismatches(got: Tensor, want: Tensor): number {
  let n = 0;
  const bits = (t: Tensor, x: number) => {
    if (t.dtype === 'f16') return f16ToBits(x);
    if (t.dtype !== 'f32') return x;
    f32Scratch[0] = x;
    return f32Bits[0]!;
  };
  for (let i = 0; i < want.data.length; i++) {
    const g = got.data[i]!;
    const w = want.data[i]!;
    if (!(Number.isNaN(g) && Number.isNaN(w)) && bits(got, g) !== bits(want, w)) n++;
  }
  return n;
}

const outOfRange = (t: Tensor, max: number) => isFloat(t.dtype) && t.data.some((x) => !(Math.abs(x) <= max));

/** What the runner measured of one case: the device's results (or its refusal) and the two oracle runs. */
export interface CaseRun {
  readonly c: ContractCase;
  /** The device's results, or the session's refusal (a wrapper, so that a result named `refused` is still a result). */
  readonly got: { readonly results: TensorMap } | { readonly refused: string };
  /** The F32 oracle on the inputs as given. */
  readonly want: TensorMap;
  /** The F32 oracle on the FP16 values of the inputs. */
  readonly wantF16: TensorMap;
}

/** Judges one case against the contract (`bound`, within ±`max`). */
export function judgeCase(run: CaseRun, bound: number, max: number): CaseReport {
  const { c, got, want, wantF16 } = run;
  const names = Object.keys(want);
  const elements = names.reduce((n, k) => n + want[k]!.data.length, 0);
  let error = 0;
  let ideal = 0;
  let mismatches = 0;
  let vsF32 = 0;
  let why: string | undefined;
  const inputsOut = Object.values(c.inputs).some((t) => t.dtype === 'f32' && outOfRange(t, max));
  const resultsOut = names.some((k) => outOfRange(want[k]!, max));
  for (const k of names) {
    const w = want[k]!;
    if (c.check === 'normwise' && w.dtype === 'f32') ideal = Math.max(ideal, normwiseRelError(wantF16[k]!.data.map(roundF16), w.data));
    if ('refused' in got) continue;
    const g = got.results[k]!;
    if (c.check === 'exact') {
      mismatches += bitMismatches(g, wantF16[k]!);
      vsF32 += bitMismatches(g, w);
    }
    if (isFloat(w.dtype)) error = Math.max(error, normwiseRelError(g.data, w.data));
  }
  // Narrowing can round in-range inputs up so far that the result leaves the range (65020 + 484 is
  // 65504, but FP16 holds 65020 as 65024, and the sum computed into an F32 result is 65508): the
  // session refuses that result, as documented, so such a case is outside what the bound covers.
  const narrowedOut = names.some((k) => want[k]!.dtype === 'f32' && outOfRange(wantF16[k]!, max));
  if (inputsOut || resultsOut) why = `${inputsOut ? 'an input' : 'an oracle result'} lies beyond ±${max}`;
  else if (narrowedOut) why = `the FP16 values of the inputs give a result beyond ±${max}`;
  else if (ideal > DOMAIN_SHARE * bound) why = `FP16 storage alone costs ${ideal.toPrecision(3)} (> ${DOMAIN_SHARE} of the bound)`;
  const inDomain = c.check === 'exact' || why === undefined;
  if ('refused' in got) {
    error = Infinity;
    // A refused exact case computed nothing: every element is wrong.
    if (c.check === 'exact') mismatches = elements;
    why = why === undefined ? `the session refused it: ${got.refused}` : `${why}; the session refused it: ${got.refused}`;
  }
  return { name: c.name, check: c.check, elements, error, ideal, mismatches, vsF32, inDomain, scale: scaleOf(c.inputs), ...(why !== undefined ? { why } : {}) };
}

/** The largest magnitude among a case's float inputs, NaN when one is NaN. */
function scaleOf(inputs: TensorMap): number {
  let m = 0;
  for (const t of Object.values(inputs)) {
    if (!isFloat(t.dtype)) continue;
    for (const x of t.data) m = Number.isNaN(x) ? NaN : Math.max(m, Math.abs(x));
  }
  return m;
}

/** True for the session's typed refusals of an out-of-range F32 value (the case's verdict, not a crash). */
export function isRangeRefusal(e: unknown): e is NarrowingRangeInput | NarrowingRangeResult {
  return e instanceof NarrowingRangeInput || e instanceof NarrowingRangeResult;
}

/** Adds one op's case reports up into its report. */
export function opReport(op: string, group: ContractGroup, bound: number, max: number, cases: readonly CaseReport[]): Npu4ContractReport {
  const exact = cases.filter((c) => c.check === 'exact');
  const judged = cases.filter((c) => c.check === 'normwise' && c.inDomain);
  const outside = cases.filter((c) => !c.inDomain);
  const worstOf = <T extends CaseReport>(xs: readonly T[]) => xs.reduce<T | null>((m, c) => (m === null || c.error > m.error ? c : m), null);
  const w = worstOf(judged);
  const o = worstOf(outside);
  const failures = judged.filter((c) => !(c.error <= bound)).length + exact.filter((c) => c.mismatches > 0).length;
  const notes: string[] = [];
  const flips = exact.reduce((n, c) => n + c.vsF32 - c.mismatches, 0);
  if (op === 'ge') notes.push(`${flips} element(s) differ from the F32 oracle where both operands round to one FP16 value (ge compares what the device holds)`);
  for (const c of exact) if (c.mismatches > 0) notes.push(`${c.name}: ${c.mismatches} element(s) differ bit for bit`);
  for (const c of judged) if (!(c.error <= bound)) notes.push(`${c.name}: normwise ${c.error.toPrecision(3)} > ${bound}${c.why ? ` (${c.why})` : ''}`);
  if (outside.length > 0) notes.push(`outside the domain: ${outside.map((c) => c.name).join(', ')}`);
  const contract = group === 'program' || group === 'arithmetic' ? `normwise ${bound} within ±${max}`
    : op === 'ge' ? 'exact on its FP16 operands' : `bit exact in FP16${judged.length > 0 ? `; F32 values within normwise ${bound}` : ''}`;
  return {
    op, group, contract, cases: cases.length, inDomain: cases.length - outside.length,
    elements: cases.reduce((n, c) => n + c.elements, 0),
    worst: w === null ? null : { case: w.name, error: w.error, ratio: w.error / bound },
    outside: o === null ? null : { case: o.name, error: o.error, ideal: o.ideal, why: o.why ?? '' },
    mismatches: exact.reduce((n, c) => n + c.mismatches, 0), failures,
    pass: failures === 0 && cases.length > outside.length, notes, caseReports: cases,
  };
}
