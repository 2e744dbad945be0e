/**
 * The reference side of contract verification: the oracle's results a device's are judged against.
 * They are computed by a ReferenceOracle, a function of the oracle pool's task (src/actors/oracleTask.ts
 * has the same shape), so the CLI can hand in its pool of workers while the device runs on the main
 * thread. The engine may not import an actor (docs/STYLE.md layout), hence a function and not the pool.
 * Without one, the references are computed in the calling thread (inThreadOracle).
 */
import { parseProgram } from '../ir/codec.js';
import { checkProgram } from '../ops/validate.js';
import { runProgram } from '../oracle/index.js';
import type { ProgramInputs, StepOutput, TensorMap } from '../oracle/types.js';

/** One reference computation: a program (JSON form) run on the CPU oracle for every step of `inputs`. */
interface ReferenceTask {
  readonly programJson: unknown;
  readonly inputs: ProgramInputs;
  /** The fp64 reference (every equation in f64, no final rounding) instead of the rounded f32 results. */
  readonly fp64?: boolean;
}

/** Computes a ReferenceTask: every step's outputs, in order (the oracle pool's `run`, say). */
export type ReferenceOracle = (task: ReferenceTask) => Promise<StepOutput[]>;

/** The oracle in the calling thread: what runs when no pool is handed in. */
export const inThreadOracle: ReferenceOracle = async (task) =>
  runProgram(checkProgram(parseProgram(task.programJson)), task.inputs, { fp64: task.fp64 === true });

/** How many steps one task carries: about `elements` input elements, so each task is worth a message. */
export function stepsPerTask(stepElements: number, elements = 32_768): number {
  return Math.max(1, Math.floor(elements / Math.max(1, stepElements)));
}

/**
 * Submits the steps of one program to `oracle` in tasks of `perTask` steps and joins their outputs.
 * The promise is marked handled at once: it is awaited only after the device has run, and if the device
 * fails first, a rejection here (the pool closing, say) must not surface as an unhandled one.
 */
export function references(oracle: ReferenceOracle, programJson: unknown, weights: TensorMap, steps: readonly TensorMap[], fp64: boolean, perTask: number): Promise<StepOutput[]> {
  const parts: Promise<StepOutput[]>[] = [];
  for (let i = 0; i < steps.length; i += perTask) {
    parts.push(oracle({ programJson, inputs: { weights, state: {}, steps: steps.slice(i, i + perTask) }, fp64 }));
  }
  const joined = Promise.all(parts).then((outs) => outs.flat());
  joined.catch(() => undefined);
  return joined;
}

/** Told after each op of a sweep: ops done, of the total, and the op just done. */
export type OpProgress = (done: number, total: number, op: string) => void;

/** What every target's contract sweep takes (each target's options add its own device or arithmetic). */
export interface SweepOptions {
  /** Only this op (one of the target's contract ops). */
  readonly op?: string;
  /** The random bulk's seed (default 1), so a failure can be replayed. */
  readonly seed?: number;
  /** Random elements per op, beyond the edge cases (the target's default), drawn in rounds. */
  readonly bulk?: number;
  /** Computes the references (default: in the calling thread); the CLI passes its oracle pool. */
  readonly oracle?: ReferenceOracle;
  /** Told after each op (the CLI's progress bar). */
  readonly onProgress?: OpProgress;
}

/**
 * Runs `consume` over `items` in order, `prepare` running `ahead` items early, so the references of the
 * next ops are being computed on the pool while the device runs this one. Preparing everything at once
 * would hold every op's cases in memory (the NPU4's are tens of megabytes each).
 */
export async function pipelined<T, P, R>(items: readonly T[], prepare: (item: T) => P, consume: (prepared: P, item: T) => Promise<R>, ahead = 2, onDone?: OpProgress): Promise<R[]> {
  const ready: P[] = [];
  const out: R[] = [];
  for (let i = 0; i < items.length; i++) {
    while (ready.length <= ahead && i + ready.length < items.length) ready.push(prepare(items[i + ready.length]!));
    out.push(await consume(ready.shift()!, items[i]!));
    onDone?.(i + 1, items.length, String(items[i]));
  }
  return out;
}
