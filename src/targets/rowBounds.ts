/**
 * Derived error bounds for a `row_kernel` body: a relative bound on |device - oracle| / |oracle| for each
 * of its results, built step by step from the target's per-op contracts, or the step at which no bound
 * can be derived. docs/XDNA2.md works the RMSNorm example through by hand.
 *
 * Each body value carries what is provable about its sign (`any`, `nonneg`, `posnormal`: a finite
 * number >= 2^-126) and ε, a bound on its relative distance from the oracle's value. A step's ε is
 *
 *     ε_out = (1 + κ)(1 + ρ)(1 + c) - 1
 *
 * - κ, propagation: what the operands' errors do through the exact operation. mul: (1+εa)(1+εb) - 1,
 *   div: (1+εa)/(1-εb) - 1 (relative errors add), recip 1/(1-ε) - 1, sqrt 1 - sqrt(1-ε) (about ε/2:
 *   sqrt halves), a non-cancelling add of non-negative operands and a sum of non-negative terms max ε
 *   (a weighted mean of the terms' errors), neg, max and reduce_max max ε (they select, never round).
 * - ρ, re-rounding: the device rounds f(a', b') and the oracle f(a, b); when the operands already differ
 *   (κ > 0) the two roundings are independent, two half-units: ρ = 2^-23. With equal operands ρ = 0.
 * - c, the op's own contract on equal operands: 0 for mul, div, recip, neg and max (bit-exact), the
 *   add's 2 x 2^-23 (relative to the larger operand, which for non-negative operands is at most the sum),
 *   a sum of n non-negative terms 2 x n x 2^-23 (its sum of magnitudes is the sum itself), sqrt 4e-7.
 *
 * Composing the factors multiplicatively keeps the products of errors instead of dropping them. The bound
 * holds while every step stays inside its own op's domain (finite, normal values), as the op contracts do.
 * A step with no bound (a sub, an add or sum that may cancel, a sqrt of a possibly non-positive value,
 * exp and the other ops with an absolute error part) ends the derivation with the reason.
 *
 * With `typed` contracts (the host's f16 and bf16 kernels: each step in f64, rounded once to the dtype)
 * a step on exact operands is exact (the oracle's bit for bit) and a libm step on exact operands is
 * within `typed.libm` (1 ulp of the dtype); later steps follow the rules above with the dtype's ρ, and a
 * libm step of an inexact operand has no bound.
 */
import type { Operand, RowBody } from '../ir/types.js';
import { isLiteral } from '../ir/types.js';

/** What is provable about a value's sign: nothing, >= 0 (or -0), or a positive normal number. */
type Sign = 'any' | 'nonneg' | 'posnormal';

/** The per-step contracts a derivation uses: relative bounds published by the target. */
export interface StepContracts {
  /** add of non-negative operands: relative to the larger operand. */
  readonly add: number;
  /** a sum of n non-negative terms is within perTerm x n of the sum. */
  readonly sumPerTerm: number;
  /** sqrt of a positive normal number. */
  readonly sqrt: number;
  /** Two half-units of the oracle's rounding (2^-23 for f32): ρ above. */
  readonly reround: number;
  /**
   * The typed kernels' steps (f16, bf16): every step on exact operands is the oracle's result bit for bit
   * (computed in f64 and rounded once to the dtype), but a libm function's, which is within `libm` of its
   * result relatively (1 ulp of the dtype). Absent for f32 bodies, whose derivation is the one above.
   */
  readonly typed?: { readonly libm: number };
}

/** One step of a derivation, for the plan, the docs and the tests. */
interface StepBound {
  readonly step: number;
  readonly op: string;
  readonly out: string;
  readonly sign: Sign;
  /** ε of the step's value. */
  readonly rel: number;
  /** How ε and the sign follow from the operands. */
  readonly why: string;
}

/** A derived bound (the largest ε of the body's results) or the step that has none and why. */
export type RowBound =
  | { readonly ok: true; readonly rel: number; readonly steps: readonly StepBound[] }
  | { readonly ok: false; readonly step: number; readonly bound: string; readonly steps: readonly StepBound[] };

