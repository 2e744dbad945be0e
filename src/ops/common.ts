/**
 * Small helpers shared by the op rules and kernels: the one rounding step, shape arithmetic, and the
 * RuleError shorthand every shape rule uses.
 */
import type { DType, Shape } from '../ir/types.js';
import { isFloat, numel } from '../ir/types.js';
import { roundToDtype } from '../numerics/float16.js';
import { RuleError } from './rule.js';
import type { EvalCtx } from './rule.js';

/** The dtypes arithmetic takes: every dtype but bool. */
export const NUMERIC: readonly DType[] = ['f32', 'f16', 'bf16', 'i32'];
/** The float dtypes, for the transcendental ops. */
export const FLOATS: readonly DType[] = ['f32', 'f16', 'bf16'];

/** Rounds an exact f64 result once to `dtype`; in fp64 mode float results stay unrounded. */
export function finish(dtype: DType, x: number, ctx: EvalCtx): number {
  return ctx.fp64 && isFloat(dtype) ? x : roundToDtype(dtype, x);
}

/** Refuses with a RuleError at a pointer relative to the equation. */
export function fail(at: string, reason: string): never {
  throw new RuleError(at, reason);
}

/** `[2, 3]` as people write shapes. */
export function shapeStr(s: Shape): string {
  return `[${s.join(', ')}]`;
}

/** True when two shapes are equal. */
export function sameShape(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** Row-major strides of a shape. */
export function stridesOf(shape: Shape): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1]! * shape[i + 1]!;
  return s;
}

/** Refuses a dtype outside `allowed`, naming the operand at fault. */
export function requireDtype(op: string, at: string, d: DType, allowed: readonly DType[]): void {
  if (!allowed.includes(d)) fail(at, `${op} does not take ${d} operands (it takes ${allowed.join(', ')})`);
}

/** Refuses a shape attribute with a negative or fractional extent. */
export function requireShape(at: string, shape: Shape): void {
  shape.forEach((d, i) => {
    if (!Number.isInteger(d) || d < 0) fail(`${at}/${i}`, `extent ${d} is not a non-negative integer`);
  });
}

/** Refuses an axis outside `[0, rank)`. */
export function requireAxis(at: string, axis: number, rank: number, what: string): void {
  if (!Number.isInteger(axis) || axis < 0 || axis >= rank) {
    fail(at, `${what} ${axis} is outside [0, ${rank}) for a rank-${rank} operand`);
  }
}

/** Calls `f` with every multi-index of `shape` in row-major order (the array is reused). */
export function forEachIndex(shape: Shape, f: (idx: readonly number[], flat: number) => void): void {
  const n = numel(shape);
  if (n === 0) return;
  const idx = new Array<number>(shape.length).fill(0);
  for (let flat = 0; flat < n; flat++) {
    f(idx, flat);
    for (let k = shape.length - 1; k >= 0; k--) {
      if (++idx[k]! < shape[k]!) break;
      idx[k] = 0;
    }
  }
}

