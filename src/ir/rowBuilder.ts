/**
 * Builds a `row_kernel` body in code: `p.rowKernel([x, w], (b, x, w) => b.mul(b.div(x, ...), w))`.
 * Steps are only recorded here; the row kernel's rule types the whole body when the equation is added,
 * so a bad step is refused at the rowKernel call with a pointer into the body.
 */
import type { BodyStep, Literal, Operand, RowBody } from './types.js';

/** A value inside a row body: a vector of the row's length or a scalar, by name. */
export interface RowValue {
  readonly name: string;
}

/** A body operand: a body value, a number (an untyped literal, in the row inputs' dtype) or a literal. */
export type RowOperand = RowValue | number | Literal;

/** The callback form of a body: takes one RowValue per operand, returns the body's result(s). */
export type RowBodyFn = (b: RowBuilder, ...params: RowValue[]) => RowValue | readonly RowValue[];

function operand(o: RowOperand): Operand {
  if (typeof o === 'number') return { lit: o };
  return 'lit' in o ? o : o.name;
}

// What a RowBuilder and its named() views share.
interface Shared {
  readonly steps: BodyStep[];
  readonly used: Set<string>;
  next: number;
}

/** Records the steps of one row body; step values are named s0, s1, ... around the params' names. */
export class RowBuilder {
  private readonly s: Shared;
  private outName: string | undefined;

  constructor(params: readonly string[]) {
    this.s = { steps: [], used: new Set(params), next: 0 };
  }

  /** This body builder, naming the value of the step called on it: `b.named('sq').mul(x, x)`. */
  named(name: string): RowBuilder {
    const view = Object.create(this) as RowBuilder;
    view.outName = name;
    return view;
  }

  /** Adds a step of any op the row kernel admits as a step; the typed methods below call it. */
  step(op: string, ...ins: RowOperand[]): RowValue {
    const s = this.s;
    // A reused name is recorded as given: the row kernel's rule refuses it with a pointer into the body.
    let name = this.outName;
    if (name === undefined) do name = `s${s.next++}`; while (s.used.has(name));
    s.used.add(name);
    s.steps.push({ op, in: ins.map(operand), out: name });
    return { name };
  }

  /** The body with these results. */
  finish(params: readonly string[], results: readonly RowValue[]): RowBody {
    return { params: [...params], steps: [...this.s.steps], results: results.map((r) => r.name) };
  }

  add(a: RowOperand, b: RowOperand): RowValue { return this.step('add', a, b); }
  sub(a: RowOperand, b: RowOperand): RowValue { return this.step('sub', a, b); }
  mul(a: RowOperand, b: RowOperand): RowValue { return this.step('mul', a, b); }
  div(a: RowOperand, b: RowOperand): RowValue { return this.step('div', a, b); }
  max(a: RowOperand, b: RowOperand): RowValue { return this.step('max', a, b); }
  min(a: RowOperand, b: RowOperand): RowValue { return this.step('min', a, b); }
  neg(x: RowOperand): RowValue { return this.step('neg', x); }
  recip(x: RowOperand): RowValue { return this.step('recip', x); }
  exp(x: RowOperand): RowValue { return this.step('exp', x); }
  log(x: RowOperand): RowValue { return this.step('log', x); }
  tanh(x: RowOperand): RowValue { return this.step('tanh', x); }
  erf(x: RowOperand): RowValue { return this.step('erf', x); }
  sqrt(x: RowOperand): RowValue { return this.step('sqrt', x); }
  rsqrt(x: RowOperand): RowValue { return this.step('rsqrt', x); }
  abs(x: RowOperand): RowValue { return this.step('abs', x); }
  logistic(x: RowOperand): RowValue { return this.step('logistic', x); }
  sin(x: RowOperand): RowValue { return this.step('sin', x); }
  cos(x: RowOperand): RowValue { return this.step('cos', x); }
  /** The sum of a vector's elements (a scalar). */
  reduceSum(x: RowOperand): RowValue { return this.step('reduce_sum', x); }
  /** The largest of a vector's elements (a scalar). */
  reduceMax(x: RowOperand): RowValue { return this.step('reduce_max', x); }
}
