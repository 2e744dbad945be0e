/**
 * Continuous batching: the generations of one model that run at once decode together, one step of a
 * program of `parallel` sequences (program.ts, ProgramShape.sequences) for all of them, one pass over
 * the weights. Each generation's prompt is prefilled in its own cache (zeroed, then its prefill steps:
 * SlotCursor's inner cursor, jobs on the same device interleaved with the batch's steps); once prefilled
 * it joins at the next step, its cache moved into a free slot of the batch's session (no copy on host),
 * and each of its decode steps is its row of a batch step. A generation that ends (eos, stop, length,
 * an abort, an error) leaves its slot at once; a slot left during a step is free after that step.
 *
 * A row's equations are the single decode program's, each row attending only its own slot, so on a
 * batch-invariant target (host: docs/HOST.md "q8 activations") each generation's tokens and logits are
 * the bytes it gets alone, whatever runs beside it and whenever it joined (test/model/qwen3/batch.test.ts).
 * A batch steps once every generation in it has asked for its next step, or, when some have and others
 * have not within a step's time (a consumer that stops pulling tokens), with those that have: a slot
 * whose generation has not asked runs id 0 at the cache's last position, which that generation has not
 * written (it ends before it would) and writes itself before it reads it, so its cache is as it was for
 * every position it reads. A slot nobody holds runs id 0 at position 0 of its own unused cache, which
 * the next generation's move replaces whole.
 *
 * A generation alone (no slot held, none waiting for one, no other alone) decodes by itself, in its own
 * cache with the single decode program: a batch step costs every slot's row, so one stream is not made
 * to pay for the others it might have. The moment another generation wants a slot, the one alone joins
 * the batch at its next step, its cache moved into a slot as any joiner's; its rows are the same bytes
 * either way.
 */
import { InvalidOptions } from '../../errors/index.js';
import type { DeviceSession } from '../../jobs/deviceSession.js';
import { tensor, type Tensor } from '../../ir/tensor.js';
import type { Program } from '../../ir/types.js';
import type { TensorMap } from '../../ir/values.js';
import type { SharedState } from '../../session/session.js';
import { cacheShapes, slotStateName, stepActivations } from './program.js';
import type { Qwen3Config } from './config.js';
import { loosest, type CacheCursor, type EngineRunner, type PositionPiece, type RanOn, type SessionCursor, type StepInput, type StepResult, type StepRunner } from './runner.js';

/** A decode step a generation asked for, until its batch step answers. */
interface Request {
  readonly id: number;
  readonly position: number;
  readonly resolve: (logits: Tensor) => void;
  readonly reject: (e: unknown) => void;
}

/** One generation's place in the batch. */
class Sequence {
  slot = -1;
  /** Decoding by itself in its own cache, its slot kept for it (Batcher.alone). */
  alone = false;
  next: Request | undefined;
  /** Why it can step no more (its batch step failed, taking the batch's caches with it). */
  failed: Error | undefined;
  constructor(readonly cursor: SessionCursor) {}
}

/** A generation waiting for a free slot. */
interface Joiner {
  readonly seq: Sequence;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/** What the batch's slots are in use for now (serve's status and metrics). */
export interface BatchUse {
  /** Slots in all (loadModel's `parallel`). */
  readonly slots: number;
  /** Slots a generation holds. */
  readonly busy: number;
  /** Prefilled generations waiting for a free slot. */
  readonly waiting: number;
  /** Batch steps run so far, and the rows of generations they ran. */
  readonly steps: number;
  readonly rows: number;
  /** Decode steps a generation ran by itself, alone in the batch (see batch.ts's doc). */
  readonly aloneSteps: number;
}

/** The batch of one model: its slots, its session of the batch program, its step loop. */
export class Batcher {
  readonly #slots: (Sequence | null)[];
  readonly #joiners: Joiner[] = [];
  #session: Promise<DeviceSession> | null = null;
  #running = false;
  #dirty = false;
  #wake: (() => void) | null = null;
  #steps = 0;
  #rows = 0;
  #closed = false;
  #aloneSteps = 0;
  #device: { readonly device: string; readonly simulated: boolean } | undefined;
  // Since when some generations of the batch have asked for a step and others not; the last step's time.
  #askedAt: number | undefined;
  #lastStepMs = 0;

