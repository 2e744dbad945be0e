/**
 * Elementwise ops: the scalar functions per dtype, their shape and dtype rules, and the tensor kernel.
 * Every function computes in f64 and rounds once through `finish`; i32 arithmetic wraps exactly.
 */
import { IntegerDivideByZero } from '../errors/index.js';
import type { Tensor } from '../ir/tensor.js';
import type { DType } from '../ir/types.js';
import { numel } from '../ir/types.js';
import { erf } from '../numerics/erf.js';
import type { EvalCtx, OpRule, ValueType } from './rule.js';
import { FLOATS, NUMERIC, fail, finish, requireDtype, sameShape, shapeStr } from './common.js';

export const BINARY_OPS = ['add', 'sub', 'mul', 'div', 'max', 'min', 'ge'] as const;
export type BinaryOp = (typeof BINARY_OPS)[number];
export const UNARY_OPS = [
  'neg', 'recip', 'exp', 'log', 'tanh', 'erf', 'sqrt', 'rsqrt', 'abs', 'logistic', 'sin', 'cos',
] as const;
export type UnaryOp = (typeof UNARY_OPS)[number];

const INT_MIN = -(2 ** 31);

/** 1/(1+e^-x), in the form that neither overflows nor cancels for large |x|. */
function logistic(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

function floatBinary(op: BinaryOp): (a: number, b: number) => number {
  switch (op) {
    case 'add': return (a, b) => a + b;
    case 'sub': return (a, b) => a - b;
    case 'mul': return (a, b) => a * b;
    case 'div': return (a, b) => a / b;
    // Math.max/min already give NaN for a NaN operand and order -0 below +0, as the format asks.
    case 'max': return Math.max;
    case 'min': return Math.min;
    case 'ge': return (a, b) => (a >= b ? 1 : 0);
  }
}

function intBinary(op: BinaryOp, ctx: EvalCtx): (a: number, b: number) => number {
  switch (op) {
    // |a ± b| < 2^32 is exact in f64, so one wrap gives the two's complement result.
    case 'add': return (a, b) => (a + b) | 0;
    case 'sub': return (a, b) => (a - b) | 0;
    // An f64 product of two i32 can exceed 2^53 and lose low bits; imul wraps exactly.
    case 'mul': return Math.imul;
    case 'div': return (a, b) => {
      if (b === 0) throw new IntegerDivideByZero(ctx.eqn);
      // The f64 quotient never rounds across an integer for i32 operands; INT_MIN / -1 wraps to INT_MIN.
      return Math.trunc(a / b) | 0;
    };
    case 'max': return Math.max;
    case 'min': return Math.min;
    case 'ge': return (a, b) => (a >= b ? 1 : 0);
  }
}

/** The scalar function of a binary op on `dtype` operands, result already rounded to its dtype. */
export function binaryScalar(op: BinaryOp, dtype: DType, ctx: EvalCtx): (a: number, b: number) => number {
  if (dtype === 'i32') return intBinary(op, ctx);
  if (op === 'ge') return floatBinary(op);
  const f = floatBinary(op);
  return (a, b) => finish(dtype, f(a, b), ctx);
}

function floatUnary(op: UnaryOp): (x: number) => number {
  switch (op) {
    case 'neg': return (x) => -x;
    case 'recip': return (x) => 1 / x;
    case 'exp': return Math.exp;
    case 'log': return Math.log;
    case 'tanh': return Math.tanh;
    case 'erf': return erf;
    case 'sqrt': return Math.sqrt;
    case 'rsqrt': return (x) => 1 / Math.sqrt(x);
    case 'abs': return Math.abs;
    case 'logistic': return logistic;
    case 'sin': return Math.sin;
    case 'cos': return Math.cos;
  }
}

/** The scalar function of a unary op on `dtype`, result already rounded to `dtype`. */
export function unaryScalar(op: UnaryOp, dtype: DType, ctx: EvalCtx): (x: number) => number {
  if (dtype === 'i32') {
    // Only neg and abs admit i32 (see unaryRule); both wrap, so -INT_MIN and |INT_MIN| are INT_MIN.
    return op === 'abs' ? (x) => (x === INT_MIN ? INT_MIN : Math.abs(x)) : (x) => (-x) | 0;
  }
  const f = floatUnary(op);
  return (x) => finish(dtype, f(x), ctx);
}

/**
 * The result shape of two elementwise operands: equal shapes, or a scalar against any shape. A rule sees
 * only types, so it cannot tell a literal from a named `[]` value; both broadcast, which is harmless.
 */
function elementwiseShape(op: string, a: ValueType, b: ValueType): ValueType['shape'] {
  if (sameShape(a.shape, b.shape)) return a.shape;
  if (b.shape.length === 0) return a.shape;
  if (a.shape.length === 0) return b.shape;
  return fail('/in/1', `${op}: shape ${shapeStr(b.shape)} differs from the first operand's ${shapeStr(a.shape)}`
    + ' (elementwise operands have equal shapes; only a scalar broadcasts)');
}

/** The literal rule of two-operand elementwise ops: an untyped literal takes the other operand's dtype. */
function otherDtype(index: number, ins: readonly (ValueType | undefined)[]): DType | undefined {
  return ins[index === 0 ? 1 : 0]?.dtype;
}

/** The row of a two-operand elementwise op; `ge` refuses bool like the arithmetic ops do. */
export function binaryRule(op: BinaryOp): OpRule<{}> {
  return {
    category: op === 'ge' ? 'compare' : 'binary',
    arity: [2, 2],
    attrs: {},
    // ge yields bool, and every body step is computed in the row inputs' dtype, so ge is no step.
    rowStep: op !== 'ge',
    literalDtype: otherDtype,
    infer(ins) {
      const a = ins[0]!;
      const b = ins[1]!;
      requireDtype(op, '/in/0', a.dtype, NUMERIC);
      if (b.dtype !== a.dtype) fail('/in/1', `${op}: dtype ${b.dtype} differs from the first operand's ${a.dtype}`);
      return [{ dtype: op === 'ge' ? 'bool' : a.dtype, shape: elementwiseShape(op, a, b) }];
    },
    evaluate(ins, _attrs, ctx) {
      const a = ins[0]!;
      const b = ins[1]!;
      const shape = a.shape.length === 0 ? b.shape : a.shape;
      const f = binaryScalar(op, a.dtype, ctx);
      const n = numel(shape);
      const out = new Float64Array(n);
      const sa = a.shape.length === 0 && n !== 1;
      const sb = b.shape.length === 0 && n !== 1;
      for (let i = 0; i < n; i++) out[i] = f(a.data[sa ? 0 : i]!, b.data[sb ? 0 : i]!);
      return [{ dtype: op === 'ge' ? 'bool' : a.dtype, shape: [...shape], data: out }];
    },
  };
}

/** The row of a one-operand elementwise op: neg and abs take i32 too; the rest are float-only. */
export function unaryRule(op: UnaryOp): OpRule<{}> {
  const allowed = op === 'neg' || op === 'abs' ? NUMERIC : FLOATS;
  return {
    category: 'unary',
    arity: [1, 1],
    attrs: {},
    rowStep: true,
    literalDtype: () => undefined,
    infer(ins) {
      const a = ins[0]!;
      requireDtype(op, '/in/0', a.dtype, allowed);
      return [{ dtype: a.dtype, shape: a.shape }];
    },
    evaluate(ins, _attrs, ctx) {
      const a = ins[0]!;
      const f = unaryScalar(op, a.dtype, ctx);
      return [mapTensor(a, a.dtype, f)];
    },
  };
}

/** A new tensor of `dtype` holding `f` of every element of `t`. */
export function mapTensor(t: Tensor, dtype: DType, f: (x: number) => number): Tensor {
  const out = new Float64Array(t.data.length);
  for (let i = 0; i < out.length; i++) out[i] = f(t.data[i]!);
  return { dtype, shape: [...t.shape], data: out };
}
