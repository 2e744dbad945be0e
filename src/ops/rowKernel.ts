/**
 * `row_kernel`: a small program applied to every row (the last axis). Operands are `[..., C]` row
 * inputs, all of one shape, or `[C]` rows shared by every row. The body's values are vectors (`[C]`)
 * or scalars (`[]`); each step is typed and evaluated by its own op's rule, so a step is computed and
 * rounded exactly like an equation of its own, in the row inputs' dtype.
 */
import { quote } from '../io/escape.js';
import type { Tensor } from '../ir/tensor.js';
import type { DType, Operand, RowBody, Shape } from '../ir/types.js';
import { isLiteral, numel } from '../ir/types.js';
import { RuleError } from './rule.js';
import type { EvalCtx, OpCategory, OpRule, ValueType } from './rule.js';
import { NUMERIC, fail, finish, requireDtype, sameShape, shapeStr } from './common.js';

/** How the row kernel sees one step's op: its family and its rule over vector and scalar operands. */
export interface StepRule {
  readonly category: OpCategory;
  infer(ins: readonly ValueType[]): ValueType[];
  evaluate(ins: readonly Tensor[], ctx: EvalCtx): Tensor[];
}

/** Finds the rule of a step's op, or undefined when the op may not be a step. */
export type StepLookup = (op: string) => StepRule | undefined;

interface Rows {
  /** The row inputs' shape `[..., C]`. */
  readonly shape: Shape;
  readonly c: number;
  readonly dtype: DType;
}

/** The row inputs' shape: that of the highest-rank operand, whose last dim is C. */
function rowsOf(ins: readonly ValueType[]): Rows {
  if (ins.length === 0) fail('/in', 'row_kernel takes at least one operand');
  let top = ins[0]!;
  for (const t of ins) if (t.shape.length > top.shape.length) top = t;
  return { shape: top.shape, c: top.shape[top.shape.length - 1] ?? 0, dtype: top.dtype };
}

function checkOperands(ins: readonly ValueType[]): Rows {
  const rows = rowsOf(ins);
  ins.forEach((t, j) => {
    if (t.shape.length === 0) fail(`/in/${j}`, 'a row_kernel operand is a [..., C] tensor or a [C] row, not a scalar');
    if (t.dtype !== rows.dtype) fail(`/in/${j}`, `row_kernel: dtype ${t.dtype} differs from the row inputs' ${rows.dtype}`);
    const shared = t.shape.length === 1 && t.shape[0] === rows.c;
    if (!shared && !sameShape(t.shape, rows.shape)) {
      fail(`/in/${j}`, `row_kernel: shape ${shapeStr(t.shape)} is neither the row inputs' ${shapeStr(rows.shape)} nor a shared row [${rows.c}]`);
    }
  });
  requireDtype('row_kernel', '/in/0', rows.dtype, NUMERIC);
  return rows;
}

/** A body operand's type, or a refusal at its pointer when the name is not yet defined. */
/** An operand as a message names it: a quoted name, or the literal's value. */
const operandText = (o: Operand): string => (isLiteral(o) ? `the literal ${o.lit}` : quote(o));

function operandType(o: Operand, env: ReadonlyMap<string, ValueType>, dtype: DType, at: string): ValueType {
  if (isLiteral(o)) return { dtype: o.dtype ?? dtype, shape: [] };
  const t = env.get(o);
  if (t === undefined) fail(at, `${quote(o)} is not defined before this step (names are params or earlier steps' outs)`);
  return t;
}

