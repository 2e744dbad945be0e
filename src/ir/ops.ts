/**
 * The op names of the format and the types of their attributes: what a program may say. What each op
 * means (shape rules, oracle kernels) is the op table's (src/ops/table.ts), one layer up.
 */
import type { DType, QuantDType, RowBody, Shape } from './types.js';
import { elementDtype, isQuantized } from './types.js';

export const OP_NAMES = [
  'add', 'sub', 'mul', 'div', 'max', 'min', 'ge',
  'neg', 'recip', 'exp', 'log', 'tanh', 'erf', 'sqrt', 'rsqrt', 'abs', 'logistic', 'sin', 'cos',
  'convert', 'reduce_sum', 'reduce_max', 'matmul', 'gather', 'reshape', 'transpose', 'broadcast',
  'slice', 'concat', 'iota', 'dynamic_update_slice', 'row_kernel', 'all_reduce', 'matmul_id',
] as const;
export type OpName = (typeof OP_NAMES)[number];

export function isOpName(s: string): s is OpName {
  return (OP_NAMES as readonly string[]).includes(s);
}

/** Each op's decoded attributes, named exactly as the format names them. */
export interface OpAttrs {
  add: {}; sub: {}; mul: {}; div: {}; max: {}; min: {}; ge: {};
  neg: {}; recip: {}; exp: {}; log: {}; tanh: {}; erf: {}; sqrt: {}; rsqrt: {}; abs: {};
  logistic: {}; sin: {}; cos: {};
  convert: { readonly dtype: DType };
  reduce_sum: { readonly axes: readonly number[] };
  reduce_max: { readonly axes: readonly number[] };
  matmul: {};
  gather: { readonly axis: number };
  reshape: { readonly shape: Shape };
  transpose: { readonly perm: readonly number[] };
  broadcast: { readonly shape: Shape; readonly dims: readonly number[] };
  slice: { readonly start: readonly number[]; readonly limit: readonly number[]; readonly stride?: readonly number[] };
  concat: { readonly axis: number };
  iota: { readonly shape: Shape; readonly dimension: number; readonly dtype: DType };
  dynamic_update_slice: {};
  row_kernel: { readonly body: RowBody };
  all_reduce: { readonly reduce: 'sum' };
  matmul_id: {};
}

/** How an attribute is written in JSON; the codec decodes and checks it before any shape rule runs. */
export type AttrKind = 'dtype' | 'int' | 'ints' | 'body' | 'reduce';
export interface AttrSpec { readonly kind: AttrKind; readonly optional?: boolean }

/** The static type of a value: what shape and dtype rules compute. */
export interface ValueType {
  readonly dtype: DType;
  readonly shape: Shape;
}

/** The type of a quantized weight: only an arg has one, and only three ops take it (src/ops/quantized.ts). */
export interface QuantType {
  readonly dtype: QuantDType;
  readonly shape: Shape;
}

/** The type of an operand or an arg: a value's, or a quantized weight's. */
export type AnyType = ValueType | QuantType;


/** True for the type of a quantized weight. */
export function isQuantType(t: AnyType): t is QuantType {
  return isQuantized(t.dtype);
}

/** `t` as the type of a value of elements, for code that never sees a quantized one (see elementDtype). */
export function elementType(t: AnyType, what: string): ValueType {
  return { dtype: elementDtype(t.dtype, what), shape: t.shape };
}
