/**
 * Oracle verification: every step's results compared with the oracle's under the program's numerics
 * class on its target. The CPU target is the oracle itself behind the Device interface, so its class is
 * Exact: any difference at all is a defect in the path between them.
 */
import type { CheckedProgram } from '../ir/checked.js';
import type { Comparison, Tolerance } from '../numerics/compare.js';
import type { DType } from '../ir/types.js';
import { resolveTarget } from '../targets/index.js';
import { programTolerance } from '../targets/xdna2Numerics.js';
import { compareTensor } from '../numerics/compare.js';
import type { NumericsClass } from '../numerics/classes.js';
import { toleranceFor } from '../numerics/classes.js';
import type { StepOutput } from '../oracle/types.js';
import type { TargetName } from '../targets/target.js';
import type { Verification } from './job.js';

/**
 * The numerics class of a program on a target and each result's tolerance. The CPU is the oracle
 * (Exact); the XDNA2 propagates its ops' published contracts through the program; the Intel NPU's
 * narrowed graph is held to NarrowStorage, the loosest class.
 */
export function programNumerics(target: TargetName, checked: CheckedProgram): { numericsClass: NumericsClass; tolerance: (result: string, dtype: DType) => Tolerance } {
  switch (target) {
    case 'cpu': return { numericsClass: 'Exact', tolerance: (_r, d) => toleranceFor('Exact', d) };
    case 'xdna2': {
      const n = programTolerance(checked, resolveTarget('xdna2'));
      return { numericsClass: n.numericsClass, tolerance: (r, d) => n.tolerance[r] ?? toleranceFor(n.numericsClass, d) };
    }
    case 'npu4': return { numericsClass: 'NarrowStorage', tolerance: (_r, d) => toleranceFor('NarrowStorage', d) };
  }
}

/** Compares each step's results (device) with the oracle's (reference). */
export function verifySteps(target: TargetName, checked: CheckedProgram, device: readonly StepOutput[], reference: readonly StepOutput[]): Verification {
  const numerics = programNumerics(target, checked);
  const cls = numerics.numericsClass;
  let pass = device.length === reference.length;
  const steps = device.map((d, i) => {
    const out: Record<string, Comparison> = {};
    const ref = reference[i];
    for (const name of checked.program.results) {
      const got = d.results[name]!;
      const want = ref?.results[name];
      if (!want) { pass = false; continue; }
      const c = compareTensor(got, want, numerics.tolerance(name, want.dtype));
      out[name] = c;
      if (!c.pass) pass = false;
    }
    return out;
  });
  return { numericsClass: cls, pass, steps };
}
