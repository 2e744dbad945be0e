/**
 * The program format, version 1 (docs/PROGRAM_FORMAT.md), as TypeScript types. These are the decoded,
 * validated forms: literals hold numbers (NaN, infinities and -0 included), not their wire strings.
 */

import type { DType, Shape } from '../numerics/dtype.js';
export { DTYPES, isFloat } from '../numerics/dtype.js';
export type { DType, FloatDType, Shape } from '../numerics/dtype.js';

export type Role = 'weight' | 'activation' | 'state';

export interface Arg {
  readonly name: string;
  readonly role: Role;
  readonly dtype: DType;
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

/** Bytes per element of a dtype in the wire's `b64` encoding. */
export function dtypeBytes(d: DType): number {
  switch (d) {
    case 'f32': case 'i32': return 4;
    case 'f16': case 'bf16': return 2;
    case 'bool': return 1;
  }
}