/** Types every body value, refusing anything that is not a well-formed body over these rows. */
function checkBody(body: RowBody, rows: Rows, arity: number, lookup: StepLookup): ValueType[] {
  if (body.params.length !== arity) fail('/body/params', `the body has ${body.params.length} params for ${arity} operands`);
  const vector: ValueType = { dtype: rows.dtype, shape: [rows.c] };
  const env = new Map<string, ValueType>();
  body.params.forEach((p, j) => {
    if (env.has(p)) fail(`/body/params/${j}`, `param ${p} is named twice`);
    env.set(p, vector);
  });
  body.steps.forEach((step, i) => {
    const at = `/body/steps/${i}`;
    const rule = lookup(step.op);
    if (rule === undefined) {
      fail(`${at}/op`, `${step.op} cannot be a row_kernel step (steps are add, sub, mul, div, max, min, the unary ops, reduce_sum and reduce_max)`);
    }
    const ins = step.in.map((o, j) => operandType(o, env, rows.dtype, `${at}/in/${j}`));
    if (rule.category === 'reduce' && ins.length === 1 && ins[0]!.shape.length === 0) {
      fail(`${at}/in/0`, `${step.op} in a body reduces a vector to a scalar; ${operandText(step.in[0]!)} is already a scalar`);
    }
    let outs: ValueType[];
    try {
      outs = rule.infer(ins);
    } catch (e) {
      if (e instanceof RuleError) throw new RuleError(`${at}${e.at}`, e.reason);
      throw e;
    }
    if (env.has(step.out)) fail(`${at}/out`, `${step.out} is already defined`);
    env.set(step.out, outs[0]!);
  });
  if (body.results.length === 0) fail('/body/results', 'the body has no results');
  return body.results.map((r, k) => {
    const t = env.get(r);
    if (t === undefined) fail(`/body/results/${k}`, `result ${quote(r)} is not defined in the body`);
    return { dtype: t.dtype, shape: t.shape.length === 0 ? rows.shape.slice(0, -1) : [...rows.shape] };
  });
}

/** Runs the body once per row; vectors are `[C]` tensors, scalars `[]` tensors. */
function runRows(ins: readonly Tensor[], body: RowBody, ctx: EvalCtx, lookup: StepLookup): Tensor[] {
  const rows = rowsOf(ins);
  const count = numel(rows.shape.slice(0, -1));
  const c = rows.c;
  const lit = (o: Operand): Tensor | undefined => {
    if (!isLiteral(o)) return undefined;
    const d = o.dtype ?? rows.dtype;
    return { dtype: d, shape: [], data: Float64Array.of(finish(d, o.lit, ctx)) };
  };
  const plan = body.steps.map((s) => ({ rule: lookup(s.op)!, lits: s.in.map(lit), step: s }));
  const results: { data: Float64Array; vector: boolean }[] = [];
  for (let r = 0; r < count; r++) {
    const env = new Map<string, Tensor>();
    body.params.forEach((p, j) => {
      const t = ins[j]!;
      const data = t.shape.length === 1 ? t.data : t.data.subarray(r * c, (r + 1) * c);
      env.set(p, { dtype: t.dtype, shape: [c], data });
    });
    for (const { rule, lits, step } of plan) {
      const args = step.in.map((o, j) => lits[j] ?? env.get(o as string)!);
      env.set(step.out, rule.evaluate(args, ctx)[0]!);
    }
    body.results.forEach((name, k) => {
      const v = env.get(name)!;
      const vector = v.shape.length === 1;
      const slot = results[k] ?? (results[k] = { data: new Float64Array(vector ? count * c : count), vector });
      slot.data.set(v.data, vector ? r * c : r);
    });
  }
  // With no rows the body never ran; the result kinds come from typing the body instead.
  const kinds = count === 0 ? checkBody(body, rows, ins.length, lookup) : undefined;
  return body.results.map((_, k) => {
    const slot = results[k];
    const vector = slot ? slot.vector : kinds![k]!.shape.length === rows.shape.length;
    const shape = vector ? [...rows.shape] : rows.shape.slice(0, -1);
    return { dtype: rows.dtype, shape, data: slot ? slot.data : new Float64Array(0) };
  });
}

/** The row of `row_kernel`, given how to look up its steps' rules (the op table, passed in to avoid an import cycle). */
export function rowKernelRule(lookup: StepLookup): OpRule<{ readonly body: RowBody }> {
  return {
    category: 'row_kernel',
    arity: [1, Infinity],
    attrs: { body: { kind: 'body' } },
    rowStep: false,
    literalDtype: () => undefined,
    infer(ins, { body }) {
      const rows = checkOperands(ins);
      return checkBody(body, rows, ins.length, lookup);
    },
    evaluate: (ins, { body }, ctx) => runRows(ins, body, ctx, lookup),
  };
}
