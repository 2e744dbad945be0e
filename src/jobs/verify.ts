/**
 * Oracle verification: every step's results compared with the oracle's under the program's numerics
 * class and tolerances on its target, which the target's numerics policy alone decides
 * (src/targets/numerics.ts): the same numbers `plan` reports.
 */
import type { CheckedProgram } from '../ir/checked.js';
import type { Comparison } from '../numerics/compare.js';
import { compareTensor } from '../numerics/compare.js';
import { toleranceFor } from '../numerics/classes.js';
import type { StepOutput } from '../oracle/types.js';
import { resolveTarget } from '../targets/index.js';
import { programNumerics } from '../targets/numerics.js';
import type { TargetName } from '../targets/target.js';
import type { Verification } from './job.js';

/** Compares each step's results (device) with the oracle's (reference). */
export function verifySteps(target: TargetName, checked: CheckedProgram, device: readonly StepOutput[], reference: readonly StepOutput[]): Verification {
  const numerics = programNumerics(checked, resolveTarget(target));
  const cls = numerics.numericsClass;
  let pass = device.length === reference.length;
  const steps = device.map((d, i) => {
    const out: Record<string, Comparison> = {};
    const ref = reference[i];
    for (const name of checked.program.results) {
      const got = d.results[name]!;
      const want = ref?.results[name];
      if (!want) { pass = false; continue; }
      const c = compareTensor(got, want, numerics.tolerance[name] ?? toleranceFor(cls, want.dtype));
      out[name] = c;
      if (!c.pass) pass = false;
    }
    return out;
  });
  return { numericsClass: cls, pass, steps };
}
