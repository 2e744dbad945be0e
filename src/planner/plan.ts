/**
 * Admission and refusal: every equation goes through its target's admission table; the first refusal
 * is a typed CapabilityMissing naming the equation, the op and the missing capability.
 */
import { CapabilityMissing } from '../errors.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { Target, TargetName } from '../targets/target.js';

/** A contiguous run of equations that becomes one artifact and one run per step. */
export interface Region {
  /** Indices into the program's equations, ascending and contiguous. */
  readonly eqns: readonly number[];
}

export interface Plan {
  readonly target: TargetName;
  readonly part: string;
  readonly regions: readonly Region[];
}

/** Plans a checked program for a target, or throws CapabilityMissing for the first equation it refuses. */
export function planProgram(checked: CheckedProgram, target: Target): Plan {
  for (const e of checked.eqns) {
    const a = target.admission[e.op](e);
    if (!a.admitted) throw new CapabilityMissing(e.index, e.op, a.capability);
  }
  // The CPU runs a whole program as one artifact; region splitting belongs to the targets that need it.
  return { target: target.name, part: target.part, regions: [{ eqns: checked.eqns.map((e) => e.index) }] };
}
