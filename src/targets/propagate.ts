/**
 * A program's numerics class and per-result tolerances on a target whose numerics policy is its
 * per-op contracts (`{ kind: 'contracts' }`, the XDNA2's), from the contracts its admission table
 * attaches and the step contracts its row kernels' bounds are derived from. A result is Exact when every equation it depends on is exact (bit-equal to the
 * oracle); otherwise the program is Contract and each result gets an `absrel` tolerance propagated
 * through its chain. Each value v carries (abs, rel): |device - oracle| <= abs + rel |oracle|.
 *
 * Propagation (first order, conservative under the premises recorded in `assumptions`):
 * - an op's own error on equal operands: its contract. add/sub within 2 x 2^-23 of the larger operand
 *   is within 4 x 2^-23 of the result: either the result is at least half the larger operand, or the
 *   operands are within a factor 2 of each other and the core's adder is exact there (Sterbenz).
 *   A last-axis sum is relative to the row's magnitudes, which equals its sum only without cancellation.
 * - inexact operands: mul/div add relative errors (+ 2^-23 for the two independent roundings), recip
 *   and neg keep them, sqrt halves them; gather, max, reduce_max select and keep the worst; add, sub
 *   and sum keep the worst relative error (an assumption: no cancellation) and add the absolute parts
 *   (n of them for a sum of n terms); exp turns an absolute error d of its argument into relative d
 *   and its domain caps |x| at 88, so rel' += abs + 88 rel; log turns relative into absolute; tanh and
 *   erf have |f'| <= 1.13 and |x f'(x)| <= 0.49, so abs' += 1.13 abs + 0.49 rel. A row kernel re-derives
 *   its bound with its params' errors as the starting ε. An absolute error meeting a mul, div, recip,
 *   sqrt, log or row kernel is carried over unscaled, as if the other magnitudes were at most 1, and
 *   that premise is recorded; so is a compare (ge) of inexact operands, which can flip near a tie.
 */
import type { CheckedProgram } from '../ir/checked.js';
import { eqnOuts, isLiteral } from '../ir/types.js';
import type { RowBody } from '../ir/types.js';
import { deriveRowBound, type StepContracts } from './rowBounds.js';
import type { NumericsClass } from '../numerics/classes.js';
import type { Tolerance } from '../numerics/compare.js';
import { F32_EPS } from './contract.js';
import type { OpContract } from './contract.js';
import type { Target } from './target.js';
import { admissionOf } from './target.js';

/** A program's numerics class, each result's tolerance, and the premises each tolerance rests on. */
export interface ProgramNumerics {
  readonly numericsClass: NumericsClass;
  readonly tolerance: Record<string, Tolerance>;
  readonly assumptions: Record<string, string[]>;
}

interface Err { readonly abs: number; readonly rel: number; readonly notes: readonly string[] }

const EXACT: Err = { abs: 0, rel: 0, notes: [] };
const u = F32_EPS;
const inexact = (e: Err) => e.abs > 0 || e.rel > 0;
const merge = (...es: Err[]) => [...new Set(es.flatMap((e) => e.notes))];

// The op's own (abs, rel) on equal operands, relative to the result.
function own(c: OpContract | undefined, cols: number): { abs: number; rel: number; note?: string } {
  if (c === undefined) return { abs: 0, rel: 0 };
  const e = c.error;
  switch (e.kind) {
    case 'exact': return { abs: 0, rel: 0 };
    case 'larger-operand': return { abs: 0, rel: 2 * e.rel };
    case 'absrel': return { abs: e.abs, rel: e.rel };
    case 'rel': return { abs: 0, rel: e.rel };
    case 'sum-magnitude': return { abs: 0, rel: e.perTerm * cols, note: 'relative to the row\'s magnitudes: a row that cancels is bounded by its magnitudes, not its sum' };
  }
}

/** One unit in the last place near 1 of a float dtype: the re-rounding of an inexact operand's result in it. */
const ULP_NEAR_ONE: Readonly<Record<string, number>> = { f16: 2 ** -10, bf16: 2 ** -7 };

