/**
 * Inputs files: one JSON object mapping every arg name to a tensor. Weights and state initial contents
 * are one tensor each; an activation is one tensor per step (an array) or a single tensor, which is
 * then reused for every step. Refusals are InvalidInput with a JSON pointer into the file (`/x/2/shape`).
 * A step count has a maximum (DEFAULT_MAX_STEPS unless the caller raises it, docs/LIMITS.md): a
 * count past it is a ResourceLimit `steps`, refused before anything is allocated per step.
 */
import { InvalidInput, ResourceLimit } from '../errors/index.js';
import type { ProgramInputs, TensorMap, Weight, WeightMap } from './values.js';
import type { CheckedProgram } from './checked.js';
import { hasOwn, isRecord, kindOf, ptr, setOwn } from './pointer.js';
import type { Tensor } from './tensor.js';
import type { Arg } from './types.js';
import type { BoundFiles } from './fileWeight.js';
import { decodeTensor, decodeWeight } from './tensorCodec.js';

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, k) => d === b[k]);
}

function argTensor(arg: Arg, json: unknown, path: string): Tensor {
  if (isRecord(json) && hasOwn(json, 'file')) {
    throw new InvalidInput(ptr(path, 'file'), `${arg.role} ${arg.name} is given anew for the run; only a weight can be bound from a file`);
  }
  return matches(arg, decodeTensor(json, path), path);
}

// A weight may be a quantized tensor or a byte range of a file (src/ir/fileWeight.ts), bound here.
function argWeight(arg: Arg, json: unknown, path: string, files: BoundFiles): Weight {
  return matches(arg, decodeWeight(json, path, files), path);
}

function matches<T extends Weight>(arg: Arg, t: T, path: string): T {
  if (t.dtype !== arg.dtype) throw new InvalidInput(ptr(path, 'dtype'), `${arg.role} ${arg.name} is ${arg.dtype}, this tensor is ${t.dtype}`);
  if (!sameShape(t.shape, arg.shape)) {
    throw new InvalidInput(ptr(path, 'shape'), `${arg.role} ${arg.name} has shape [${arg.shape.join(', ')}], this tensor has [${t.shape.join(', ')}]`);
  }
  return t;
}

/** The most steps one decoding (one job) may ask for unless the caller raises it (docs/LIMITS.md). */
export const DEFAULT_MAX_STEPS = 1_000_000;

// The step count: as asked, else the length every activation array agrees on, else 1.
function stepCount(o: Record<string, unknown>, activations: readonly Arg[], asked: number | undefined, maxSteps: number): number {
  if (asked !== undefined && (!Number.isSafeInteger(asked) || asked < 1)) {
    throw new InvalidInput('', `the step count is a positive integer, not ${String(asked)}`);
  }
  if (asked !== undefined && asked > maxSteps) throw new ResourceLimit('steps', asked, maxSteps);
  let steps = asked;
  let from: string | undefined;
  for (const a of activations) {
    const v = o[a.name];
    if (!Array.isArray(v)) continue;
    if (v.length === 0) throw new InvalidInput(ptr('', a.name), `activation ${a.name} is an empty array; give one tensor per step`);
    if (steps === undefined) {
      if (v.length > maxSteps) throw new ResourceLimit('steps', v.length, maxSteps, ptr('', a.name));
      steps = v.length;
      from = a.name;
    } else if (v.length !== steps) {
      const why = from === undefined ? `${steps} steps were asked for` : `${from} has ${steps}`;
      throw new InvalidInput(ptr('', a.name), `activation ${a.name} has ${v.length} tensors, but ${why}; every array has one tensor per step`);
    }
  }
  return steps ?? 1;
}

/**
 * An inputs file decoded for a run of `count` steps whose activations are built one step at a time:
 * memory is the file's own tensors, whatever the count.
 */
export interface StepInputs {
  /** Weights; one bound from a file has been opened, checked and sampled for its identity here. */
  readonly weights: WeightMap;
  readonly state: TensorMap;
  readonly count: number;
  /** Step `i`'s activation contents (0 <= i < count), built on each call. */
  step(i: number): TensorMap;
}

/**
 * Decodes and checks every tensor of an inputs file for a checked program, without building any step;
 * `steps` defaults to the activation arrays' length or 1, and may be at most `maxSteps`.
 */
