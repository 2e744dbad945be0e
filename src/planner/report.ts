/**
 * What planning says about a program on a target, all at once: each equation admitted (with the
 * contract the target publishes for it) or refused (its typed error), and the program's numerics class
 * and result tolerances, from the target's numerics policy (src/targets/numerics.ts). Regions are the compiler's business; the `plan` command adds them.
 */
import type { EngineError } from '../errors/index.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { OpName } from '../ops/rule.js';
import type { OpContract } from '../targets/contract.js';
import type { Target } from '../targets/target.js';
import { admissionOf } from '../targets/target.js';
import { programNumerics, type ProgramNumerics } from '../targets/numerics.js';
import { refusalError } from './plan.js';

/** One admitted equation and its contract (none: the target computes exactly what the oracle does). */
interface AdmittedEqn {
  readonly eqn: number;
  readonly op: OpName;
  readonly contract?: OpContract;
}

export interface PlanReport {
  readonly admitted: readonly AdmittedEqn[];
  /** Every refusal, in equation order, as its typed error. */
  readonly refused: readonly EngineError[];
  readonly numerics: ProgramNumerics;
}

/** Judges every equation of `checked` on `target` and derives the program's numerics. */
export function planReport(checked: CheckedProgram, target: Target): PlanReport {
  const admitted: AdmittedEqn[] = [];
  const refused: EngineError[] = [];
  for (const e of checked.eqns) {
    const a = admissionOf(target, e);
    if (!a.admitted) refused.push(refusalError(e, a.refusal));
    else admitted.push(a.contract === undefined ? { eqn: e.index, op: e.op } : { eqn: e.index, op: e.op, contract: a.contract });
  }
  return { admitted, refused, numerics: programNumerics(checked, target) };
}
