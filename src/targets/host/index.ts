/**
 * The `host` target: the machine's own CPU through the host_kernels addon (src/native/host/,
 * docs/HOST.md). It admits what those kernels compute: the op table's arithmetic in every dtype the
 * oracle runs it in (f32 on the SIMD kernels; f16, bf16 and i32 on the typed kernels, in f64 and
 * rounded once), reductions over any axes (a copy of rank <= 4 brings them last) and gather along any
 * axis, row kernels of f32 (and of f16, bf16 or i32 rows, a libm step where its bound is derived), every quantized
 * weight dtype as a matmul's right operand, a gather's table or a convert's source, and the data
 * movement of rank <= 4 that copy_strided and update carry. Everything else is refused with a stable
 * capability `host.<op>` (or `host.<op>.<dtype>`), so a plan says what is missing.
 */
import type { CheckedEqn } from '../../ir/checked.js';
import { QUANT_DTYPES, isQuantized, numel } from '../../ir/types.js';
import type { AnyDType } from '../../ir/types.js';
import type { OpName } from '../../ops/rule.js';
import { ADMIT, admit, refuse } from '../target.js';
import { HOST_OP_CONTRACTS, HOST_STEP_CONTRACTS, HOST_TYPED_STEP_CONTRACTS, hostOpContract } from './verify.js';
import { deriveRowBound } from '../rowBounds.js';
import type { RowBound } from '../rowBounds.js';
import type { RowBody } from '../../ir/types.js';
import { rmsnormOf } from './rmsnorm.js';
import { rowBodyOf } from './rowBody.js';
import { reduceCopyRank } from './axes.js';
import type { AdmissionRule, AdmissionTable, NumericsPolicy, Target } from '../target.js';

/** The widest rank the addon's strided copy and in-place update take. */
export const HOST_MAX_RANK = 4;

const dtypeOf = (e: CheckedEqn, k: number): AnyDType => e.ins[k]!.dtype;

/** Every operand and result of `e` in one of `dtypes`, or the refusal naming the first that is not. */
function onlyDtypes(op: OpName, dtypes: readonly AnyDType[]): AdmissionRule {
  return (e) => {
    for (const t of [...e.ins, ...e.outs]) {
      if (!dtypes.includes(t.dtype)) return refuse(`host.${op}.${t.dtype}`);
    }
    return ADMIT;
  };
}

/** The dtypes the addon computes arithmetic in: f32 (SIMD), f16, bf16 and i32 (typed.cc). */
const ARITH: readonly AnyDType[] = ['f32', 'f16', 'bf16', 'i32'];
const FLOAT: readonly AnyDType[] = ['f32', 'f16', 'bf16'];

/** A binary op on two operands of one arithmetic dtype (`ge` writes bools). */
function binary(op: OpName): AdmissionRule {
  return (e) => {
    const d = dtypeOf(e, 0);
    if (!ARITH.includes(d) || dtypeOf(e, 1) !== d) return refuse(`host.${op}.${d}`);
    return ADMIT;
  };
}

/** Data movement of rank <= 4, in any element dtype (the copies move bytes). */
function movement(op: OpName): AdmissionRule {
  return (e) => {
    for (const t of [...e.ins, ...e.outs]) {
      if (isQuantized(t.dtype)) return refuse(`host.${op}.${t.dtype}`);
      if (t.shape.length > HOST_MAX_RANK) return refuse(`host.${op}.rank`);
    }
    return ADMIT;
  };
}

/**
 * A reduction over any axes: a strided copy brings them last (of rank <= 4 once adjacent axes that
 * move together are merged: axes.ts), a row kernel reduces.
 */
function reduction(op: OpName): AdmissionRule {
  return (e) => {
    const x = e.ins[0]!;
    if (!ARITH.includes(x.dtype)) return refuse(`host.${op}.${x.dtype}`);
    if (reduceCopyRank(x.shape, (e.eqn.attrs['axes'] as readonly number[] | undefined) ?? []) > HOST_MAX_RANK) return refuse(`host.${op}.rank`);
    return ADMIT;
  };
}

/**
 * matmul: two operands of one arithmetic dtype (f32 on the SIMD kernels, f16, bf16 and i32 on the typed
 * one), or f32 activations `[T, K]` by a quantized weight `[N, K]` (its right operand, transposed).
 */
