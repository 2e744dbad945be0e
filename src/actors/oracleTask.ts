/** The oracle pool's task: run a program (JSON form) on the CPU reference for every step. */
import { parseProgram } from '../ir/codec.js';
import { checkProgram } from '../ops/validate.js';
import { NO_LIMITS } from '../ir/limits.js';
import { runProgram } from '../oracle/evaluate.js';
import type { ProgramInputs, StepOutput } from '../oracle/types.js';

export interface OracleTask {
  readonly programJson: unknown;
  readonly inputs: ProgramInputs;
  readonly fp64?: boolean;
}

/** Every step's results and state, as the oracle computes them. */
export function oracleTask(task: OracleTask): StepOutput[] {
  // Checked under the engine's limits where it entered; the defaults must not refuse it here.
  const checked = checkProgram(parseProgram(task.programJson, NO_LIMITS), NO_LIMITS);
  return runProgram(checked, task.inputs, { fp64: task.fp64 === true });
}