function propagate(op: string, ins: readonly Err[], at: string, body: RowBody | undefined, cols: number, steps: StepContracts, unit = u): Err {
  const [a = EXACT, b = EXACT] = ins;
  const rr = ins.some(inexact) ? unit : 0;
  const maxRel = Math.max(0, ...ins.map((e) => e.rel));
  const sumAbs = ins.reduce((s, e) => s + e.abs, 0);
  const notes = merge(...ins);
  const scaled = (what: string) => (sumAbs > 0 ? [`${at}: the absolute error reaching this ${what} is taken as unscaled (magnitudes at most 1)`] : []);
  switch (op) {
    case 'mul': case 'div':
      return { abs: sumAbs, rel: a.rel + b.rel + rr, notes: [...notes, ...scaled(op)] };
    case 'recip': return { abs: a.abs, rel: a.rel + rr, notes: [...notes, ...scaled(op)] };
    case 'neg': case 'gather': case 'max': case 'reduce_max':
      return { abs: Math.max(0, ...ins.map((e) => e.abs)), rel: maxRel, notes };
    case 'add': case 'sub': case 'reduce_sum': {
      const n = op === 'reduce_sum' ? cols : 1;
      const cancel = ins.some(inexact) ? [`${at}: ${op} of an inexact value is assumed not to cancel`] : [];
      return { abs: n * sumAbs, rel: maxRel + rr, notes: [...notes, ...cancel] };
    }
    case 'sqrt': return { abs: a.abs, rel: a.rel / 2 + rr, notes: [...notes, ...scaled(op)] };
    case 'exp': return { abs: 0, rel: a.abs + 88 * a.rel + rr, notes };
    case 'log': return { abs: a.rel + a.abs, rel: rr, notes: [...notes, ...scaled(op)] };
    case 'tanh': case 'erf': return { abs: 1.13 * a.abs + 0.49 * a.rel, rel: rr, notes };
    case 'ge': return { abs: 0, rel: 0, notes: ins.some(inexact) ? [...notes, `${at}: a compare of inexact operands can flip near a tie`] : notes };
    case 'row_kernel': {
      if (body === undefined) return { abs: sumAbs, rel: maxRel + rr, notes };
      const d = deriveRowBound(body, cols, steps, ins.map((e) => e.rel));
      // The derivation already holds the params' ε; the row kernel's own contract is added by the caller.
      return { abs: sumAbs, rel: d.ok ? d.rel : maxRel + rr, notes: [...notes, ...scaled('row kernel')] };
    }
    default: return { abs: sumAbs, rel: maxRel + rr, notes };
  }
}

/** The numerics class and per-result tolerances of a checked program on `target`. */
export function programTolerance(checked: CheckedProgram, target: Target): ProgramNumerics {
  if (target.numerics.kind !== 'contracts') throw new RangeError(`${target.name} holds programs to a class, not to propagated contracts`);
  const steps = target.numerics.stepContracts;
  const errs = new Map<string, Err>();
  const errOf = (o: unknown): Err => (typeof o === 'string' ? errs.get(o) ?? EXACT : EXACT);
  for (const e of checked.eqns) {
    const at = `equation ${e.index} (${e.op})`;
    const a = admissionOf(target, e);
    const contract = a.admitted ? a.contract : undefined;
    const top = e.ins.reduce((t, v) => (v.shape.length > t.shape.length ? v : t), e.ins[0] ?? { shape: [] as number[] });
    const cols = top.shape[top.shape.length - 1] ?? 0;
    const ins = e.eqn.in.map((o) => (isLiteral(o) ? EXACT : errOf(o)));
    const body = e.op === 'row_kernel' ? (e.eqn.attrs['body'] as RowBody) : undefined;
    let out: Err;
    if (!ins.some(inexact)) {
      // On exact operands a row kernel's own bound is its derived one, in its contract.
      const o = own(contract, cols);
      out = { abs: o.abs, rel: o.rel, notes: o.note !== undefined ? [`${at}: ${o.note}`] : [] };
    } else {
      const p = propagate(e.op, ins, at, body, cols, steps, ULP_NEAR_ONE[e.outs[0]?.dtype ?? 'f32'] ?? u);
      // A derived row bound holds the body's own errors; where the derivation of a typed body stops (e.g. at
      // a libm step, derived here with the f32 steps), the kernel's own contract is added to the carried ε.
      const typed = e.outs[0]?.dtype === 'f16' || e.outs[0]?.dtype === 'bf16';
      const derived = body !== undefined && (!typed || deriveRowBound(body, cols, steps, ins.map((q) => q.rel)).ok);
      const o = derived ? { abs: 0, rel: 0 } : own(contract, cols);
      const carried = body !== undefined && !derived ? [`${at}: its bound is derived for exact inputs; its inputs' ε is carried through it unscaled`] : [];
      out = { abs: p.abs + o.abs, rel: p.rel + o.rel, notes: [...p.notes, ...(o.note !== undefined ? [`${at}: ${o.note}`] : []), ...carried] };
    }
    if (!a.admitted) out = { ...out, notes: [...out.notes, `${at} is refused on ${target.name}`] };
    for (const n of eqnOuts(e.eqn)) errs.set(n, out);
  }
  const tolerance: Record<string, Tolerance> = {};
  const assumptions: Record<string, string[]> = {};
  let exact = true;
  for (const r of checked.program.results) {
    const err = errs.get(r) ?? EXACT;
    const dtype = checked.types.get(r)?.dtype;
    const counted = dtype === 'i32' || dtype === 'bool' || !inexact(err) ? { kind: 'exact' as const } : { kind: 'absrel' as const, abs: err.abs, rel: err.rel };
    if (inexact(err)) exact = false;
    tolerance[r] = counted;
    assumptions[r] = [...err.notes];
  }
  return { numericsClass: exact ? 'Exact' : 'Contract', tolerance, assumptions };
}
