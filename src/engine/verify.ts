/**
 * Oracle verification: every step's results compared with the oracle's under the program's numerics
 * class on its target. The CPU target is the oracle itself behind the Device interface, so its class is
 * Exact: any difference at all is a defect in the path between them.
 */
import type { CheckedProgram } from '../ir/checked.js';
import type { Comparison } from '../numerics/compare.js';
import { compareTensor } from '../numerics/compare.js';
import type { NumericsClass } from '../numerics/classes.js';
import { toleranceFor } from '../numerics/classes.js';
import type { StepOutput } from '../oracle/types.js';
import type { TargetName } from '../targets/target.js';
import type { Verification } from './job.js';

/** The numerics class a target's results are held to. */
export function numericsClassOf(target: TargetName): NumericsClass {
  switch (target) {
    case 'cpu': return 'Exact';
    case 'xdna2': return 'Contract';
    case 'npu4': return 'NarrowStorage';
  }
}

/** Compares each step's results (device) with the oracle's (reference). */
export function verifySteps(target: TargetName, checked: CheckedProgram, device: readonly StepOutput[], reference: readonly StepOutput[]): Verification {
  const cls = numericsClassOf(target);
  let pass = device.length === reference.length;
  const steps = device.map((d, i) => {
    const out: Record<string, Comparison> = {};
    const ref = reference[i];
    for (const name of checked.program.results) {
      const got = d.results[name]!;
      const want = ref?.results[name];
      if (!want) { pass = false; continue; }
      const c = compareTensor(got, want, toleranceFor(cls, want.dtype));
      out[name] = c;
      if (!c.pass) pass = false;
    }
    return out;
  });
  return { numericsClass: cls, pass, steps };
}