export function decodeStepInputs(json: unknown, checked: CheckedProgram, steps?: number, maxSteps = DEFAULT_MAX_STEPS): StepInputs {
  if (!isRecord(json)) throw new InvalidInput('', `an inputs file is an object mapping arg names to tensors, not ${kindOf(json)}`);
  const args = checked.program.args;
  for (const k of Object.keys(json)) {
    if (!args.some((a) => a.name === k)) {
      throw new InvalidInput(ptr('', k), `the program has no arg named ${JSON.stringify(k)} (its args: ${args.map((a) => a.name).join(', ') || 'none'})`);
    }
  }
  const activations = args.filter((a) => a.role === 'activation');
  const count = stepCount(json, activations, steps, maxSteps);
  const weights: Record<string, Weight> = {};
  const files: BoundFiles = new Map();
  const state: Record<string, Tensor> = {};
  // Per activation: one tensor per step, or the one tensor every step reuses.
  const acts: { readonly name: string; readonly perStep?: readonly Tensor[]; readonly every?: Tensor }[] = [];
  for (const a of args) {
    const at = ptr('', a.name);
    if (!hasOwn(json, a.name)) throw new InvalidInput(at, `${a.role} ${a.name} is not supplied`);
    const v = json[a.name];
    if (a.role !== 'activation') {
      if (Array.isArray(v)) throw new InvalidInput(at, `${a.role} ${a.name} is one tensor for the whole run, not an array of them`);
      if (a.role === 'weight') setOwn(weights, a.name, argWeight(a, v, at, files));
      else setOwn(state, a.name, argTensor(a, v, at));
    } else if (Array.isArray(v)) {
      acts.push({ name: a.name, perStep: v.map((t, s) => argTensor(a, t, ptr(at, s))) });
    } else {
      acts.push({ name: a.name, every: argTensor(a, v, at) });
    }
  }
  return {
    weights, state, count,
    step(i: number): TensorMap {
      if (!(Number.isInteger(i) && i >= 0 && i < count)) throw new RangeError(`step ${i} is not one of the ${count} steps`);
      const m: Record<string, Tensor> = {};
      for (const a of acts) setOwn(m, a.name, a.perStep?.[i] ?? a.every!);
      return m;
    },
  };
}

/**
 * Decodes an inputs file for a checked program, every step's activations built (for the oracle's
 * runProgram); `steps` defaults to the activation arrays' length or 1, and may be at most `maxSteps`.
 */
export function decodeInputs(json: unknown, checked: CheckedProgram, steps?: number, maxSteps = DEFAULT_MAX_STEPS): ProgramInputs {
  const s = decodeStepInputs(json, checked, steps, maxSteps);
  return { weights: s.weights, state: s.state, steps: Array.from({ length: s.count }, (_, i) => s.step(i)) };
}

/**
 * The args a session opens with (src/jobs/deviceSession.ts): every weight, and each state's initial
 * tensor, or none at all with `zeroState` (the device zeroes it). Activations come with each step, so
 * one given here is refused, naming it.
 */
export function decodeSessionArgs(json: unknown, checked: CheckedProgram, zeroState: boolean): { readonly weights: WeightMap; readonly state: TensorMap } {
  if (!isRecord(json)) throw new InvalidInput('', `a session's inputs are an object mapping weight (and state) names to tensors, not ${kindOf(json)}`);
  const args = checked.program.args;
  const weights: Record<string, Weight> = {};
  const state: Record<string, Tensor> = {};
  const files: BoundFiles = new Map();
  for (const k of Object.keys(json)) {
    const a = args.find((x) => x.name === k);
    if (a === undefined) throw new InvalidInput(ptr('', k), `the program has no arg named ${JSON.stringify(k)} (its args: ${args.map((x) => x.name).join(', ') || 'none'})`);
    if (a.role === 'activation') throw new InvalidInput(ptr('', k), `activation ${k} is given with each step of a session, not when it opens`);
  }
  for (const a of args) {
    const at = ptr('', a.name);
    if (a.role === 'activation') continue;
    if (!hasOwn(json, a.name)) {
      if (a.role === 'state' && zeroState) continue;
      throw new InvalidInput(at, `${a.role} ${a.name} is not supplied`);
    }
    if (a.role === 'weight') setOwn(weights, a.name, argWeight(a, json[a.name], at, files));
    else setOwn(state, a.name, argTensor(a, json[a.name], at));
  }
  return { weights, state };
}