const matmul: AdmissionRule = (e) => {
  const a = e.ins[0]!;
  const b = e.ins[1]!;
  if (isQuantized(b.dtype)) {
    if (a.dtype !== 'f32') return refuse(`host.matmul.${a.dtype}`);
    return a.shape.length === 2 && b.shape.length === 2 ? ADMIT : refuse('host.matmul.rank');
  }
  if (!ARITH.includes(a.dtype)) return refuse(`host.matmul.${a.dtype}`);
  if (b.dtype !== a.dtype) return refuse(`host.matmul.${b.dtype}`);
  return a.shape.length === b.shape.length ? ADMIT : refuse('host.matmul.rank');
};

/**
 * matmul_id: f32 activations `[T, B, K]` by the experts `[E, N, K]` an i32 index chooses, the experts a
 * weight the kernels read in place (a ggml type, quantized or f32/f16/bf16: each expert is N whole
 * rows of it); a Q4NX weight (tiles of 32 rows across experts) is refused.
 */
const matmulId: AdmissionRule = (e) => {
  const x = e.ins[0]!;
  const w = e.ins[1]!;
  if (x.dtype !== 'f32') return refuse(`host.matmul_id.${x.dtype}`);
  if (w.dtype === 'q4nx_q41') return refuse('host.matmul_id.q4nx_q41');
  return ADMIT;
};

/**
 * gather by i32 indices: a quantized weight's rows (axis 0 of a rank-2 table), or a table in the arena
 * of any element dtype along any axis (a strided copy brings the axis first and the result back).
 */
const gather: AdmissionRule = (e) => {
  const t = e.ins[0]!;
  if (e.ins[1]!.dtype !== 'i32') return refuse(`host.gather.${e.ins[1]!.dtype}`);
  if (isQuantized(t.dtype)) return (e.eqn.attrs['axis'] ?? 0) === 0 && t.shape.length === 2 ? ADMIT : refuse('host.gather.axis');
  return ADMIT;
};

/** convert: between the element dtypes, or from a quantized weight to f32 (dequant). */
const convert: AdmissionRule = (e) => {
  const from = dtypeOf(e, 0);
  const to = e.outs[0]!.dtype;
  if (isQuantized(from)) return to === 'f32' && e.ins[0]!.shape.length === 2 ? ADMIT : refuse(`host.convert.${from}`);
  return ADMIT;
};

/**
 * A row kernel: of f32 rows, the RMSNorm the addon has a kernel for or a body its kernels compose
 * (rowBody.ts); of f16, bf16 or i32 rows, a body of steps the typed kernels compute as the oracle
 * does, each rounded once to the dtype. A libm step (within 1 ulp of the dtype) is admitted where a
 * bound is derived through the steps after it (rowBounds.ts, typedRowBound); where none is, the body is
 * refused with the step that has none (`host.row_kernel.<dtype>.<op>`, e.g. a libm step of an inexact value).
 */
const rowKernel: AdmissionRule = (e) => {
  const d = e.ins[0]!.dtype;
  for (const t of [...e.ins, ...e.outs]) if (t.dtype !== d || !ARITH.includes(d)) return refuse(`host.row_kernel.${t.dtype}`);
  if (e.ins.some((t) => t.shape.length > HOST_MAX_RANK)) return refuse('host.row_kernel.rank');
  if (d === 'f32') return rmsnormOf(e) === null && rowBodyOf(e) === null ? refuse('host.row_kernel.body') : ADMIT;
  if (rowBodyOf(e) === null) return refuse('host.row_kernel.body');
  const b = typedRowBound(e);
  return b === null || b.ok ? ADMIT : refuse(`host.row_kernel.${d}.${(e.eqn.attrs['body'] as RowBody).steps[b.step]!.op}`);
};

/** The derived bound of an f16 or bf16 row kernel on the typed kernels (null for i32: every step exact). */
function typedRowBound(e: CheckedEqn): RowBound | null {
  const d = e.ins[0]!.dtype;
  if (d !== 'f16' && d !== 'bf16') return null;
  const x = e.ins[0]!;
  return deriveRowBound(e.eqn.attrs['body'] as RowBody, x.shape[x.shape.length - 1] ?? 1, HOST_TYPED_STEP_CONTRACTS[d]);
}

/** A binary op whose operands are the result's size, or one of them a scalar. */
function binaryShaped(op: OpName): AdmissionRule {
  const rule = binary(op);
  return (e) => {
    const out = numel(e.outs[0]!.shape);
    for (const t of e.ins) if (numel(t.shape) !== out && numel(t.shape) !== 1) return refuse(`host.${op}.broadcast`);
    return rule(e);
  };
}

/** A unary op in the dtypes the op table runs it in: neg and abs take i32 too. */
const unary = (op: OpName) => onlyDtypes(op, op === 'neg' || op === 'abs' ? ARITH : FLOAT);

