/**
 * The oracle's side of a verified job, streamed so that its memory does not grow with the step count.
 * The reference runs on the oracle pool in chunks of steps, each chunk from the state the one before
 * left; a chunk is started only when the steps compared have reached the one before it, and a device
 * step waits for comparison at most until its chunk's reference arrives. So at most a few chunks of
 * outputs exist at once, and only the comparisons of the kept steps (and the first failure) stay.
 */
import type { ActorPool } from '../actors/pool.js';
import type { OracleTask } from '../actors/oracleTask.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { StepInputs } from '../ir/inputsCodec.js';
import { numel } from '../ir/types.js';
import type { Comparison } from '../numerics/compare.js';
import type { StepOutput, TensorMap } from '../oracle/types.js';
import type { TargetName } from '../targets/target.js';
import type { Verification, VerificationFailure } from './job.js';
import { LastN } from './kept.js';
import { verifySteps } from './verify.js';

/** Steps per oracle task at most; fewer when a step's values are large (CHUNK_BYTES). */
const MAX_CHUNK_STEPS = 256;
/** About how much one chunk of steps may hold, at the 8 bytes per element the engine keeps. */
const CHUNK_BYTES = 64 * 2 ** 20;

/** Steps per chunk for a program: its activations, state and results of one step fit CHUNK_BYTES. */
function chunkSteps(checked: CheckedProgram): number {
  const p = checked.program;
  const names = [...p.args.filter((a) => a.role !== 'weight').map((a) => a.name), ...p.results];
  const elements = names.reduce((n, v) => n + numel(checked.types.get(v)?.shape ?? []), 0);
  return Math.max(1, Math.min(MAX_CHUNK_STEPS, Math.floor(CHUNK_BYTES / (8 * Math.max(1, elements)))));
}

/** What the streamed verification needs of a planned program. */
export interface Reference {
  readonly target: TargetName;
  readonly checked: CheckedProgram;
  readonly programJson: unknown;
}

/** The comparisons of a verified job's steps, fed in order as the device runs them. */
export class StreamedVerification {
  readonly #pool: ActorPool<OracleTask, StepOutput[]>;
  readonly #ref: Reference;
  readonly #inputs: StepInputs;
  readonly #size: number;
  readonly #chunkCount: number;
  readonly #chunks = new Map<number, Promise<StepOutput[]>>();
  #pending: StepOutput[] = [];
  #current = 0;
  #pass = true;
  #numericsClass = '';
  #firstFailure: VerificationFailure | undefined;
  readonly #kept: LastN<Readonly<Record<string, Comparison>>>;

  /** Starts the reference of the first chunks at once, so the oracle runs while the device compiles and loads. */
  constructor(pool: ActorPool<OracleTask, StepOutput[]>, ref: Reference, inputs: StepInputs, keep: number) {
    this.#pool = pool;
    this.#ref = ref;
    this.#inputs = inputs;
    this.#kept = new LastN(keep);
    this.#size = chunkSteps(ref.checked);
    this.#chunkCount = Math.ceil(inputs.count / this.#size);
    // Not awaited here: #ensure handles a rejection it starts, and add() awaits each chunk.
    void this.#ensure(0);
    void this.#ensure(1);
  }

  #ensure(j: number): Promise<StepOutput[]> | undefined {
    if (j >= this.#chunkCount) return undefined;
    let p = this.#chunks.get(j);
    if (p) return p;
    const start = j * this.#size;
    const end = Math.min(this.#inputs.count, start + this.#size);
    const before: Promise<TensorMap> = j === 0
      ? Promise.resolve(this.#inputs.state)
      : this.#ensure(j - 1)!.then((outs) => outs[outs.length - 1]!.state);
    p = before.then((state) => this.#pool.run({
      programJson: this.#ref.programJson,
      inputs: { weights: this.#inputs.weights, state, steps: Array.from({ length: end - start }, (_, k) => this.#inputs.step(start + k)) },
    }));
    // Awaited by add(); one the job never reaches (it failed first) must not be an unhandled rejection.
    p.catch(() => undefined);
    this.#chunks.set(j, p);
    return p;
  }

  /** Takes the device's output of step `i` (in order); at a chunk's end, waits for its reference and compares. */
  async add(i: number, out: StepOutput): Promise<void> {
    const j = Math.floor(i / this.#size);
    if (j !== this.#current) {
      this.#current = j;
      this.#chunks.delete(j - 1);
      void this.#ensure(j + 1); // started early; add() awaits it at that chunk's end
    }
    this.#pending.push(out);
    const end = Math.min(this.#inputs.count, (j + 1) * this.#size);
    if (i + 1 < end) return;
    const device = this.#pending;
    this.#pending = [];
    const v = verifySteps(this.#ref.target, this.#ref.checked, device, await this.#ensure(j)!);
    this.#numericsClass = v.numericsClass;
    if (!v.pass) this.#pass = false;
    v.steps.forEach((cmp, k) => {
      this.#kept.push(cmp);
      if (this.#firstFailure !== undefined) return;
      const bad = Object.entries(cmp).find(([, c]) => !c.pass);
      if (bad) this.#firstFailure = { step: j * this.#size + k, result: bad[0], comparison: bad[1] };
    });
  }

  /** The verification of every step taken; call once the last one's add() has settled. */
  result(): Verification {
    const v = { numericsClass: this.#numericsClass, pass: this.#pass, steps: this.#kept.toArray() };
    return this.#firstFailure === undefined ? v : { ...v, firstFailure: this.#firstFailure };
  }
}
