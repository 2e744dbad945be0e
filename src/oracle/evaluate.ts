/**
 * The CPU reference evaluator: runs a checked program's equations in order through the op table's
 * kernels, one step at a time, carrying state from step to step.
 */
import { InvalidInput } from '../errors/index.js';
import type { CheckedProgram } from '../ir/checked.js';
import { isFileWeight, readFileWeight } from '../ir/fileWeight.js';
import { isQuantTensor, type HeldTensor, type Tensor } from '../ir/tensor.js';
import type { Arg, Role } from '../ir/types.js';
import { eqnOuts, isLiteral, isFloat, isQuantized } from '../ir/types.js';
import { roundToDtype } from '../numerics/float16.js';
import { sameShape, shapeStr } from '../ops/common.js';
import { evaluateEqn } from '../ops/table.js';
import { liveness } from '../ops/validate.js';
import type { HeldMap, OracleOptions, ProgramInputs, StepOutput, TensorMap, TensorMaps, WeightMap } from './types.js';

const SOURCE: Readonly<Record<Role, keyof TensorMaps>> = { weight: 'weights', state: 'state', activation: 'activations' };

/** The tensor supplied for an arg, refused when missing or of another dtype or shape. */
function argValue(arg: Arg, env: TensorMaps): HeldTensor {
  const where = SOURCE[arg.role];
  const t = env[where][arg.name];
  const path = `/${where}/${arg.name}`;
  if (t === undefined) throw new InvalidInput(path, `no ${arg.role} tensor supplied for ${arg.name}`);
  if (t.dtype !== arg.dtype || !sameShape(t.shape, arg.shape)) {
    throw new InvalidInput(path, `${arg.name} is ${arg.dtype}${shapeStr(arg.shape)}, got ${t.dtype}${shapeStr(t.shape)}`);
  }
  return t;
}

// Each checked program's liveness, computed once however many steps run it.
const LIVENESS = new WeakMap<CheckedProgram, ReturnType<typeof liveness>>();
function liveOf(checked: CheckedProgram): ReturnType<typeof liveness> {
  let l = LIVENESS.get(checked);
  if (l === undefined) LIVENESS.set(checked, (l = liveness(checked.program)));
  return l;
}

/** Runs one step: every equation in order, then the results and the carried state after the step. */
export function runStep(checked: CheckedProgram, env: TensorMaps, opts: OracleOptions = {}): StepOutput {
  const fp64 = opts.fp64 ?? false;
  const p = checked.program;
  const values = new Map<string, HeldTensor>();
  for (const arg of p.args) values.set(arg.name, argValue(arg, env));
  // A value no later equation reads is let go at once (not an arg, result or state's next value), so a
  // step holds its live values, as the program-bytes limit counts them, not every value of every layer.
  const { lastRead, kept } = liveOf(checked);
  for (const ce of checked.eqns) {
    const ins = ce.eqn.in.map((o, j): HeldTensor => {
      if (!isLiteral(o)) return values.get(o)!;
      const dtype = ce.ins[j]!.dtype;
      if (isQuantized(dtype)) throw new Error(`a literal of equation ${ce.index} has the quantized dtype ${dtype}`);
      // In fp64 mode a float literal is the reference's exact value, not its nearest dtype value.
      const v = fp64 && isFloat(dtype) ? o.lit : roundToDtype(dtype, o.lit);
      return { dtype, shape: [], data: Float64Array.of(v) };
    });
    const outs = evaluateEqn(ce.op, ins, ce.eqn.attrs, { eqn: ce.index, fp64 });
    eqnOuts(ce.eqn).forEach((name, k) => { if (kept.has(name) || lastRead.has(name)) values.set(name, outs[k]!); });
    for (const o of ce.eqn.in) if (!isLiteral(o) && !kept.has(o) && lastRead.get(o) === ce.index) values.delete(o);
  }
  // Validation keeps quantized values out of results and state; only weights are ever quantized.
  const element = (name: string): Tensor => {
    const t = values.get(name)!;
    if (isQuantTensor(t)) throw new Error(`${name} is quantized, which no result or state may be`);
    return t;
  };
  const results: Record<string, Tensor> = {};
  for (const r of p.results) results[r] = element(r);
  const state: Record<string, Tensor> = {};
  for (const arg of p.args) {
    if (arg.role !== 'state') continue;
    // A state arg the program does not map is carried unchanged.
    const next = p.state[arg.name];
    state[arg.name] = element(next ?? arg.name);
  }
  return { results, state };
}

/** Weights as the oracle holds them: each one bound from a file is read from it, once. */
export function heldWeights(weights: WeightMap): HeldMap {
  const out: Record<string, HeldTensor> = {};
  for (const [k, w] of Object.entries(weights)) out[k] = isFileWeight(w) ? readFileWeight(w, k) : w;
  return out;
}

/** Runs every step of `inputs` in order, feeding each step the state the previous one left. */
export function runProgram(checked: CheckedProgram, inputs: ProgramInputs, opts: OracleOptions = {}): StepOutput[] {
  const out: StepOutput[] = [];
  let state: TensorMap = inputs.state;
  const weights = heldWeights(inputs.weights);
  for (const activations of inputs.steps) {
    const step = runStep(checked, { weights, state, activations }, opts);
    out.push(step);
    state = step.state;
  }
  return out;
}