interface Fact { readonly sign: Sign; readonly rel: number }

const NO_CORE = (op: string) => `${op}: no contract for this op on the target, so no bound`;
const ABS_PART = (op: string) => `${op}: no relative bound inside a row kernel (its contract has an absolute part)`;
/** The libm functions of the typed kernels, each within 1 ulp of its dtype; exp and logistic are never negative. */
const LIBM: readonly string[] = ['exp', 'log', 'tanh', 'erf', 'logistic', 'sin', 'cos', 'rsqrt'];

/** A libm step of a value already off has no relative bound (its condition is unbounded). */
const LIBM_INEXACT = (op: string) => `${op}: no relative bound for a libm step whose operand is already inexact (|x f'(x)/f(x)| is unbounded)`;

/** The bound strings a refusal carries, by the step that has none; stable (tests and scripts match them). */
export const MISSING_BOUND = {
  sub: 'sub: no bound for a difference that may cancel',
  add: 'add: no bound for a sum whose operands are not both provably non-negative (it may cancel)',
  reduceSum: 'reduce_sum: no bound for a sum of terms that are not provably non-negative (it may cancel)',
  sqrt: 'sqrt: no bound unless its operand is provably a positive normal number',
  absPart: ABS_PART,
  libmInexact: LIBM_INEXACT,
  noCore: NO_CORE,
} as const;

const f32Min = 2 ** -126;

function literalFact(value: number): Fact {
  const v = Math.fround(value);
  if (v >= f32Min && Number.isFinite(v)) return { sign: 'posnormal', rel: 0 };
  if (v >= 0) return { sign: 'nonneg', rel: 0 };
  return { sign: 'any', rel: 0 };
}

const nonneg = (s: Sign) => s !== 'any';
const compose = (...fs: number[]) => fs.reduce((p, f) => p * (1 + f), 1) - 1;

type StepOutcome = { fact: Fact; why: string } | { missing: string };

/**
 * A step of the typed kernels: on exact operands the oracle's step bit for bit (ε 0, the sign what
 * the f32 derivation proves, else any), a libm step within its 1 ulp; on inexact operands the f32
 * derivation's rules with the dtype's contracts, and a libm step has no bound.
 */
function typedOutcome(op: string, ins: readonly Operand[], facts: readonly Fact[], cols: number, k: StepContracts, libm: number): StepOutcome {
  const exact = facts.every((f) => f.rel === 0);
  if (LIBM.includes(op)) {
    if (!exact) return { missing: LIBM_INEXACT(op) };
    return { fact: { sign: op === 'exp' || op === 'logistic' ? 'nonneg' : 'any', rel: libm }, why: `libm on an exact operand: within 1 ulp of the dtype (${libm})` };
  }
  if (!exact) return stepOutcome(op, ins, facts, cols, k);
  const r = stepOutcome(op, ins, facts, cols, k);
  return { fact: { sign: 'missing' in r ? 'any' : r.fact.sign, rel: 0 }, why: 'exact operands: the oracle\'s step, rounded once to the dtype' };
}