  constructor(readonly runner: EngineRunner, readonly config: Qwen3Config, readonly ctx: number, readonly program: Program, readonly parallel: number) {
    this.#slots = new Array<Sequence | null>(parallel).fill(null);
  }

  /** The slots in use now. */
  use(): BatchUse {
    return { slots: this.parallel, busy: this.#slots.filter((s) => s !== null).length, waiting: this.#joiners.length, steps: this.#steps, rows: this.#rows, aloneSteps: this.#aloneSteps };
  }

  /** The device the batch steps ran on (after the first). */
  get device(): { readonly device: string; readonly simulated: boolean } | undefined { return this.#device; }

  /** Each state arg of slot `slot` -> the single-sequence cache arg it is moved from. */
  #names(slot: number): Record<string, string> {
    const names: Record<string, string> = {};
    for (const name of cacheShapes(this.config, this.ctx).keys()) names[slotStateName(name, slot)] = name;
    return names;
  }

  /** @internal Starts opening the batch's session now (a generation's prefill runs meanwhile); a failure shows at the step that needs it. */
  prepare(): void {
    if (!this.#closed) void this.#sessionNow();
  }

  /**
   * @internal Whether `seq` (prefilled, in its own cache) may run its next decode step by itself: while
   * no other generation holds a slot or waits for one. It then holds a slot (the batch's capacity counts
   * it) whose cache it moves into when it joins.
   */
  alone(seq: Sequence): boolean {
    if (this.#closed || this.#joiners.length > 0 || this.#slots.some((s) => s !== null && s !== seq)) return false;
    if (!seq.alone) {
      const slot = this.#slots.indexOf(null);
      if (slot < 0) return false;
      this.#slots[slot] = seq;
      seq.slot = slot;
      seq.alone = true;
    }
    this.#aloneSteps++;
    return true;
  }

  /** @internal Joins `seq` (prefilled) at the next step: resolves once its cache is in its slot. */
  join(seq: Sequence): Promise<void> {
    if (this.#closed) return Promise.reject(new InvalidOptions('model', 'the model is closed'));
    // One that decoded alone gives its slot back and is first in the line, so it takes a slot at once.
    const first = seq.alone;
    if (seq.alone) {
      this.#slots[seq.slot] = null;
      seq.slot = -1;
      seq.alone = false;
    }
    return new Promise<void>((resolve, reject) => {
      if (first) this.#joiners.unshift({ seq, resolve, reject });
      else this.#joiners.push({ seq, resolve, reject });
      this.#poke();
    });
  }

  /** @internal The next decode step of `seq`: its row's logits of the batch step that runs it. */
  step(seq: Sequence, id: number, position: number): Promise<Tensor> {
    if (seq.failed !== undefined) return Promise.reject(seq.failed);
    if (seq.slot < 0) return Promise.reject(new InvalidOptions('cache', 'the sequence holds no slot'));
    return new Promise<Tensor>((resolve, reject) => {
      seq.next = { id, position, resolve, reject };
      this.#poke();
    });
  }

  /**
   * @internal Positions of `seq`'s cache in its slot (Session.readPositions, each arg named as a
   * single sequence's, not the slot's): what the prefix cache keeps of a batched generation at its end.
   */
  async readPositions(seq: Sequence, axes: Readonly<Record<string, number>>, ranges: readonly (readonly [number, number])[]): Promise<SharedState[]> {
    const slot = seq.slot;
    if (slot < 0 || this.#session === null) throw new InvalidOptions('cache', 'the sequence holds no slot');
    const session = await this.#session;
    const slotAxes: Record<string, number> = {};
    for (const [name, axis] of Object.entries(axes)) slotAxes[slotStateName(name, slot)] = axis;
    const prefix = slotStateName('', slot);
    const pieces = await session.readPositions(slotAxes, ranges);
    return pieces.map((piece) => Object.fromEntries(Object.entries(piece).map(([k, v]) => [k.slice(prefix.length), v])));
  }

  /** @internal `seq` ends: its slot (or its place in the line) is free at once. */
  leave(seq: Sequence): void {
    const why = new InvalidOptions('cache', 'the sequence left the batch');
    seq.alone = false;
    const at = this.#joiners.findIndex((j) => j.seq === seq);
    if (at >= 0) this.#joiners.splice(at, 1)[0]!.reject(why);
    if (seq.slot >= 0 && this.#slots[seq.slot] === seq) this.#slots[seq.slot] = null;
    seq.slot = -1;
    // A step it asked for and no batch step has taken yet is not run.
    seq.next?.reject(why);
    seq.next = undefined;
    this.#poke();
  }

  #poke(): void {
    this.#dirty = true;
    const w = this.#wake;
    this.#wake = null;
    w?.();
    if (!this.#running) {
      this.#running = true;
      void this.#loop().catch(() => { this.#running = false; });
    }
  }

  #sessionNow(): Promise<DeviceSession> {
    if (this.#session === null) {
      const opening = this.runner.takeSession(this.program).then((s) => s.session);
      opening.catch(() => undefined);
      this.#session = opening;
    }
    return this.#session;
  }

  async #loop(): Promise<void> {
    for (;;) {
      this.#dirty = false;
      // Joiners take the free slots, first come first served, each cache moved into its slot between steps.
      while (this.#joiners.length > 0 && this.#slots.includes(null)) {
        const j = this.#joiners.shift()!;
        const slot = this.#slots.indexOf(null);
        try {
          const session = await this.#sessionNow();
          await j.seq.cursor.moveInto(session, this.#names(slot));
          this.#slots[slot] = j.seq;
          j.seq.slot = slot;
          j.resolve();
        } catch (e) {
          this.#dropSession();
          j.reject(e);
        }
      }
      // A slot kept for a generation decoding alone is no row of a batch step.
      const held = this.#slots.filter((s): s is Sequence => s !== null && !s.alone);
      // Ended here, in the same turn as the check: a poke after it starts a new loop.
      if (held.length === 0 && this.#joiners.length === 0) { this.#running = false; return; }
      const ready = held.filter((s) => s.next !== undefined);
      if (ready.length > 0 && (ready.length === held.length || this.#overdue())) {
        this.#askedAt = undefined;
        await this.#step(held);
        continue;
      }
      // A poke during this turn's awaits (a move into a slot) sets it again: a narrowing the linter cannot see past.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
      if (this.#dirty) continue;
      if (this.#closed) { this.#running = false; return; }
      await new Promise<void>((resolve) => { this.#wake = resolve; });
    }
  }

  // Whether the generations that asked have waited a step's time for the others (a timer pokes the loop then).
  #overdue(): boolean {
    const wait = Math.max(5, this.#lastStepMs);
    const now = performance.now();
    this.#askedAt ??= now;
    const left = this.#askedAt + wait - now;
    if (left <= 0) return true;
    // Looked at again when the time is up (a timer may fire a little early: then another).
    setTimeout(() => this.#poke(), Math.ceil(left) + 1);
    return false;
  }

  async #step(held: readonly Sequence[]): Promise<void> {
    const ids = new Array<number>(this.parallel).fill(0);
    const positions = new Array<number>(this.parallel).fill(0);
    // A generation that has not asked: a row at the last position, which it has not written (see the file's doc).
    for (const s of held) if (s.next === undefined) positions[s.slot] = this.ctx - 1;
    const taken = held.filter((s) => s.next !== undefined).map((s) => {
      const r = s.next!;
      s.next = undefined;
      ids[s.slot] = r.id;
      positions[s.slot] = r.position;
      return [s, s.slot, r] as const;
    });
    try {
      const session = await this.#sessionNow();
      const t0 = performance.now();
      const out = await session.step(stepActivations(this.program, ids, positions));
      this.#lastStepMs = performance.now() - t0;
      this.#device ??= { device: session.deviceName, simulated: session.simulated };
      const logits = out.results['logits']!;
      const vocab = this.config.vocab;
      this.#steps++;
      this.#rows += taken.length;
      // Each row's logits are a view of the step's result, not a copy: a step of several rows would
      // otherwise allocate its logits twice, and the garbage collector's work grows with what a step allocates.
      for (const [, slot, r] of taken) r.resolve(tensor(logits.dtype, [vocab], logits.data.subarray(slot * vocab, (slot + 1) * vocab)));
    } catch (e) {
      // The batch's caches are gone with its session: every generation in it fails.
      this.#dropSession();
      for (const [, , r] of taken) r.reject(e);
      for (let i = 0; i < this.#slots.length; i++) {
        const s = this.#slots[i];
        // One decoding alone keeps its cache in its own session: the batch's failure is not its.
        if (s === null || s === undefined || s.alone) continue;
        s.failed = e instanceof Error ? e : new Error(String(e));
        s.slot = -1;
        s.next?.reject(e);
        s.next = undefined;
        this.#slots[i] = null;
      }
    }
  }

  #dropSession(): void {
    const s = this.#session;
    this.#session = null;
    void s?.then((x) => x.close(), () => undefined).catch(() => undefined);
  }

  /** Closes the batch's session; generations still in it fail at their next step. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const j of this.#joiners.splice(0)) j.reject(new InvalidOptions('model', 'the model is closed'));
    const s = this.#session;
    this.#session = null;
    this.#poke();
    if (s !== null) await s.then((x) => x.close(), () => undefined);
  }
}

/**
 * A generation's cursor in a batch: its prompt prefilled in its own cache (the inner cursor: a zeroed
 * cache and prefill steps, what a prefix cache may replace), then, once `prefilled`, its decode steps
 * rows of the batch's steps.
 */
class SlotCursor implements CacheCursor {
  readonly #seq: Sequence;
  #decoding = false;
  #joined: Promise<void> | undefined;

  constructor(private readonly batcher: Batcher, private readonly inner: SessionCursor) {
    this.#seq = new Sequence(inner);
  }

  async step(program: Program, ids: readonly number[], positions: readonly number[]): Promise<Tensor> {
    if (!this.#decoding) return this.inner.step(program, ids, positions);
    if (ids.length !== 1) throw new InvalidOptions('ids', `a decode step in a batch runs 1 token, not ${ids.length}`);
    // Alone, by itself in its own cache, until another generation wants a slot (see the file's doc).
    if (this.#joined === undefined && this.batcher.alone(this.#seq)) return this.inner.step(program, ids, positions);
    this.#joined ??= this.batcher.join(this.#seq);
    await this.#joined;
    return this.batcher.step(this.#seq, ids[0]!, positions[0]!);
  }

  prepare(program: Program): void {
    // The single decode program's session, which it decodes in while alone; the batch's session opens
    // ahead only where others decode already (else when one first joins, or at the model's warm).
    this.inner.prepare(program);
    if (this.batcher.use().busy > 0) this.batcher.prepare();
  }

  cancel(): void {
    // Out of the line for a slot, or out of its slot, at once; a batch step running with it runs on.
    if (this.#decoding) this.batcher.leave(this.#seq);
  }

  prefilled(): void {
    this.#decoding = true;
  }

  loadPositions(axes: Readonly<Record<string, number>>, pieces: readonly PositionPiece[]): void {
    // Before the first step: into the generation's own cache, which its prefill goes on filling.
    this.inner.loadPositions(axes, pieces);
  }

  async readPositions(axes: Readonly<Record<string, number>>, ranges: readonly (readonly [number, number])[]): Promise<SharedState[]> {
    if (this.#joined === undefined) return this.inner.readPositions(axes, ranges);
    await this.#joined;
    return this.batcher.readPositions(this.#seq, axes, ranges);
  }

  state(): Promise<TensorMap> {
    if (this.#joined === undefined) return this.inner.state();
    return Promise.reject(new InvalidOptions('cache', 'a sequence in a batch keeps its cache in its slot'));
  }

  ranOn(): readonly RanOn[] {
    const before = this.inner.ranOn();
    const d = this.batcher.device;
    if (this.#joined === undefined || d === undefined) return before;
    const target = this.batcher.runner.target;
    return [...before.filter((r) => r.phase !== 'decode'), { phase: 'decode', target, devices: [d.device], simulated: d.simulated, numerics: loosest(target) }];
  }

  async close(): Promise<void> {
    this.batcher.leave(this.#seq);
    await this.inner.close();
  }
}

/** An engine runner whose generations (begin) decode in a batch; its other steps are the engine runner's. */
export class BatchRunner implements StepRunner {
  readonly name: string;
  constructor(readonly runner: EngineRunner, readonly batcher: Batcher) {
    this.name = runner.name;
  }

  step(program: Program, input: StepInput): Promise<StepResult> {
    return this.runner.step(program, input);
  }

  async begin(zero: () => TensorMap): Promise<CacheCursor> {
    return new SlotCursor(this.batcher, await this.runner.begin(zero) as SessionCursor);
  }
}
