/**
 * Which form of a program (program.ts: fused row kernels, or plain ops with the tables as inputs) a
 * target list runs: the one its planner admits in the fewest segments, fused on a tie. When neither is
 * admitted, the one with fewer refused equations, so that a run's refusal names what the closer form
 * misses (a quantized weight on the NPU4, not the trig it would not need). The NPU4, which recognizes no
 * composite and has no trig or integer arithmetic, takes a plain-form prefill whole; the XDNA2 takes
 * the fused form's norms.
 */
import { segmentFit } from '../../compiler/fit.js';
import { InvalidOptions, type EngineError } from '../../errors/index.js';
import type { Limits } from '../../ir/limits.js';
import type { Program } from '../../ir/types.js';
import { checkProgram } from '../../ops/validate.js';
import { parseTargetList, partitionProgram } from '../../planner/partition.js';
import type { Qwen3Config } from './config.js';
import { buildProgram, type ProgramForm, type ProgramShape } from './program.js';
import type { ModelWeights } from './weights.js';

/** A program in the form chosen for a target list, and the planner's refusal of it there, if any. */
export interface PlacedProgram {
  readonly program: Program;
  /** What a run would fail with: the first target's refusal of the first refused equation, or a bound. */
  readonly refusal?: EngineError;
}

interface Scored extends PlacedProgram {
  /** What the targets refuse (equations and bounds), then the segments; less is better. */
  readonly score: readonly [number, number];
}

function scored(program: Program, targets: string, limits?: Limits): Scored {
  const plan = partitionProgram(checkProgram(program, limits), parseTargetList(targets), segmentFit);
  const refusal = plan.refused[0]?.refusals[0]?.error ?? plan.limits[0];
  return { program, score: [plan.refused.length + plan.limits.length, plan.segments.length], ...(refusal === undefined ? {} : { refusal }) };
}

const better = (a: Scored, b: Scored) => a.score[0] < b.score[0] || (a.score[0] === b.score[0] && a.score[1] < b.score[1]);

/** The program of `shape` in the form `targets` run best; see the file's doc. */
export function programFor(c: Qwen3Config, weights: ModelWeights, shape: ProgramShape, targets: string): PlacedProgram {
  const fused = scored(buildProgram(c, weights, { ...shape, form: 'fused' }), targets, shape.limits);
  if (fused.score[0] === 0 && fused.score[1] === 1) return fused;
  let plainProgram: Program;
  try {
    plainProgram = buildProgram(c, weights, { ...shape, form: 'plain' satisfies ProgramForm });
  } catch (e) {
    // A graph the plain form cannot write (rope_freqs factors, a sliding window) runs fused, or is refused as fused.
    if (e instanceof InvalidOptions && e.field === 'form') return fused.refusal === undefined ? { program: fused.program } : { program: fused.program, refusal: fused.refusal };
    throw e;
  }
  const plain = scored(plainProgram, targets, shape.limits);
  const { program, refusal } = better(plain, fused) ? plain : fused;
  return refusal === undefined ? { program } : { program, refusal };
}
