/**
 * Running one step of a model's program: through the engine on a target (each step one job of one
 * step, its KV cache handed in as the job's state and taken back from its result), or in this thread
 * on the oracle in fp64 mode, the independent reference the gate and the tests compare with. Both
 * take the same programs and the same weights (byte ranges of the model's file).
 */
import { DeadlineExceeded, InvalidOptions } from '../../errors/index.js';
import { NUMERICS_CLASSES, type NumericsClass } from '../../numerics/classes.js';
import { TARGETS } from '../../targets/index.js';
import { isTargetName } from '../../targets/target.js';
import type { Engine } from '../../jobs/engine.js';
import type { DeviceSession } from '../../jobs/deviceSession.js';
import type { SharedState } from '../../session/session.js';
import type { FileWeight } from '../../ir/fileWeight.js';
import type { CheckedProgram } from '../../ir/checked.js';
import { programToJson } from '../../ir/codec.js';
import type { HeldTensor, Tensor } from '../../ir/tensor.js';
import { decodeWeight } from '../../ir/tensorCodec.js';
import type { Program } from '../../ir/types.js';
import type { TensorMap } from '../../ir/values.js';
import { checkProgram } from '../../ops/validate.js';
import { heldWeights, runStep } from '../../oracle/evaluate.js';
import { stepActivations } from './program.js';
import type { ModelWeights } from './weights.js';

/** What one step takes: the tokens and their positions (consecutive), and the KV cache before it. */
export interface StepInput {
  readonly ids: readonly number[];
  readonly positions: readonly number[];
  readonly state: TensorMap;
}

/** A step's one result: its `logits`, or a hidden-state program's `hidden` (program.ts, ProgramShape.output). */
function resultOf(results: Readonly<Record<string, Tensor>>): Tensor {
  return results['logits'] ?? results['hidden']!;
}

/** What one step gives: the logits (of the last token, or of each with allLogits) and the KV cache after it. */
export interface StepResult {
  readonly logits: Tensor;
  readonly state: TensorMap;
  /** The devices that ran it (each a simulator or not), for an engine step. */
  readonly devices?: readonly { readonly device: string; readonly simulated: boolean }[];
}

/**
 * Where one phase of a generation ran: its target (or list), the devices, whether any of them is a
 * simulator (the result is then a simulated one), and the numerics class its results carry.
 */
export interface RanOn {
  readonly phase: 'prefill' | 'decode';
  readonly target: string;
  readonly devices: readonly string[];
  readonly simulated: boolean;
  readonly numerics: NumericsClass;
}

/** One generation's KV cache, where its steps run: each step takes the cache as the last one left it. */
export interface CacheCursor {
  /** Runs `program` over these tokens at these positions; answers the logits. */
  step(program: Program, ids: readonly number[], positions: readonly number[]): Promise<Tensor>;
  /** The KV cache now. */
  state(): Promise<TensorMap>;
  /** Lets the cache go. */
  close(): Promise<void>;
  /** Where the steps so far ran, by phase (an engine cursor's; none for the reference). */
  ranOn?(): readonly RanOn[];
  /**
   * Starts getting ready for steps of `program` now (a session cursor opens its session in the
   * background, so that the first decode step after a prefill does not wait for it); a failure shows
   * at the step that needs it.
   */
  prepare?(program: Program): void;
  /**
   * Sets positions of the cache (pieces `readPositions` gave, each state arg's along its axis in
   * `axes`) before the first step, the others as a new cache's: a prompt's cached prefix (prefix.ts).
   */
  loadPositions?(axes: Readonly<Record<string, number>>, pieces: readonly PositionPiece[]): void;
  /** Positions of the cache now, one piece per range `[from, to)`, in shared memory. */
  readPositions?(axes: Readonly<Record<string, number>>, ranges: readonly (readonly [number, number])[]): Promise<SharedState[]>;
  /** The prompt is in the cache: the steps from here on decode (a batching cursor joins a batch; batch.ts). */
  prefilled?(): void;
  /**
   * The generation was aborted during a step: stop waiting for what the step waits for (a slot of a
   * batch) where that can be left at once; device work already running runs on. close() still follows.
   */
  cancel?(): void;
}

/** Positions of a KV cache from `from`: each state arg's as bytes (Session.readPositions). */
export interface PositionPiece {
  readonly from: number;
  readonly state: SharedState;
}

/** Runs steps of a model's programs somewhere. */
export interface StepRunner {
  /** `engine:<target>` or `reference:fp64`. */
  readonly name: string;
  /** One step, the KV cache handed in and taken back (the gate's teacher-forced steps). */
  step(program: Program, input: StepInput): Promise<StepResult>;
  /** A generation's cursor over a KV cache that starts as `zero()` (zeroed). */
  begin(zero: () => TensorMap): Promise<CacheCursor>;
  /** Lets go of what the runner keeps between generations. */
  close?(): Promise<void>;
}

