/**
 * Running one step of a model's program: through the engine on a target (each step one job of one
 * step, its KV cache handed in as the job's state and taken back from its result), or in this thread
 * on the oracle in fp64 mode, the independent reference the gate and the tests compare with. Both
 * take the same programs and the same weights (byte ranges of the model's file).
 */
import type { Engine } from '../../jobs/engine.js';
import type { FileWeight } from '../../ir/fileWeight.js';
import type { CheckedProgram } from '../../ir/checked.js';
import { programToJson } from '../../ir/codec.js';
import { tensor, type HeldTensor, type Tensor } from '../../ir/tensor.js';
import { decodeWeight } from '../../ir/tensorCodec.js';
import type { Program } from '../../ir/types.js';
import type { TensorMap } from '../../ir/values.js';
import { checkProgram } from '../../ops/validate.js';
import { heldWeights, runStep } from '../../oracle/evaluate.js';
import type { ModelWeights } from './weights.js';

/** What one step takes: the tokens and their positions (consecutive), and the KV cache before it. */
export interface StepInput {
  readonly ids: readonly number[];
  readonly positions: readonly number[];
  readonly state: TensorMap;
}

/** What one step gives: the logits (of the last token, or of each with allLogits) and the KV cache after it. */
export interface StepResult {
  readonly logits: Tensor;
  readonly state: TensorMap;
}

/** Runs steps of a model's programs somewhere. */
export interface StepRunner {
  /** `engine:<target>` or `reference:fp64`. */
  readonly name: string;
  step(program: Program, input: StepInput): Promise<StepResult>;
}

function activations(input: StepInput): Record<string, Tensor> {
  return {
    ids: tensor('i32', [input.ids.length], input.ids),
    positions: tensor('i32', [input.positions.length], input.positions),
  };
}

/** The weights as an inputs file binds them: `{ dtype, shape, file, offset, length }` each. */
export function weightInputs(weights: ModelWeights): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, w] of weights) out[k] = { dtype: w.dtype, shape: [...w.shape], file: w.file, offset: w.offset, length: w.length };
  return out;
}

/** Steps as jobs of an engine on `target`. */
export class EngineRunner implements StepRunner {
  readonly name: string;
  readonly #weights: Record<string, unknown>;
  readonly #json = new Map<string, unknown>();

  constructor(readonly engine: Engine, readonly target: string, weights: ModelWeights, readonly deadlineMs = Infinity) {
    this.name = `engine:${target}`;
    this.#weights = weightInputs(weights);
  }

  async step(program: Program, input: StepInput): Promise<StepResult> {
    let json = this.#json.get(program.name);
    if (json === undefined) this.#json.set(program.name, (json = programToJson(program)));
    const job = this.engine.submit({
      program: json as object, target: this.target, steps: 1, keepSteps: 0, deadlineMs: this.deadlineMs,
      inputs: { ...this.#weights, ...input.state, ...activations(input) },
    });
    const r = await job.result;
    return { logits: r.results['logits']!, state: r.state };
  }
}

/** Steps on the oracle in fp64 mode, in this thread: the weights are read once, the programs checked once. */
export class ReferenceRunner implements StepRunner {
  readonly name = 'reference:fp64';
  readonly #weights: Readonly<Record<string, HeldTensor>>;
  readonly #checked = new Map<string, CheckedProgram>();

  constructor(weights: ModelWeights) {
    const bound: Record<string, HeldTensor | FileWeight> = {};
    const files = new Map();
    for (const [k, w] of Object.entries(weightInputs(weights))) bound[k] = decodeWeight(w, `/${k}`, files);
    this.#weights = heldWeights(bound);
  }

  step(program: Program, input: StepInput): Promise<StepResult> {
    let checked = this.#checked.get(program.name);
    if (checked === undefined) this.#checked.set(program.name, (checked = checkProgram(program)));
    const out = runStep(checked, { weights: this.#weights, state: input.state, activations: activations(input) }, { fp64: true });
    return Promise.resolve({ logits: out.results['logits']!, state: out.state });
  }
}
