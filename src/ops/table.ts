/**
 * The op table: one row per OpName with its shape and dtype rule and its oracle kernel. The mapped type
 * OpTable makes a new OpName refuse to compile until it has a row here. Callers go through
 * inferEqn / evaluateEqn, which hold the one cast from an equation's decoded attrs to the op's own.
 */
import type { Tensor } from '../ir/tensor.js';
import type { DType } from '../ir/types.js';
import { DTYPES } from '../ir/types.js';
import { RuleError, isOpName } from './rule.js';
import type { AttrSpec, EvalCtx, OpName, OpRule, OpTable, ValueType } from './rule.js';
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
  convert: convertRule,
  reduce_sum: reduceRule('reduce_sum'),
  reduce_max: reduceRule('reduce_max'),
  matmul: matmulRule,
  gather: gatherRule,
  reshape: reshapeRule,
  transpose: transposeRule,
  broadcast: broadcastRule,
  slice: sliceRule,
  concat: concatRule,
  iota: iotaRule,
  dynamic_update_slice: dynamicUpdateSliceRule,
  row_kernel: rowKernelRule(rowStepRule),
  all_reduce: allReduceRule,
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

/** The result types of an equation, or a RuleError at a pointer relative to the equation. */
export function inferEqn(op: OpName, ins: readonly ValueType[], attrs: RawAttrs): ValueType[] {
  checkForm(op, ins.length, attrs);
  return ruleOf(op).infer(ins, attrs);
}

/** Runs an equation's oracle kernel on operands that passed `inferEqn`. */
export function evaluateEqn(op: OpName, ins: readonly Tensor[], attrs: RawAttrs, ctx: EvalCtx): Tensor[] {
  return ruleOf(op).evaluate(ins, attrs, ctx);
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
