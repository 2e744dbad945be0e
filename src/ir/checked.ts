/**
 * A program that passed validation: every value typed, every literal's dtype resolved. Everything after
 * validation (oracle, planner, compilers) takes a CheckedProgram, never a raw Program.
 */
import type { OpName, ValueType } from './ops.js';
import type { Eqn, Program } from './types.js';

export interface CheckedEqn {
  readonly index: number;
  readonly eqn: Eqn;
  readonly op: OpName;
  /** Operand types in order; a literal's entry is a scalar (`shape: []`) of its resolved dtype. */
  readonly ins: readonly ValueType[];
  readonly outs: readonly ValueType[];
}

export interface CheckedProgram {
  readonly program: Program;
  /** The type of every named value: args and equation outputs. */
  readonly types: ReadonlyMap<string, ValueType>;
  readonly eqns: readonly CheckedEqn[];
}
