/**
 * Which form of a program (program.ts: fused row kernels, or plain ops with the tables as inputs) a
 * target list runs: the one its planner admits in the fewest segments, fused on a tie. When neither is
 * admitted, the one with fewer refused equations, so that a run's refusal names what the closer form
 * misses (a quantized weight on the NPU4, not the trig it would not need). The NPU4, which recognizes no
 * composite and has no trig or integer arithmetic, takes a plain-form prefill whole; the XDNA2 takes
 * the fused form's norms.
 */
import { segmentFit } from '../../compiler/fit.js';
import type { Program } from '../../ir/types.js';
import { checkProgram } from '../../ops/validate.js';
import { parseTargetList, partitionProgram } from '../../planner/partition.js';
import type { Qwen3Config } from './config.js';
import { buildProgram, type ProgramForm, type ProgramShape } from './program.js';
import type { ModelWeights } from './weights.js';

/** How well `targets` plan a program: what they refuse (equations and bounds), then its segments; less is better. */
function score(program: Program, targets: string): readonly [number, number] {
  const plan = partitionProgram(checkProgram(program), parseTargetList(targets), segmentFit);
  return [plan.refused.length + plan.limits.length, plan.segments.length];
}

const better = (a: readonly [number, number], b: readonly [number, number]) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/** The program of `shape` in the form `targets` run best; see the file's doc. */
export function programFor(c: Qwen3Config, weights: ModelWeights, shape: ProgramShape, targets: string): Program {
  const fused = buildProgram(c, weights, { ...shape, form: 'fused' });
  const f = score(fused, targets);
  if (f[0] === 0 && f[1] === 1) return fused;
  const plain = buildProgram(c, weights, { ...shape, form: 'plain' satisfies ProgramForm });
  return better(score(plain, targets), f) ? plain : fused;
}
