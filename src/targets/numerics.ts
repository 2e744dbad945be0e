/**
 * A program's numerics class and per-result tolerances on a target, read from the target's numerics
 * policy and nowhere else: `plan` reports them, a verified run is judged by them, the feature matrix
 * prints the policy. The CPU is the oracle (Exact); the XDNA2 propagates its ops' published contracts
 * through the program (propagate.ts); the NPU4 holds every program to NarrowStorage.
 */
import type { CheckedProgram } from '../ir/checked.js';
import { elementDtype, isFloat } from '../ir/types.js';
import { tolName } from '../numerics/compare.js';
import type { Tolerance } from '../numerics/compare.js';
import type { NumericsPolicy, Target } from './target.js';
import { programTolerance, type ProgramNumerics } from './propagate.js';

export type { ProgramNumerics } from './propagate.js';

/** The numerics class of `checked` on `target`, each result's tolerance and the premises it rests on. */
export function programNumerics(checked: CheckedProgram, target: Target): ProgramNumerics {
  const policy = target.numerics;
  if (policy.kind === 'contracts') return programTolerance(checked, target);
  const tolerance: Record<string, Tolerance> = {};
  const assumptions: Record<string, string[]> = {};
  for (const r of checked.program.results) {
    const dtype = elementDtype(checked.types.get(r)!.dtype, `result ${r}`);
    tolerance[r] = policy.tolerances[dtype];
    assumptions[r] = policy.premise !== undefined && isFloat(dtype) ? [policy.premise] : [];
  }
  return { numericsClass: policy.numericsClass, tolerance, assumptions };
}

/** What an admitted equation without a contract of its own computes on a target, for people. */
export function equationNumerics(policy: NumericsPolicy): string {
  return policy.kind === 'class' ? policy.perEquation : 'exact (bit-equal to the oracle)';
}

/** The policy in one line, for the feature matrix. */
export function describeNumerics(policy: NumericsPolicy): string {
  if (policy.kind === 'contracts') {
    return 'Exact where every equation a result depends on is exact, else Contract: each admitted op\'s contract below, propagated through the program to a tolerance per result';
  }
  const floats = policy.tolerances.f32;
  const premise = policy.premise === undefined ? '' : `; ${policy.premise}`;
  if (floats.kind === 'exact') return `${policy.numericsClass} for every program: every result bit-equal to the oracle's${premise}`;
  return `${policy.numericsClass} for every program: float results ${tolName(floats)}, i32 and bool ${tolName(policy.tolerances.i32)}${premise}`;
}
