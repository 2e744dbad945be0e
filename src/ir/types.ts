/**
 * The program format, version 1 (docs/PROGRAM_FORMAT.md), as TypeScript types. These are the decoded,
 * validated forms: literals hold numbers (NaN, infinities and -0 included), not their wire strings.
 */

import type { AnyDType, DType, Shape } from '../numerics/dtype.js';
import { isQuantized } from '../numerics/dtype.js';
import { quantBytes } from '../numerics/quant.js';
export { DTYPES, QUANT_DTYPES, isFloat, isQuantized } from '../numerics/dtype.js';
export type { AnyDType, DType, FloatDType, QuantDType, Shape } from '../numerics/dtype.js';

export type Role = 'weight' | 'activation' | 'state';

export interface Arg {
  readonly name: string;
  readonly role: Role;
  /** A quantized dtype only for a weight (validation refuses it elsewhere). */
  readonly dtype: AnyDType;
  readonly shape: Shape;
}

/** An inline scalar literal; without `dtype` it takes the dtype of the other operand. */
export interface Literal {
  readonly lit: number;
  readonly dtype?: DType;
}

export type Operand = string | Literal;

/** The body of a `row_kernel`: a small program over row values. */
export interface RowBody {
  readonly params: readonly string[];
  readonly steps: readonly BodyStep[];
  readonly results: readonly string[];
}

export interface BodyStep {
  readonly op: string;
  readonly in: readonly Operand[];
  readonly out: string;
}

/**
 * One equation. `attrs` holds the op's attributes (`dtype`, `axes`, `axis`, `shape`, `perm`, `dims`,
 * `start`, `limit`, `stride`, `dimension`, `reduce`, `body`) exactly as the format names them.
 */
export interface Eqn {
  readonly op: string;
  readonly in: readonly Operand[];
  /** A name, or several names for a row_kernel with more than one result. */
  readonly out: string | readonly string[];
  readonly attrs: Readonly<Record<string, unknown>>;
}

export interface Program {
  readonly format: 'program@1';
  readonly name: string;
  readonly args: readonly Arg[];
  readonly eqns: readonly Eqn[];
  readonly results: readonly string[];
  readonly state: Readonly<Record<string, string>>;
}

/** The names an equation defines, in order. */
export function eqnOuts(e: Eqn): readonly string[] {
  return typeof e.out === 'string' ? [e.out] : e.out;
}

export function isLiteral(o: Operand): o is Literal {
  return typeof o === 'object';
}

/**
 * `d` as an element dtype, for code that only ever sees values of elements (a result, a state, an
 * operand of a target that takes no quantized weight); a quantized one there is a defect, thrown as such.
 */
export function elementDtype(d: AnyDType, what: string): DType {
  if (isQuantized(d)) throw new Error(`${what} is of the quantized dtype ${d}, which only a weight of a target taking one may be`);
  return d;
}

/** The number of elements of a shape. */
export function numel(shape: Shape): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** The exact number of elements of a shape, where a product of large dimensions would round as a number. */
export function exactNumel(shape: Shape): bigint {
  let n = 1n;
  for (const d of shape) n *= BigInt(d);
  return n;
}

/**
 * The bytes a tensor of this dtype and shape occupies in the wire's `b64` encoding and in device
 * buffers: elements times dtypeBytes, or whole blocks of a quantized dtype (src/numerics/quant.ts;
 * the shape must hold whole blocks, which validation ensures).
 */
export function storageBytes(dtype: AnyDType, shape: Shape): number {
  return isQuantized(dtype) ? quantBytes(dtype, shape) : numel(shape) * dtypeBytes(dtype);
}

/** Bytes per element of an element dtype in the wire's `b64` encoding (a quantized dtype has bytes per block). */
export function dtypeBytes(d: DType): number {
  switch (d) {
    case 'f32': case 'i32': return 4;
    case 'f16': case 'bf16': return 2;
    case 'bool': return 1;
  }
}
