/**
 * What one row of the op table holds. The table itself (src/ops/table.ts) is an exhaustive mapped type
 * over OpName, so adding a name to OP_NAMES (src/ir/ops.ts) refuses to compile until every table has a
 * row for it.
 */
import type { AnyType, AttrSpec, OpAttrs, OpName, ValueType } from '../ir/ops.js';
import type { HeldTensor, Tensor } from '../ir/tensor.js';
import type { DType } from '../ir/types.js';

export { OP_NAMES, isOpName, isQuantType } from '../ir/ops.js';
export type { AnyType,  AttrSpec, OpAttrs, OpName, QuantType, ValueType } from '../ir/ops.js';

/**
 * A shape or dtype rule's refusal. `at` is a JSON pointer relative to the equation (`''` for the
 * equation itself, `/in/1` for an operand, `/axes` for an attribute, `/body/steps/2/in/0` inside a body);
 * validation prefixes it with the equation's own pointer.
 */
export class RuleError extends Error {
  constructor(readonly at: string, readonly reason: string) {
    super(reason);
  }
}

/** What a kernel knows of where it runs: the equation's index (for typed errors) and the mode. */
export interface EvalCtx {
  readonly eqn: number;
  /** The fp64 reference mode: compute in f64 and skip the final rounding to the result dtype. */
  readonly fp64: boolean;
}

/** Broad families, read by the planner and the feature matrix. */
export type OpCategory =
  | 'binary' | 'compare' | 'unary' | 'convert' | 'reduce' | 'matmul' | 'gather' | 'movement'
  | 'iota' | 'update' | 'row_kernel' | 'collective';

export interface OpRule<A> {
  readonly category: OpCategory;
  /** Operand count: `[min, max]`, `max` is Infinity for `concat`. */
  readonly arity: readonly [number, number];
  readonly attrs: { readonly [K in keyof A]-?: AttrSpec };
  /** True when the op may be a step of a row_kernel body. */
  readonly rowStep: boolean;
  /**
   * The dtype an untyped literal at operand `index` takes, given the types of the other operands
   * (undefined where that operand is itself an untyped literal); undefined when it cannot be told.
   */
  literalDtype(index: number, ins: readonly (ValueType | undefined)[]): DType | undefined;
  /** The shape and dtype rule: result types, or a RuleError naming the place at fault. */
  infer(ins: readonly ValueType[], attrs: A): ValueType[];
  /** The oracle kernel: exact in f64, rounded once to the result dtype unless `ctx.fp64`. */
  evaluate(ins: readonly Tensor[], attrs: A, ctx: EvalCtx): Tensor[];
  /**
   * How the op takes a quantized weight (only matmul, gather and convert do; src/ops/quantized.ts).
   * Absent: an equation of the op with a quantized operand is refused at that operand.
   */
  readonly quantized?: QuantRule<A>;
}

/** The rule and kernel of an op for an equation whose operand `operand` is a quantized weight. */
export interface QuantRule<A> {
  /** The one operand that may be quantized. */
  readonly operand: number;
  /** That operand's place, for messages: "its right operand". */
  readonly place: string;
  infer(ins: readonly AnyType[], attrs: A): ValueType[];
  /** Every quantized element dequantized exactly (in f64), then the op as for floats. */
  evaluate(ins: readonly HeldTensor[], attrs: A, ctx: EvalCtx): Tensor[];
}

export type OpTable = { readonly [P in OpName]: OpRule<OpAttrs[P]> };
