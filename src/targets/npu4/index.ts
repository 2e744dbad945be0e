/**
 * The Intel NPU4 (Lunar Lake) target. Its only entry point is the driver's graph compiler, so each
 * admitted equation lowers to the one OpenVINO opset op with its semantics (src/compiler/openvino/
 * lower.ts) and nothing is recognized as a composite. The NPU computes in FP16: F32 arithmetic is
 * admitted only when the target records a narrowing contract (the compiler then narrows the whole graph
 * to FP16 behind an F32 boundary), BF16 arithmetic never, and literals FP16 cannot hold are refused
 * except the additive ones that saturate on purpose. docs/NPU4.md explains each rule.
 */
import type { CheckedEqn } from '../../ir/checked.js';
import type { DType } from '../../ir/types.js';
import { elementDtype, isFloat, isLiteral } from '../../ir/types.js';
import { CLASS_TOLERANCES } from '../../numerics/classes.js';
import { F16_MAX } from '../../numerics/float16.js';
import type { OpName } from '../../ops/rule.js';
import { ADMIT, refuse } from '../target.js';
import type { Admission, AdmissionRule, AdmissionTable, NumericsPolicy, Target } from '../target.js';

/**
 * A narrowing contract measured on the device: the normwise error bound of a narrowed graph against
 * the F32 oracle, and the largest F32 magnitude the bound was measured over.
 */
export interface NarrowingContract {
  readonly normwise: number;
  readonly maxMagnitude: number;
}

/** The NPU4's contract: the NarrowStorage class's normwise 1e-2, over values FP16 can hold. */
export const NPU4_CONTRACT: NarrowingContract = { normwise: 1e-2, maxMagnitude: F16_MAX };

/** The NPU4 target, with the narrowing contract it records (null: none, so F32 arithmetic is refused). */
export interface Npu4Target extends Target {
  readonly name: 'npu4';
  readonly contract: NarrowingContract | null;
}

const refuseKind = (refusal: { kind: 'missing-contract' } | { kind: 'integer-to-float' } | { kind: 'narrowing-range'; value: number }): Admission =>
  ({ admitted: false, refusal });

/** True when the literal of an add or sub may saturate: the only use where ±max acts as ±infinity. */
function additive(op: OpName): boolean {
  return op === 'add' || op === 'sub';
}

/**
 * The literal rules: a NaN literal is refused; an infinite one stays infinite (FP16 holds it); a finite
 * one beyond the contract's magnitude is refused, except an F32 operand of add or sub on a target with
 * a contract, which narrowing saturates to ±max (a mask sentinel acting as an infinity).
 */
function literalsAdmitted(e: CheckedEqn, contract: NarrowingContract | null): Admission {
  const max = contract?.maxMagnitude ?? F16_MAX;
  for (let k = 0; k < e.eqn.in.length; k++) {
    const o = e.eqn.in[k]!;
    const d = e.ins[k]!.dtype;
    if (!isLiteral(o) || !isFloat(d)) continue;
    if (Number.isNaN(o.lit)) return refuseKind({ kind: 'narrowing-range', value: o.lit });
    if (!Number.isFinite(o.lit) || Math.abs(o.lit) <= max) continue;
    if (contract !== null && d === 'f32' && additive(e.op)) continue;
    return refuseKind({ kind: 'narrowing-range', value: o.lit });
  }
  return ADMIT;
}

/** Arithmetic in `dtype`: FP16 natively, F32 through a contract, never BF16 or integers. */
function arithmetic(contract: NarrowingContract | null): AdmissionRule {
  return (e) => {
    const d: DType = elementDtype(e.ins[0]!.dtype, `the first operand of equation ${e.index}`);
    if (d === 'bf16') return refuse('arith.bf16');
    // The NPU computes in FP16, which holds integers exactly only up to 2048.
    if (d === 'i32' || d === 'bool') return refuse('arith.integer');
    if (d === 'f32' && contract === null) return refuseKind({ kind: 'missing-contract' });
    return literalsAdmitted(e, contract);
  };
}

