/** Test helpers: tensors, running one op through its rule and kernel, and exact value comparison. */
import { expect } from 'chai';
import type { Tensor } from '../../src/ir/tensor.js';
import { tensor } from '../../src/ir/tensor.js';
import type { DType, Shape } from '../../src/ir/types.js';
import { RuleError } from '../../src/ops/rule.js';
import type { OpName, ValueType } from '../../src/ops/rule.js';
import { evaluateEqn, inferEqn } from '../../src/ops/table.js';

export const INT_MIN = -(2 ** 31);
export const INT_MAX = 2 ** 31 - 1;
export const F32_MAX = (2 - 2 ** -23) * 2 ** 127;

/** A tensor; a scalar when `shape` is []. */
export function t(dtype: DType, shape: Shape, data: readonly number[]): Tensor {
  return tensor(dtype, shape, data);
}

/** A scalar tensor. */
export function s(dtype: DType, v: number): Tensor {
  return tensor(dtype, [], [v]);
}

export function ty(dtype: DType, shape: Shape): ValueType {
  return { dtype, shape };
}

/** Runs an op through inferEqn and evaluateEqn, checking the kernel's result types match the rule's. */
export function run(op: OpName, ins: readonly Tensor[], attrs: Record<string, unknown> = {}, opts: { fp64?: boolean; eqn?: number } = {}): Tensor[] {
  const types = inferEqn(op, ins.map((x) => ty(x.dtype, x.shape)), attrs);
  const outs = evaluateEqn(op, ins, attrs, { eqn: opts.eqn ?? 0, fp64: opts.fp64 ?? false });
  expect(outs.map((o) => ({ dtype: o.dtype, shape: [...o.shape] }))).to.deep.equal(types.map((o) => ({ dtype: o.dtype, shape: [...o.shape] })));
  return outs;
}

/** The single result of `run`. */
export function run1(op: OpName, ins: readonly Tensor[], attrs: Record<string, unknown> = {}, opts: { fp64?: boolean; eqn?: number } = {}): Tensor {
  const outs = run(op, ins, attrs, opts);
  expect(outs).to.have.length(1);
  return outs[0]!;
}

/** The elements of `op` applied to scalars: `ev('add', 'f32', [1, 2])` is 1 + 2 rounded to f32. */
export function ev(op: OpName, dtype: DType, args: readonly number[], fp64 = false): number {
  return run1(op, args.map((a) => s(dtype, a)), {}, { fp64 }).data[0]!;
}

function show(v: number): string {
  return Object.is(v, -0) ? '-0' : String(v);
}

/** Asserts every element is exactly the expected one (Object.is: -0 differs from +0, NaN equals NaN). */
export function same(actual: ArrayLike<number> | number, expected: readonly number[] | number): void {
  const a = typeof actual === 'number' ? [actual] : Array.from(actual);
  const e = typeof expected === 'number' ? [expected] : [...expected];
  const ok = a.length === e.length && a.every((v, i) => Object.is(v, e[i]));
  expect(ok, `got [${a.map(show).join(', ')}], expected [${e.map(show).join(', ')}]`).to.equal(true);
}

/** The RuleError `f` throws (fails the test when it throws nothing or something else). */
function ruleError(f: () => unknown): RuleError {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(RuleError);
    return e as RuleError;
  }
  expect.fail('expected a RuleError');
}

/** The RuleError of inferring `op` on these types, asserting its pointer. */
export function refuses(op: OpName, ins: readonly ValueType[], attrs: Record<string, unknown>, at: string): RuleError {
  const e = ruleError(() => inferEqn(op, ins, attrs));
  expect(e.at, e.reason).to.equal(at);
  expect(e.reason).to.be.a('string').and.not.equal('');
  return e;
}