/** `rule` with `contract` attached to what it admits (the per-op contract run --verify propagates). */
function contracted(op: keyof typeof HOST_OP_CONTRACTS, rule: AdmissionRule): AdmissionRule {
  return (e) => {
    const a = rule(e);
    if (!a.admitted) return a;
    if (op === 'row_kernel' && e.ins[0]!.dtype !== 'f32') {
      // Every step on the typed kernels is the oracle's step, rounded once to the dtype, but a libm step's
      // 1 ulp of the dtype, carried through the steps after it (typedRowBound).
      const b = typedRowBound(e);
      if (b === null || (b.ok && b.rel === 0)) return admit({ error: { kind: 'exact' }, domain: { kind: 'any' }, note: 'each step the oracle\'s, in its dtype' });
      if (!b.ok) throw new Error(`row kernel admitted without a derived bound (${b.bound})`); // rowKernel refuses it
      return admit({ error: { kind: 'rel', rel: b.rel }, domain: { kind: 'row-steps' }, note: `derived from ${b.steps.length} steps, a libm step within 1 ulp of ${e.ins[0]!.dtype}` });
    }
    if (op === 'row_kernel') {
      const x = e.ins[0]!;
      const b = deriveRowBound(e.eqn.attrs['body'] as RowBody, x.shape[x.shape.length - 1] ?? 1, HOST_STEP_CONTRACTS);
      const C = x.shape[x.shape.length - 1] ?? 1;
      // A body the derivation does not cover is the RMSNorm kernel: (γ(C)/2 + 5u) (docs/HOST.md).
      const rel = b.ok ? b.rel : (1.01 * C / 2 + 5) * 2 ** -24;
      return admit({ error: { kind: 'rel', rel }, domain: { kind: 'row-steps' }, note: b.ok ? `derived from ${b.steps.length} steps` : 'the RMSNorm kernel\'s bound' });
    }
    return admit(hostOpContract(op, e));
  };
}

const ROWS = {
  add: binaryShaped('add'), sub: binaryShaped('sub'), mul: binaryShaped('mul'), div: binaryShaped('div'),
  max: binaryShaped('max'), min: binaryShaped('min'), ge: binaryShaped('ge'),
  neg: unary('neg'), recip: unary('recip'), exp: unary('exp'), log: unary('log'), tanh: unary('tanh'),
  erf: unary('erf'), sqrt: unary('sqrt'), rsqrt: unary('rsqrt'), abs: unary('abs'),
  logistic: unary('logistic'), sin: unary('sin'), cos: unary('cos'),
  convert, reduce_sum: reduction('reduce_sum'), reduce_max: reduction('reduce_max'), matmul, gather,
  reshape: movement('reshape'), transpose: movement('transpose'), broadcast: movement('broadcast'),
  slice: movement('slice'), concat: movement('concat'), dynamic_update_slice: movement('dynamic_update_slice'),
  // The addon's iota kernel writes f32 (exact below 2^24) and i32 indices; f16 and bf16 convert those once.
  iota: (e) => (ARITH.includes(e.outs[0]!.dtype) ? ADMIT : refuse(`host.iota.${e.outs[0]!.dtype}`)),
  row_kernel: rowKernel,
  matmul_id: matmulId,
} satisfies Record<Exclude<OpName, 'all_reduce'>, AdmissionRule>;

export const HOST_ADMISSION = {
  ...(Object.fromEntries(Object.entries(ROWS).map(([op, rule]) => [op, contracted(op as keyof typeof ROWS, rule)])) as typeof ROWS),
  all_reduce: () => refuse('collective.all_reduce'),
} satisfies AdmissionTable;

/**
 * Per-op contracts (src/targets/host/verify.ts, docs/HOST.md "Contracts"), propagated through each
 * program to a tolerance per result, as on the XDNA2; row kernels' bounds derived from the step contracts.
 */
export const HOST_NUMERICS = { kind: 'contracts', stepContracts: HOST_STEP_CONTRACTS } as const satisfies NumericsPolicy;

/** Every quantized weight dtype: the addon reads each in place, byte for byte as in its file. */
export const HOST_QUANTIZED = QUANT_DTYPES;

/**
 * The artifacts the host holds loaded at once. The CPU has no hardware contexts: this bounds live
 * sessions (each with its arena), and leaves room beside a model's decode sessions for the host
 * segments of a partitioned prefill.
 */
export const HOST_CONTEXTS = 64;
export const HOST_PART = 'host:cpu';

export const HOST_TARGET: Target = {
  name: 'host', device: 'host', contexts: HOST_CONTEXTS, part: HOST_PART, admission: HOST_ADMISSION, numerics: HOST_NUMERICS,
  quantizedWeights: HOST_QUANTIZED,
};
