/**
 * The planner actor: parses and validates a program, plans it for a target, and answers the checked
 * program with its plan. Pure functions over plain data, so it is cheap to run in its own worker.
 */
import { UsageError } from '../errors.js';
import type { CheckedProgram } from '../ir/checked.js';
import { parseProgram, programToJson } from '../ir/codec.js';
import { checkProgram } from '../ir/validate.js';
import type { Plan } from '../planner/plan.js';
import { planProgram } from '../planner/plan.js';
import { resolveTarget } from '../targets/index.js';

export interface PlanReply {
  readonly checked: CheckedProgram;
  readonly plan: Plan;
  /** The program in the format's JSON form, as compilers and cache identities take it. */
  readonly programJson: object;
}

/** Validates and plans one program (JSON form) for a target. */
export function planJob(programJson: unknown, target: string): PlanReply {
  const t = resolveTarget(target);
  const checked = checkProgram(parseProgram(programJson));
  const plan = planProgram(checked, t);
  return { checked, plan, programJson: programToJson(checked.program) };
}

export const plannerApi = {
  plan(programJson: unknown, target: string): PlanReply {
    if (typeof target !== 'string') throw new UsageError('target must be a string');
    return planJob(programJson, target);
  },
};
export type PlannerApi = typeof plannerApi;
