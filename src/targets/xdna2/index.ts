/**
 * The AMD XDNA2 target (AIE2P, Strix Halo): its one admission table. Each row decides op, dtype and axis
 * for one op, and an admitted equation carries its measured contract (xdna2Contracts.ts). Every refusal
 * names a capability from XDNA2_CAPABILITIES; the scheme is in docs/XDNA2.md and the names are stable.
 */
import { deriveRowBound } from '../rowBounds.js';
import type { CheckedEqn } from '../../ir/checked.js';
import type { DType, RowBody } from '../../ir/types.js';
import { elementDtype, isLiteral } from '../../ir/types.js';
import type { OpContract } from '../contract.js';
import { admit, refuse } from '../target.js';
import type { Admission, AdmissionRule, AdmissionTable, Target } from '../target.js';
import { XDNA2_BOUNDS, XDNA2_CONTRACTS, XDNA2_STEP_CONTRACTS } from './contracts.js';

export { XDNA2_BOUNDS, XDNA2_CONTRACTS, XDNA2_STEP_CONTRACTS } from './contracts.js';

/**
 * Every capability name the XDNA2 table refuses with, grouped by the first segment:
 * `op.*` no core for the op in any form; `unary.*` / `binary.*` an elementwise op with no verified core;
 * `movement.*` data movement other than gather; `collective.*` collectives; `dtype.*` an admitted op over
 * an element type it is not verified for; `reduce.axis.non-last` a reduction over anything but the last
 * axis alone; `elementwise.broadcast` a named scalar (not an inline literal) against a tensor.
 */
export const XDNA2_CAPABILITIES = [
  'op.matmul', 'op.matmul_id', 'op.convert', 'op.iota',
  'unary.rsqrt', 'unary.abs', 'unary.logistic', 'unary.sin', 'unary.cos',
  'binary.min',
  'movement.reshape', 'movement.transpose', 'movement.broadcast', 'movement.slice', 'movement.concat',
  'movement.dynamic_update_slice',
  'collective.all_reduce',
  'dtype.f16', 'dtype.bf16', 'dtype.i32', 'dtype.bool',
  'reduce.axis.non-last',
  'elementwise.broadcast',
] as const;
/** A capability the XDNA2 target may name in a refusal. */
export type Xdna2Capability = (typeof XDNA2_CAPABILITIES)[number];

const no = (capability: Xdna2Capability): Admission => refuse(capability);

// F32 is admitted wherever an op is, so only the other element types have a refusal.
const DTYPE_CAPABILITY = { f16: 'dtype.f16', bf16: 'dtype.bf16', i32: 'dtype.i32', bool: 'dtype.bool' } as const satisfies Record<Exclude<DType, 'f32'>, Xdna2Capability>;

// The first operand whose element type is neither f32 nor one of `also`, as its dtype capability.
function dtypeRefusal(e: CheckedEqn, also: readonly DType[], operands: readonly number[]): Admission | undefined {
  for (const k of operands) {
    const t = e.ins[k];
    // A quantized operand never reaches a row of this table: the target takes none (admissionOf).
    const d = t === undefined ? undefined : elementDtype(t.dtype, `operand ${k} of equation ${e.index}`);
    if (d !== undefined && d !== 'f32' && !also.includes(d)) return no(DTYPE_CAPABILITY[d]);
  }
  return undefined;
}

const allOperands = (e: CheckedEqn) => e.ins.map((_, k) => k);

/** A pointwise F32 op over dense tensors; a scalar operand against a tensor must be an inline literal. */
function pointwise(contract: OpContract): AdmissionRule {
  return (e) => {
    const bad = dtypeRefusal(e, [], allOperands(e));
    if (bad) return bad;
    const out = e.outs[0]?.shape.length ?? 0;
    const named = e.ins.some((t, k) => t.shape.length < out && !isLiteral(e.eqn.in[k]!));
    return named ? no('elementwise.broadcast') : admit(contract);
  };
}

/** A reduction of F32 over the last axis alone. */
function lastAxis(contract: OpContract): AdmissionRule {
  return (e) => {
    const bad = dtypeRefusal(e, [], [0]);
    if (bad) return bad;
    const rank = e.ins[0]?.shape.length ?? 0;
    const axes = e.eqn.attrs['axes'];
    const last = Array.isArray(axes) && axes.length === 1 && rank > 0 && axes[0] === rank - 1;
    return last ? admit(contract) : no('reduce.axis.non-last');
  };
}

/** A row kernel of F32 whose body has a derived bound; its contract is that bound. */
const rowKernel: AdmissionRule = (e) => {
  const bad = dtypeRefusal(e, [], allOperands(e));
  if (bad) return bad;
  const top = e.ins.reduce((t, u) => (u.shape.length > t.shape.length ? u : t), e.ins[0]!);
  const cols = top.shape[top.shape.length - 1] ?? 0;
  const b = deriveRowBound(e.eqn.attrs['body'] as RowBody, cols, XDNA2_STEP_CONTRACTS);
  if (!b.ok) return { admitted: false, refusal: { kind: 'missing-bound', step: b.step, bound: b.bound } };
  return admit({ error: { kind: 'rel', rel: b.rel }, domain: { kind: 'row-steps' }, note: `derived from ${b.steps.length} steps over ${cols} columns` });
};

/** Gather of F32 or I32 elements along any axis; the format already makes its indices I32. */
const gather: AdmissionRule = (e) => dtypeRefusal(e, ['i32'], [0]) ?? admit(XDNA2_CONTRACTS.gather);

const c = XDNA2_CONTRACTS;

/** The XDNA2 admission table: the planner, the feature matrix and the docs read it; nothing else decides. */
export const XDNA2_ADMISSION = {
  add: pointwise(c.add), sub: pointwise(c.sub), mul: pointwise(c.mul), div: pointwise(c.div),
  max: pointwise(c.max), ge: pointwise(c.ge),
  min: () => no('binary.min'),
  neg: pointwise(c.neg), recip: pointwise(c.recip), exp: pointwise(c.exp), log: pointwise(c.log),
  tanh: pointwise(c.tanh), erf: pointwise(c.erf), sqrt: pointwise(c.sqrt),
  rsqrt: () => no('unary.rsqrt'), abs: () => no('unary.abs'), logistic: () => no('unary.logistic'),
  sin: () => no('unary.sin'), cos: () => no('unary.cos'),
  convert: () => no('op.convert'),
  reduce_sum: lastAxis(c.reduce_sum), reduce_max: lastAxis(c.reduce_max),
  matmul: () => no('op.matmul'),
  // A data-dependent weight read (the experts an index chooses): XDNA2.md gives no core or DMA form for it.
  matmul_id: () => no('op.matmul_id'),
  gather,
  reshape: () => no('movement.reshape'), transpose: () => no('movement.transpose'),
  broadcast: () => no('movement.broadcast'), slice: () => no('movement.slice'),
  concat: () => no('movement.concat'), iota: () => no('op.iota'),
  dynamic_update_slice: () => no('movement.dynamic_update_slice'),
  row_kernel: rowKernel,
  all_reduce: () => no('collective.all_reduce'),
} satisfies AdmissionTable;

/** The XDNA2 target: planned here, compiled by src/compiler/aie, run by the xdna2 device. */
export const XDNA2_TARGET: Target = {
  name: 'xdna2', device: 'xdna2', contexts: XDNA2_BOUNDS.contexts, part: 'xdna2:aie2p', admission: XDNA2_ADMISSION,
  numerics: { kind: 'contracts', stepContracts: XDNA2_STEP_CONTRACTS }, quantizedWeights: [],
};