/** Data movement: bit exact in every width the device carries (FP32, FP16, I32, BOOL; not BF16). */
function movement(contract: NarrowingContract | null): AdmissionRule {
  return (e) => {
    const d = e.op === 'iota' ? (e.outs[0]!.dtype) : e.ins[0]!.dtype;
    if (d === 'bf16') return refuse('movement.bf16');
    return literalsAdmitted(e, contract);
  };
}

/** A convert: between F32, F16 and BOOL only; through BF16 or an integer it is refused. */
const convert: AdmissionRule = (e) => {
  const from = e.ins[0]!.dtype;
  const to = e.outs[0]!.dtype;
  if (from === 'bf16' || to === 'bf16') return refuse('convert.bf16');
  if (from === 'i32' && isFloat(to)) return refuseKind({ kind: 'integer-to-float' });
  if (from === 'i32' || to === 'i32') return refuse('convert.integer');
  return ADMIT;
};

/** The admission table of an NPU4 target recording `contract` (or none). */
export function npu4Admission(contract: NarrowingContract | null): AdmissionTable {
  const arith = arithmetic(contract);
  const move = movement(contract);
  const unary = (op: OpName) => () => refuse(`unary.${op}`);
  return {
    add: arith, sub: arith, mul: arith, div: arith, max: arith, ge: arith,
    min: () => refuse('binary.min'),
    neg: arith, exp: arith, sqrt: arith,
    recip: unary('recip'), log: unary('log'), tanh: unary('tanh'), erf: unary('erf'), rsqrt: unary('rsqrt'),
    abs: unary('abs'), logistic: unary('logistic'), sin: unary('sin'), cos: unary('cos'),
    convert,
    reduce_sum: arith, reduce_max: arith, matmul: arith,
    // A data-dependent weight read (the experts an index chooses): NPU4.md's OpenVINO layers give no form of it.
    matmul_id: () => refuse('op.matmul_id'),
    gather: move, reshape: move, transpose: move, broadcast: move, slice: move, concat: move, iota: move,
    dynamic_update_slice: move,
    // Not recognized as composites: a fused row kernel is the vendor compiler's business, not ours.
    row_kernel: () => refuse('row_kernel'),
    all_reduce: () => refuse('collective.all_reduce'),
  } satisfies AdmissionTable;
}

/**
 * NarrowStorage for every program: the NPU stores every value in FP16 (F32 ones behind the narrowing
 * boundary), so each float result is held to the contract's normwise bound (the class's without one).
 */
export function npu4Numerics(contract: NarrowingContract | null): NumericsPolicy {
  const normwise = { kind: 'normwise', rel: contract?.normwise ?? CLASS_TOLERANCES.NarrowStorage.f16.rel } as const;
  const max = contract?.maxMagnitude ?? F16_MAX;
  return {
    kind: 'class',
    numericsClass: 'NarrowStorage',
    tolerances: { ...CLASS_TOLERANCES.NarrowStorage, f32: normwise, f16: normwise },
    perEquation: `in FP16 storage (NarrowStorage: each float result within normwise ${normwise.rel} of the oracle's)`,
    premise: `every value is stored in FP16: magnitudes up to ${max} (past it a value is refused, NarrowingRange*)`,
  };
}

/** An NPU4 target recording `contract`; `{ contract: null }` is the target with no contract (tests). */
export function npu4Target(opts: { readonly contract: NarrowingContract | null }): Npu4Target {
  return {
    name: 'npu4', device: 'npu4', contexts: 16, part: 'npu4:lunarlake', admission: npu4Admission(opts.contract),
    numerics: npu4Numerics(opts.contract), contract: opts.contract, quantizedWeights: [],
  };
}

/** The NPU4 target as the device records it: with its narrowing contract. */
export const NPU4_TARGET: Npu4Target = npu4Target({ contract: NPU4_CONTRACT });
