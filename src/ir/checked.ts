/**
 * A program that passed validation: every value typed, every literal's dtype resolved. Everything after
 * validation (oracle, planner, compilers) takes a CheckedProgram, never a raw Program.
 */
import type { AnyType, OpName, ValueType } from './ops.js';
import type { Eqn, Program } from './types.js';

export interface CheckedEqn {
  readonly index: number;
  readonly eqn: Eqn;
  readonly op: OpName;
  /**
   * Operand types in order; a literal's entry is a scalar (`shape: []`) of its resolved dtype. Only a
   * weight arg is ever of a quantized type, and only where its op takes one (src/ops/quantized.ts).
   */
  readonly ins: readonly AnyType[];
  /** Result types: never quantized. */
  readonly outs: readonly ValueType[];
}

export interface CheckedProgram {
  readonly program: Program;
  /** The type of every named value: args (a weight may be quantized) and equation outputs. */
  readonly types: ReadonlyMap<string, AnyType>;
  readonly eqns: readonly CheckedEqn[];
}