function stepOutcome(op: string, ins: readonly Operand[], facts: readonly Fact[], cols: number, k: StepContracts): StepOutcome {
  const [a = { sign: 'any', rel: 0 }, b = { sign: 'any', rel: 0 }] = facts;
  const rr = facts.some((f) => f.rel > 0) ? k.reround : 0;
  const maxRel = Math.max(0, ...facts.map((f) => f.rel));
  switch (op) {
    case 'mul': {
      const square = ins.length === 2 && !isLiteral(ins[0]!) && ins[0] === ins[1];
      const sign: Sign = square || (nonneg(a.sign) && nonneg(b.sign)) ? 'nonneg' : 'any';
      return { fact: { sign, rel: compose(compose(a.rel, b.rel), rr) }, why: `exact; (1+εa)(1+εb)${rr ? ' re-rounded' : ''}${square ? '; a square' : ''}` };
    }
    case 'div': {
      const sign: Sign = nonneg(a.sign) && nonneg(b.sign) ? 'nonneg' : 'any';
      return { fact: { sign, rel: compose((1 + a.rel) / (1 - b.rel) - 1, rr) }, why: `exact; (1+εa)/(1-εb)${rr ? ' re-rounded' : ''}` };
    }
    case 'recip':
      return { fact: { sign: nonneg(a.sign) ? 'nonneg' : 'any', rel: compose(1 / (1 - a.rel) - 1, rr) }, why: 'exact; 1/(1-ε)' };
    case 'neg':
      return { fact: { sign: 'any', rel: a.rel }, why: 'exact; a sign flip keeps ε' };
    case 'max': case 'reduce_max': {
      const sign: Sign = facts.some((f) => f.sign === 'posnormal') ? 'posnormal' : facts.some((f) => nonneg(f.sign)) ? 'nonneg' : 'any';
      return { fact: { sign, rel: maxRel }, why: 'exact; selects an operand: max ε' };
    }
    case 'add': {
      if (!nonneg(a.sign) || !nonneg(b.sign)) return { missing: MISSING_BOUND.add };
      const sign: Sign = a.sign === 'posnormal' || b.sign === 'posnormal' ? 'posnormal' : 'nonneg';
      return { fact: { sign, rel: compose(maxRel, rr, k.add) }, why: `non-negative operands cannot cancel: max ε${rr ? ', re-rounded' : ''}, + ${k.add / 2 ** -23} x 2^-23` };
    }
    case 'reduce_sum': {
      if (!nonneg(a.sign)) return { missing: MISSING_BOUND.reduceSum };
      const c = k.sumPerTerm * cols;
      return { fact: { sign: a.sign === 'posnormal' && cols > 0 ? 'posnormal' : 'nonneg', rel: compose(a.rel, rr, c) }, why: `${cols} non-negative terms: ε${rr ? ', re-rounded' : ''}, + ${cols} x ${k.sumPerTerm / 2 ** -23} x 2^-23` };
    }
    case 'sqrt': {
      if (a.sign !== 'posnormal') return { missing: MISSING_BOUND.sqrt };
      return { fact: { sign: 'posnormal', rel: compose(1 - Math.sqrt(1 - a.rel), rr, k.sqrt) }, why: `of a positive normal: halves ε${rr ? ', re-rounded' : ''}, + ${k.sqrt}` };
    }
    case 'sub': return { missing: MISSING_BOUND.sub };
    case 'exp': case 'log': case 'tanh': case 'erf': return { missing: ABS_PART(op) };
    default: return { missing: NO_CORE(op) };
  }
}

/**
 * Derives the relative bound of a row kernel over rows of `cols` columns from the steps' contracts;
 * `inputs` gives each param's own ε when the row inputs are already inexact (0 by default).
 */
export function deriveRowBound(body: RowBody, cols: number, contracts: StepContracts, inputs: readonly number[] = []): RowBound {
  const env = new Map<string, Fact>();
  body.params.forEach((p, j) => env.set(p, { sign: 'any', rel: inputs[j] ?? 0 }));
  const steps: StepBound[] = [];
  for (const [i, s] of body.steps.entries()) {
    const facts = s.in.map((o) => (isLiteral(o) ? literalFact(o.lit) : env.get(o) ?? { sign: 'any' as const, rel: 0 }));
    const r = contracts.typed !== undefined ? typedOutcome(s.op, s.in, facts, cols, contracts, contracts.typed.libm) : stepOutcome(s.op, s.in, facts, cols, contracts);
    if ('missing' in r) return { ok: false, step: i, bound: r.missing, steps };
    env.set(s.out, r.fact);
    steps.push({ step: i, op: s.op, out: s.out, sign: r.fact.sign, rel: r.fact.rel, why: r.why });
  }
  const rel = Math.max(0, ...body.results.map((n) => env.get(n)?.rel ?? 0));
  return { ok: true, rel, steps };
}
