/**
 * What contract verification of the XDNA2 target checks, as data: the ops (every op the target admits,
 * plus the RMSNorm row kernel), each op's contract and what its results are compared with. The runner
 * that compiles each op, runs it on the simulated device through a Session and computes the references
 * on the oracle pool is src/contracts/xdna2.ts: a Session lives in the engine, above devices.
 *
 * The reference, per contract: an exact contract (mul, div, neg, recip, ge, max, reduce_max, gather)
 * is "bit for bit the IEEE result", so it is compared with the oracle's f32 result; every other bound
 * (add, sub, exp, log, tanh, erf, sqrt, reduce_sum, row_kernel) is a distance from the true value of
 * the op on the f32 inputs, so it is compared with the oracle's fp64 reference and the oracle's own
 * rounding does not eat into the bound.
 */
import type { RowBody } from '../../ir/types.js';
import { deriveRowBound } from '../../targets/rowBounds.js';
import type { OpContract } from '../../targets/contract.js';
import { XDNA2_CONTRACTS, XDNA2_STEP_CONTRACTS } from '../../targets/xdna2/index.js';

export type { ContractReport,  } from './contractTally.js';

/** The RMSNorm row kernel a row_kernel contract is verified on (64 columns, with a weight). */
export const RMSNORM_BODY: RowBody = {
  params: ['x', 'w'],
  steps: [
    { op: 'mul', in: ['x', 'x'], out: 'sq' },
    { op: 'reduce_sum', in: ['sq'], out: 'ss' },
    { op: 'div', in: ['ss', { lit: 64 }], out: 'ms' },
    { op: 'add', in: ['ms', { lit: 1e-6 }], out: 'e' },
    { op: 'sqrt', in: ['e'], out: 'r' },
    { op: 'div', in: ['x', 'r'], out: 'y' },
    { op: 'mul', in: ['y', 'w'], out: 'z' },
  ],
  results: ['z'],
};
/** The columns of the verified RMSNorm rows. */
export const RMS_COLS = 64;

/** An op of XDNA2 contract verification. */
export type ContractOp = keyof typeof XDNA2_CONTRACTS | 'row_kernel';
/** Every op the XDNA2 target admits, in report order. */
export const CONTRACT_OPS: readonly ContractOp[] = [...(Object.keys(XDNA2_CONTRACTS) as (keyof typeof XDNA2_CONTRACTS)[]), 'row_kernel'];

const EXACT_OPS: ReadonlySet<ContractOp> = new Set<ContractOp>(['mul', 'div', 'neg', 'recip', 'ge', 'max', 'reduce_max', 'gather']);

/** What an op's results are compared with (see the file's doc). */
export function referenceOf(op: ContractOp): 'oracle-f32' | 'oracle-fp64' {
  return EXACT_OPS.has(op) ? 'oracle-f32' : 'oracle-fp64';
}

/** An op's published contract; the row kernel's is derived from its steps' contracts. */
export function contractOf(op: ContractOp): OpContract {
  if (op !== 'row_kernel') return XDNA2_CONTRACTS[op];
  const b = deriveRowBound(RMSNORM_BODY, RMS_COLS, XDNA2_STEP_CONTRACTS);
  if (!b.ok) throw new Error(`the RMSNorm body has no derived bound: ${b.bound}`);
  return { error: { kind: 'rel', rel: b.rel }, domain: { kind: 'row-steps' }, note: `RMSNorm over ${RMS_COLS} columns, derived bound` };
}