/** A cursor that holds the KV cache here and hands it to each step (a runner without sessions). */
export class HeldCursor implements CacheCursor {
  constructor(private readonly runner: StepRunner, private cache: TensorMap) {}
  async step(program: Program, ids: readonly number[], positions: readonly number[]): Promise<Tensor> {
    const out = await this.runner.step(program, { ids, positions, state: this.cache });
    this.cache = out.state;
    return out.logits;
  }
  state(): Promise<TensorMap> { return Promise.resolve(this.cache); }
  close(): Promise<void> { return Promise.resolve(); }
}

/**
 * A cursor over device sessions (src/jobs/deviceSession.ts): one per program and target, opened with a
 * zeroed cache, the cache staying on the device between steps and handed from one program's session to
 * the next (a prefill chunk's to the decode program's): on the device, or from a prefill target's device
 * through shared memory. A partitioned prefill target runs its chunks as jobs instead, the cache handed
 * as tensors. At most two sessions stay open.
 */
export class SessionCursor implements CacheCursor {
  readonly #sessions = new Map<string, DeviceSession>();
  // Sessions being opened ahead of their first step (prepare), by the same key.
  readonly #opening = new Map<string, Promise<{ readonly session: DeviceSession; readonly reused: boolean }>>();
  readonly #ran = new Map<string, RanOn>();
  #holder: DeviceSession | null = null;
  // A cache made on the prefill target (as tensors), until a session of the decode target takes it.
  #held: TensorMap | null = null;
  #failed = false;
  // The device of the session called last: a generation on two devices names the one that missed a deadline.
  #at = '';
  // Positions to write into the cache before the first step (loadPositions).
  #pending: { readonly axes: Readonly<Record<string, number>>; readonly pieces: readonly PositionPiece[] } | null = null;

  constructor(private readonly runner: EngineRunner, private readonly zero: () => TensorMap) {}

