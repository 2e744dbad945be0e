/**
 * The host contracts (contracts.ts) in the vocabulary `run --verify` propagates (src/targets/contract.ts,
 * propagate.ts), against the oracle's rounded f32 results. Correctly rounded and exact ops are exact
 * there; a unary function (≤ 1 ulp of the exact value) is within 2^-23 of its result relatively, or the
 * least subnormal; a sum and a dot product are relative to their terms' magnitudes (perTerm·n of them,
 * n the row's length: γ(n) < 1.01·n·u for n < 2^17, and 2u·n covers γ(K+2) for K >= 2), which is
 * relative to the result only where the terms do not cancel (the premise propagate.ts records).
 */
import { F32_EPS } from '../contract.js';
import type { OpContract } from '../contract.js';
import type { OpName } from '../../ops/rule.js';
import type { CheckedEqn } from '../../ir/checked.js';
import type { StepContracts } from '../rowBounds.js';

const EXACT: OpContract = { error: { kind: 'exact' }, domain: { kind: 'any' } };
const UNARY: OpContract = { error: { kind: 'absrel', abs: 2 ** -149, rel: F32_EPS }, domain: { kind: 'any' }, note: '<= 1 ulp of the exact value' };
const SUM: OpContract = { error: { kind: 'sum-magnitude', perTerm: F32_EPS }, domain: { kind: 'finite-result' }, note: 'γ(C)·Σ|x|' };
const DOT: OpContract = { error: { kind: 'sum-magnitude', perTerm: 1.5 * F32_EPS }, domain: { kind: 'finite-result' }, note: 'γ(K+2)·Σ|x·w|' };

/** Each admitted op's contract for run --verify (row kernels: derived per body, see index.ts). */
export const HOST_OP_CONTRACTS = {
  add: EXACT, sub: EXACT, mul: EXACT, div: EXACT, max: EXACT, min: EXACT, ge: EXACT,
  neg: EXACT, abs: EXACT, recip: EXACT, sqrt: EXACT,
  rsqrt: UNARY, exp: UNARY, log: UNARY, tanh: UNARY, erf: UNARY, logistic: UNARY, sin: UNARY, cos: UNARY,
  convert: EXACT, reduce_sum: SUM, reduce_max: EXACT, matmul: DOT, matmul_id: DOT, gather: EXACT,
  reshape: EXACT, transpose: EXACT, broadcast: EXACT, slice: EXACT, concat: EXACT, dynamic_update_slice: EXACT, iota: EXACT,
  row_kernel: { error: { kind: 'rel', rel: 8 * F32_EPS }, domain: { kind: 'row-steps' } },
} as const satisfies Readonly<Record<Exclude<OpName, 'all_reduce'>, OpContract>>;

/** The unary functions evaluated through libm: within 1 ulp of the oracle's rounded result, in any dtype. */
const LIBM = ['rsqrt', 'exp', 'log', 'tanh', 'erf', 'logistic', 'sin', 'cos'] as const;

/**
 * 1 ulp of a 16-bit float relative to the result: 2^-10 (f16) or 2^-7 (bf16) of |want|, or the least
 * subnormal. The typed kernels (src/native/host/typed.cc) compute in f64 and round once, as the oracle.
 */
const HALF_UNARY: Readonly<Record<'f16' | 'bf16', OpContract>> = {
  f16: { error: { kind: 'absrel', abs: 2 ** -24, rel: 2 ** -10 }, domain: { kind: 'any' }, note: '<= 1 f16 ulp of the exact value' },
  bf16: { error: { kind: 'absrel', abs: 2 ** -133, rel: 2 ** -7 }, domain: { kind: 'any' }, note: '<= 1 bf16 ulp of the exact value' },
};

/**
 * The contract of one admitted equation (not a row kernel): f32 ops the table above; f16, bf16 and i32
 * arithmetic on the typed kernels is the oracle's result bit for bit (computed in f64 in the oracle's
 * order and rounded once; i32 wraps), but for the libm functions, within 1 ulp of the dtype.
 */
export function hostOpContract(op: Exclude<OpName, 'all_reduce' | 'row_kernel'>, e: CheckedEqn): OpContract {
  const d = (e.ins[0] ?? e.outs[0]!).dtype;
  if (op === 'reduce_sum' && d === 'f32') {
    // The sum runs over the reduced elements, wherever they lie; the vocabulary counts the operand's last
    // axis, so the per-term bound is scaled to n reduced terms (the same γ(n)·Σ|x| for a last-axis sum).
    const x = e.ins[0]!;
    const axes = (e.eqn.attrs['axes'] as readonly number[] | undefined) ?? [];
    const n = axes.reduce((p, a) => p * x.shape[a]!, 1);
    const last = x.shape[x.shape.length - 1] ?? 1;
    return n === last || last === 0 ? SUM : { ...SUM, error: { kind: 'sum-magnitude', perTerm: (F32_EPS * n) / last }, note: `γ(${n})·Σ|x| over the ${n} reduced terms` };
  }
  if (d === 'f32' || op === 'convert' || op === 'gather' || op === 'matmul_id') return HOST_OP_CONTRACTS[op];
  if ((d === 'f16' || d === 'bf16') && (LIBM as readonly string[]).includes(op)) return HALF_UNARY[d];
  return EXACT;
}

/** The steps a host row kernel's bound is derived from: f32 steps, each correctly rounded. */
export const HOST_STEP_CONTRACTS: StepContracts = {
  add: F32_EPS / 2,
  sumPerTerm: F32_EPS,
  sqrt: F32_EPS / 2,
  reround: F32_EPS,
};

/**
 * The steps of an f16 or bf16 row kernel on the typed kernels: each step on exact operands is the
 * oracle's bit for bit, a libm step within 1 ulp of the dtype (2u: u = 2^-11 for f16, 2^-8 for bf16).
 * On inexact operands the two roundings to the dtype are 2u apart, plus a margin for the f64
 * evaluation's own rounding on either side (2^-52 an operation, a term of a sum).
 */
export const HOST_TYPED_STEP_CONTRACTS: Readonly<Record<'f16' | 'bf16', StepContracts>> = {
  f16: { add: 2 ** -52, sumPerTerm: 2 ** -52, sqrt: 2 ** -52, reround: 2 ** -10 + 2 ** -50, typed: { libm: 2 ** -10 } },
  bf16: { add: 2 ** -52, sumPerTerm: 2 ** -52, sqrt: 2 ** -52, reround: 2 ** -7 + 2 ** -50, typed: { libm: 2 ** -7 } },
};
