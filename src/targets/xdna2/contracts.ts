/**
 * The XDNA2 (AIE2P) numbers measured on the hardware (Strix Halo): each admitted op's contract and
 * domain, the per-step contracts a row kernel's bound is derived from, and the region bounds. These are
 * the published figures, to the letter; the admission table (xdna2.ts) attaches them to what it admits.
 */
import type { StepContracts } from '../rowBounds.js';
import { F32_EPS } from '../contract.js';
import type { OpContract } from '../contract.js';

/** The measured bounds of one region (artifact), and the device's hardware contexts. */
export const XDNA2_BOUNDS = {
  tiles: 32,
  streamsIn: 16,
  streamsOut: 16,
  streamsPerTile: 2,
  tileLocalBytes: 64512,
  contexts: 16,
} as const;

const FINITE_NORMAL = { kind: 'finite-normal-result' } as const;
const EXACT = { kind: 'exact' } as const;
// exp, log, tanh and erf share one bound, each over its own domain.
const TRANSCENDENTAL = { kind: 'absrel', abs: 2e-6, rel: 1e-5 } as const;

/** The contracts of the pointwise and reduction ops, by the op that carries each. */
export const XDNA2_CONTRACTS = {
  add: { error: { kind: 'larger-operand', rel: 2 * F32_EPS }, domain: FINITE_NORMAL, note: 'the adder is not round-to-nearest-even; a cancellation that leaves a small result is exact' },
  sub: { error: { kind: 'larger-operand', rel: 2 * F32_EPS }, domain: FINITE_NORMAL, note: 'the adder is not round-to-nearest-even; a cancellation that leaves a small result is exact' },
  mul: { error: EXACT, domain: FINITE_NORMAL },
  div: { error: EXACT, domain: FINITE_NORMAL },
  neg: { error: EXACT, domain: FINITE_NORMAL },
  recip: { error: EXACT, domain: FINITE_NORMAL },
  ge: { error: EXACT, domain: FINITE_NORMAL },
  exp: { error: TRANSCENDENTAL, domain: { kind: 'interval', lo: -87, hi: 88 }, note: 'the core clamps its argument to +-88, so larger arguments saturate instead of overflowing' },
  log: { error: TRANSCENDENTAL, domain: { kind: 'positive-normal' }, note: 'from 1.18e-38 up; smaller inputs are not promised' },
  tanh: { error: TRANSCENDENTAL, domain: { kind: 'finite' }, note: 'saturates exactly' },
  erf: { error: TRANSCENDENTAL, domain: { kind: 'finite' }, note: 'saturates exactly; the design document lists erf among the refused too: it is admitted with this contract (docs/XDNA2.md)' },
  sqrt: { error: { kind: 'rel', rel: 4e-7 }, domain: { kind: 'positive-normal' }, note: 'a software square root: a bit-halving estimate and four Newton steps' },
  max: { error: EXACT, domain: { kind: 'not-nan' }, note: 'a compare and select' },
  reduce_sum: { error: { kind: 'sum-magnitude', perTerm: 2 * F32_EPS }, domain: { kind: 'finite-result' }, note: 'adds in order; a sum that cancels has no relative bound' },
  // The seed states no domain for the last-axis max; it is the max core's compare and select, so it
  // inherits max's domain (the oracle's max returns NaN for a NaN operand, the select need not).
  reduce_max: { error: EXACT, domain: { kind: 'not-nan' }, note: 'a compare and select over the row' },
  gather: { error: EXACT, domain: { kind: 'any' }, note: 'negative zero and NaN payloads included; an index outside the axis is not checked' },
} as const satisfies Readonly<Record<string, OpContract>>;

/** The per-step contracts a row kernel's bound is derived from (src/targets/rowBounds.ts). */
export const XDNA2_STEP_CONTRACTS: StepContracts = {
  add: XDNA2_CONTRACTS.add.error.rel,
  sumPerTerm: XDNA2_CONTRACTS.reduce_sum.error.perTerm,
  sqrt: XDNA2_CONTRACTS.sqrt.error.rel,
  reround: F32_EPS,
};

/** The published derived bound of a 64-column RMSNorm, which our derivation is checked against. */
export const XDNA2_PUBLISHED_RMSNORM_BOUND = 8.5e-6;
