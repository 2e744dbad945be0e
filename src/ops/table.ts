/**
 * The op table: one row per OpName with its shape and dtype rule and its oracle kernel. The mapped type
 * OpTable makes a new OpName refuse to compile until it has a row here. Callers go through
 * inferEqn / evaluateEqn, which hold the one cast from an equation's decoded attrs to the op's own.
 */
import type { HeldTensor, Tensor } from '../ir/tensor.js';
import { isQuantTensor } from '../ir/tensor.js';
import type { DType } from '../ir/types.js';
import { DTYPES, isQuantized } from '../ir/types.js';
import { RuleError, isOpName } from './rule.js';
import type { AnyType, AttrSpec, EvalCtx, OpName, OpRule, OpTable, ValueType } from './rule.js';
import { QUANT_CONVERT, QUANT_GATHER, QUANT_MATMUL, QUANT_MATMUL_ID } from './quantized.js';
import { matmulIdRule } from './matmulId.js';
import { binaryRule, unaryRule } from './elementwise.js';
import { convertRule } from './convert.js';
import { reduceRule } from './reduce.js';
import { matmulRule } from './matmul.js';
import { broadcastRule, concatRule, reshapeRule, sliceRule, transposeRule } from './movement.js';
import { allReduceRule, dynamicUpdateSliceRule, gatherRule, iotaRule } from './indexing.js';
import { rowKernelRule } from './rowKernel.js';
import type { StepRule } from './rowKernel.js';

/** An equation's attributes as decoded from JSON, before the table gives them their op's type. */
export type RawAttrs = Readonly<Record<string, unknown>>;

export const OPS = {
  add: binaryRule('add'),
  sub: binaryRule('sub'),
  mul: binaryRule('mul'),
  div: binaryRule('div'),
  max: binaryRule('max'),
  min: binaryRule('min'),
  ge: binaryRule('ge'),
  neg: unaryRule('neg'),
  recip: unaryRule('recip'),
  exp: unaryRule('exp'),
  log: unaryRule('log'),
  tanh: unaryRule('tanh'),
  erf: unaryRule('erf'),
  sqrt: unaryRule('sqrt'),
  rsqrt: unaryRule('rsqrt'),
  abs: unaryRule('abs'),
  logistic: unaryRule('logistic'),
  sin: unaryRule('sin'),
  cos: unaryRule('cos'),
  convert: { ...convertRule, quantized: QUANT_CONVERT },
  reduce_sum: reduceRule('reduce_sum'),
  reduce_max: reduceRule('reduce_max'),
  matmul: { ...matmulRule, quantized: QUANT_MATMUL },
  gather: { ...gatherRule, quantized: QUANT_GATHER },
  reshape: reshapeRule,
  transpose: transposeRule,
  broadcast: broadcastRule,
  slice: sliceRule,
  concat: concatRule,
  iota: iotaRule,
  dynamic_update_slice: dynamicUpdateSliceRule,
  row_kernel: rowKernelRule(rowStepRule),
  all_reduce: allReduceRule,
  matmul_id: { ...matmulIdRule, quantized: QUANT_MATMUL_ID },
} as const satisfies OpTable;

/** The op's row with its attrs widened to the decoded form: the single generic cast of the table. */
function ruleOf(op: OpName): OpRule<RawAttrs> {
  return OPS[op] as unknown as OpRule<RawAttrs>;
}

function attrOk(spec: AttrSpec, v: unknown): boolean {
  switch (spec.kind) {
    case 'int': return Number.isInteger(v);
    case 'ints': return Array.isArray(v) && v.every((x) => Number.isInteger(x));
    case 'dtype': return typeof v === 'string' && (DTYPES as readonly string[]).includes(v);
    case 'reduce': return typeof v === 'string';
    case 'body': return typeof v === 'object' && v !== null;
  }
}

/** Refuses a wrong operand count or a missing or ill-kinded attribute, before the op's own rule runs. */
function checkForm(op: OpName, nIns: number, attrs: RawAttrs): void {
  const rule = ruleOf(op);
  const [lo, hi] = rule.arity;
  if (nIns < lo || nIns > hi) {
    const want = lo === hi ? `${lo}` : hi === Infinity ? `at least ${lo}` : `${lo} to ${hi}`;
    throw new RuleError('/in', `${op} takes ${want} operand${want === '1' ? '' : 's'}, got ${nIns}`);
  }
  for (const [name, spec] of Object.entries(rule.attrs)) {
    const v = attrs[name];
    if (v === undefined) {
      if (!spec.optional) throw new RuleError(`/${name}`, `${op} needs the attribute ${name}`);
    } else if (!attrOk(spec, v)) {
      throw new RuleError(`/${name}`, `${op}: attribute ${name} is not ${spec.kind === 'ints' ? 'an array of integers' : `a valid ${spec.kind}`}`);
    }
  }
}

function allElements(ins: readonly AnyType[]): ins is readonly ValueType[] {
  return ins.every((t) => !isQuantized(t.dtype));
}

function allTensors(ins: readonly HeldTensor[]): ins is readonly Tensor[] {
  return ins.every((t) => !isQuantTensor(t));
}

/**
 * Why operand `k` of `op` cannot be a quantized weight, or undefined when the op takes one there. Only
 * matmul (its right operand), gather (its source) and convert take one, each at one operand.
 */
export function quantOperandProblem(op: OpName, k: number): string | undefined {
  const q = OPS[op].quantized;
  if (q?.operand === k) return undefined;
  const only = 'a quantized weight is taken only by matmul and matmul_id (their right operand), gather (its source) and convert (to a float dtype)';
  return q === undefined ? `${op} does not take a quantized operand: ${only}` : `${op} takes a quantized weight only as ${q.place}: ${only}`;
}

/** The result types of an equation, or a RuleError at a pointer relative to the equation. */
export function inferEqn(op: OpName, ins: readonly AnyType[], attrs: RawAttrs): ValueType[] {
  checkForm(op, ins.length, attrs);
  if (allElements(ins)) return ruleOf(op).infer(ins, attrs);
  const k = ins.findIndex((t) => isQuantized(t.dtype));
  const bad = quantOperandProblem(op, k);
  if (bad !== undefined) throw new RuleError(`/in/${k}`, bad);
  return ruleOf(op).quantized!.infer(ins, attrs);
}

/** Runs an equation's oracle kernel on operands that passed `inferEqn`. */
export function evaluateEqn(op: OpName, ins: readonly HeldTensor[], attrs: RawAttrs, ctx: EvalCtx): Tensor[] {
  const rule = ruleOf(op);
  if (allTensors(ins)) return rule.evaluate(ins, attrs, ctx);
  if (rule.quantized === undefined) throw new Error(`${op} was given a quantized operand, which validation refuses`);
  return rule.quantized.evaluate(ins, attrs, ctx);
}

/** The dtype an untyped literal at operand `index` takes (see OpRule.literalDtype). */
export function literalDtypeOf(op: OpName, index: number, ins: readonly (ValueType | undefined)[]): DType | undefined {
  return OPS[op].literalDtype(index, ins);
}

/** A row-kernel step's rule: its op's own, with reduce over the row's one axis. */
function rowStepRule(op: string): StepRule | undefined {
  if (!isOpName(op) || !OPS[op].rowStep) return undefined;
  const attrs: RawAttrs = OPS[op].category === 'reduce' ? { axes: [0] } : {};
  return {
    category: OPS[op].category,
    infer: (ins) => inferEqn(op, ins, attrs),
    evaluate: (ins, ctx) => evaluateEqn(op, ins, attrs, ctx),
  };
}