  async step(program: Program, ids: readonly number[], positions: readonly number[]): Promise<Tensor> {
    try {
      return await this.#step(program, ids, positions);
    } catch (e) {
      this.#failed = true;
      if (this.runner.prefillTarget !== undefined && e instanceof DeadlineExceeded && e.device === '' && this.#at !== '') throw new DeadlineExceeded(e.deadlineMs, this.#at);
      throw e;
    }
  }

  async #step(program: Program, ids: readonly number[], positions: readonly number[]): Promise<Tensor> {
    const prefillTarget = ids.length > 1 ? this.runner.prefillTarget : undefined;
    if (prefillTarget?.includes(',') === true) {
      // A partitioned prefill runs as jobs (a session per segment), its KV cache handed along as tensors.
      const state = this.#held ?? (this.#holder !== null ? await this.#holder.state() : this.zero());
      const out = await this.runner.stepOn(prefillTarget, program, { ids, positions, state });
      this.#held = out.state;
      this.#holder = null;
      this.#record('prefill', prefillTarget, out.devices ?? []);
      return out.logits;
    }
    // A prefill on one other target has a session there; its cache goes to the decode session through shared memory.
    const target = prefillTarget ?? this.runner.target;
    const key = `${target}/${program.name}`;
    let s = this.#sessions.get(key);
    let zeroed = false;
    if (s === undefined) {
      this.#at = target;
      const pending = this.#opening.get(key);
      this.#opening.delete(key);
      const got = await (pending ?? this.runner.takeSession(program, target));
      s = got.session;
      zeroed = !got.reused;
      this.#sessions.set(key, s);
    }
    this.#at = s.deviceName || s.target;
    if (this.#held !== null) {
      await s.loadState(this.#held);
      this.#held = null;
      this.#holder = s;
    }
    if (this.#holder !== s) {
      // Moved, not copied: the session handing over never reads its cache again before it is set anew
      // (the host device hands the cache over in its arena, with no copy).
      if (this.#holder !== null) await s.takeStateFrom(this.#holder, { move: true });
      else if (!zeroed) await s.zeroState();
      this.#holder = s;
      // The least recently opened of three goes (a prefill chunk's session, once it has handed over).
      if (this.#sessions.size > 2) {
        const [name, old] = [...this.#sessions].find(([, x]) => x !== s)!;
        this.#sessions.delete(name);
        await this.runner.giveBack([[name, old]]);
      }
    }
    if (this.#pending !== null) {
      const { axes, pieces } = this.#pending;
      this.#pending = null;
      await s.writePositions(axes, pieces);
    }
    const out = await s.step(stepActivations(program, ids, positions));
    this.#record(prefillTarget !== undefined ? 'prefill' : 'decode', target, [{ device: s.deviceName, simulated: s.simulated }]);
    return resultOf(out.results);
  }

  #record(phase: RanOn['phase'], target: string, devices: readonly { readonly device: string; readonly simulated: boolean }[]): void {
    const before = this.#ran.get(phase);
    const names = [...new Set([...(before?.devices ?? []), ...devices.map((d) => d.device)])];
    const simulated = (before?.simulated ?? false) || devices.some((d) => d.simulated);
    this.#ran.set(phase, { phase, target, devices: names, simulated, numerics: loosest(target) });
  }

  ranOn(): readonly RanOn[] {
    return [...this.#ran.values()];
  }

  /**
   * Moves the cache into `to`, a session on the same engine, each of `to`'s state args `names` keys
   * from this cache's arg it names (a sequence's cache into its slot of a program of several, batch.ts);
   * this cache is zeroed after. A cache no step has filled but whose positions were loaded (a shared
   * prefill, share.ts) is first written into the session `prepare` opened. InvalidOptions when no step
   * has run and none was loaded, or the cache is held as tensors.
   */
  async moveInto(to: DeviceSession, names: Readonly<Record<string, string>>): Promise<void> {
    if (this.#holder === null && this.#held === null && this.#pending !== null) await this.#loadedOnly();
    if (this.#holder === null || this.#held !== null) throw new InvalidOptions('cache', 'only a cache a session of this engine holds moves into a slot');
    await to.takeStateFrom(this.#holder, { move: true, names });
  }

  // Loaded positions (loadPositions) and no step yet: written into the session being opened (prepare), which then holds the cache.
  async #loadedOnly(): Promise<void> {
    const first = [...this.#opening][0];
    if (first === undefined) return;
    const [key, opening] = first;
    this.#opening.delete(key);
    const got = await opening;
    this.#sessions.set(key, got.session);
    if (got.reused) await got.session.zeroState();
    this.#holder = got.session;
    const { axes, pieces } = this.#pending!;
    this.#pending = null;
    await got.session.writePositions(axes, pieces);
  }

  prepare(program: Program): void {
    const key = `${this.runner.target}/${program.name}`;
    if (this.#sessions.has(key) || this.#opening.has(key)) return;
    const opening = this.runner.takeSession(program, this.runner.target);
    // Awaited by the step that needs it (or by close); not a rejection nobody handles meanwhile.
    opening.catch(() => undefined);
    this.#opening.set(key, opening);
  }

  loadPositions(axes: Readonly<Record<string, number>>, pieces: readonly PositionPiece[]): void {
    if (this.runner.prefillTarget?.includes(',') === true) throw new InvalidOptions('prefixCache', 'a partitioned prefill target hands its cache along as tensors; it takes no cached prefix');
    if (this.#holder !== null || this.#held !== null) throw new InvalidOptions('cache', 'positions are loaded before the first step');
    this.#pending = { axes, pieces };
  }

  readPositions(axes: Readonly<Record<string, number>>, ranges: readonly (readonly [number, number])[]): Promise<SharedState[]> {
    if (this.#holder === null) return Promise.reject(new InvalidOptions('cache', 'no session holds the cache (no step has run, or a partitioned prefill holds it as tensors)'));
    return this.#holder.readPositions(axes, ranges);
  }

  state(): Promise<TensorMap> {
    if (this.#held !== null) return Promise.resolve(this.#held);
    return this.#holder === null ? Promise.reject(new InvalidOptions('cache', 'no step has run yet')) : this.#holder.state();
  }

  /** Hands the sessions back to the runner for the next generation, or closes them after a failure. */
  async close(): Promise<void> {
    // A session opened ahead and never stepped goes back (or is closed) with the others.
    const opened = await Promise.all([...this.#opening].map(async ([k, p]) => {
      try { return [[k, (await p).session] as const]; } catch { return []; }
    }));
    this.#opening.clear();
    const all = [...this.#sessions, ...opened.flat()];
    this.#sessions.clear();
    const holder = this.#holder;
    this.#holder = null;
    if (this.#failed) { await Promise.all(all.map(([, x]) => x.close())); return; }
    // The next generation starts from a zeroed cache anyway: zeroed now, the host device lets go of
    // the cache it carries in its arena instead of copying it out when another session runs there.
    if (holder?.usable === true) await holder.zeroState().catch(() => undefined);
    await this.runner.giveBack(all);
  }
}

/** The loosest numerics class among a target list's targets (npu4's NarrowStorage over the others' contracts). */
export function loosest(targets: string): NumericsClass {
  let worst: NumericsClass = 'Exact';
  for (const t of targets.split(',')) {
    const n = isTargetName(t) ? TARGETS[t].numerics : undefined;
    const cls: NumericsClass = n === undefined ? 'NarrowStorage' : n.kind === 'class' ? n.numericsClass : 'Contract';
    if (NUMERICS_CLASSES.indexOf(cls) > NUMERICS_CLASSES.indexOf(worst)) worst = cls;
  }
  return worst;
}

/** How many sessions a runner keeps between generations at least (the decode program's and one prefill's; EngineRunner.keepIdle). */
const IDLE_SESSIONS = 2;

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
  // Sessions kept between generations, least recently given back first, each with its `target/program` key.
  readonly #idle: (readonly [string, DeviceSession])[] = [];
  #idleLimit = IDLE_SESSIONS;

  constructor(readonly engine: Engine, readonly target: string, weights: ModelWeights, readonly deadlineMs = Infinity, readonly prefillTarget?: string) {
    this.name = `engine:${target}`;
    this.#weights = weightInputs(weights);
  }

  async step(program: Program, input: StepInput): Promise<StepResult> {
    return this.stepOn(this.target, program, input);
  }

  /** One step as a job on `target` (a target or a list of them), the KV cache handed in and back. */
  async stepOn(target: string, program: Program, input: StepInput): Promise<StepResult> {
    const job = this.engine.submit({
      program: this.#jsonOf(program) as object, target, steps: 1, keepSteps: 0, deadlineMs: this.deadlineMs,
      inputs: { ...this.#weights, ...input.state, ...stepActivations(program, input.ids, input.positions) },
    });
    const r = await job.result;
    const devices = r.partition?.segments.map((g) => ({ device: g.device, simulated: g.simulated })) ?? [{ device: r.target, simulated: r.simulated }];
    return { logits: resultOf(r.results), state: r.state, devices };
  }

  /** A generation over device sessions: its KV cache stays on the device. */
  begin(zero: () => TensorMap): Promise<CacheCursor> {
    return Promise.resolve(new SessionCursor(this, zero));
  }

  /**
   * @internal A session of `program`: one kept from an earlier generation (`reused`, its cache as that
   * generation left it) while its device has not restarted, else a new one with a zeroed cache.
   */
  async takeSession(program: Program, target = this.target): Promise<{ readonly session: DeviceSession; readonly reused: boolean }> {
    const key = `${target}/${program.name}`;
    // The most recently given back of that key.
    let at = -1;
    for (let i = this.#idle.length - 1; i >= 0 && at < 0; i--) if (this.#idle[i]![0] === key) at = i;
    const idle = at >= 0 ? this.#idle.splice(at, 1)[0]![1] : undefined;
    if (idle?.usable === true) return { session: idle, reused: true };
    await idle?.close();
    const session = await this.engine.openSession({ program: this.#jsonOf(program) as object, target, inputs: this.#weights, zeroState: true, deadlineMs: this.deadlineMs });
    return { session, reused: false };
  }

  /** Opens `program`'s session on `target` now and keeps it for the next generation (its open off that generation's time). */
  async warm(program: Program, target = this.target): Promise<void> {
    const { session } = await this.takeSession(program, target);
    await this.giveBack([[`${target}/${program.name}`, session]]);
  }

  /**
   * @internal Keeps sessions for the next generation (the most recent of them: IDLE_SESSIONS, or what
   * keepIdle asked for), closing the others.
   */
  async giveBack(sessions: readonly (readonly [string, DeviceSession])[]): Promise<void> {
    const extra: DeviceSession[] = [];
    for (const [name, s] of sessions) {
      if (!s.usable) { extra.push(s); continue; }
      this.#idle.push([name, s]);
    }
    while (this.#idle.length > this.#idleLimit) extra.push(this.#idle.shift()![1]);
    await Promise.all(extra.map((s) => s.close()));
  }

  /**
   * @internal Keeps up to `n` sessions between generations (never fewer than IDLE_SESSIONS): what
   * `n` generations at once give back (a batch's: a prefill's and a decode program's session each),
   * so that the next ones open none anew.
   */
  keepIdle(n: number): void {
    this.#idleLimit = Math.max(IDLE_SESSIONS, n);
  }

  /** @internal How many sessions are kept between generations now. */
  get idleSessions(): number {
    return this.#idle.length;
  }

  /** Closes the sessions kept between generations. */
  async close(): Promise<void> {
    const all = this.#idle.splice(0).map(([, s]) => s);
    await Promise.all(all.map((s) => s.close()));
  }

  #jsonOf(program: Program): unknown {
    let json = this.#json.get(program.name);
    if (json === undefined) this.#json.set(program.name, (json = programToJson(program)));
    return json;
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
    const out = runStep(checked, { weights: this.#weights, state: input.state, activations: stepActivations(program, input.ids, input.positions) }, { fp64: true });
    return Promise.resolve({ logits: resultOf(out.results), state: out.state });
  }

  begin(zero: () => TensorMap): Promise<CacheCursor> {
    return Promise.resolve(new HeldCursor(this, zero()));
  }
}
