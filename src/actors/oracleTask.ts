/** The oracle pool's task: run a program (JSON form) on the CPU reference for every step. */
import { parseProgram } from '../ir/codec.js';
import { checkProgram } from '../ops/validate.js';
import { runProgram } from '../oracle/evaluate.js';
import type { ProgramInputs, StepOutput } from '../oracle/types.js';

export interface OracleTask {
  readonly programJson: unknown;
  readonly inputs: ProgramInputs;
  readonly fp64?: boolean;
}

/** Every step's results and state, as the oracle computes them. */
export function oracleTask(task: OracleTask): StepOutput[] {
  const checked = checkProgram(parseProgram(task.programJson));
  return runProgram(checked, task.inputs, { fp64: task.fp64 === true });
}
