/**
 * Admission and refusal: every equation goes through its target's admission table. A plan lists every
 * refusal of a program at once; a job fails with the first, as its typed error.
 */
import type { EngineError } from '../errors/index.js';
import { CapabilityMissing, IntegerToFloat, MissingBound, MissingContract, NarrowingRange } from '../errors/index.js';
import type { CheckedEqn, CheckedProgram } from '../ir/checked.js';
import type { Refusal, Target, TargetName } from '../targets/target.js';
import { admissionOf } from '../targets/target.js';

/** A contiguous run of equations that becomes one artifact and one run per step. */
interface Region {
  /** Indices into the program's equations, ascending and contiguous. */
  readonly eqns: readonly number[];
}

export interface Plan {
  readonly target: TargetName;
  readonly part: string;
  readonly regions: readonly Region[];
}

/** The typed error of a refusal. */
export function refusalError(e: CheckedEqn, r: Refusal): EngineError {
  switch (r.kind) {
    case 'capability': return new CapabilityMissing(e.index, e.op, r.capability);
    case 'missing-bound': return new MissingBound(e.index, r.step, r.bound);
    case 'missing-contract': return new MissingContract(e.index, e.op);
    case 'narrowing-range': return new NarrowingRange(e.index, r.value);
    case 'integer-to-float': return new IntegerToFloat(e.index);
  }
}

/** Every refusal of a program on a target, in equation order (empty when it is admitted whole). */
export function refusalsOf(checked: CheckedProgram, target: Target): EngineError[] {
  const out: EngineError[] = [];
  for (const e of checked.eqns) {
    const a = admissionOf(target, e);
    if (!a.admitted) out.push(refusalError(e, a.refusal));
  }
  return out;
}

/** Plans a checked program for a target, or throws the typed error of its first refusal. */
export function planProgram(checked: CheckedProgram, target: Target): Plan {
  const refused = refusalsOf(checked, target);
  if (refused.length > 0) throw refused[0]!;
  // One region of the whole program; targets that split into regions do it in their backend's units().
  return { target: target.name, part: target.part, regions: [{ eqns: checked.eqns.map((e) => e.index) }] };
}
