/**
 * Record and replay. A session over the artifacts of a program (one per unit, loaded on one device)
 * gives every program value that crosses an artifact boundary one buffer, uploads the weights and the
 * initial state once, and records one step: activation writes (into one host arena at fixed offsets),
 * the runs in order, copies of each state's next value into its state buffer, and result read-backs.
 * Replay runs that recording once per step with new activation contents.
 *
 * Range checks (docs: "Intel NPU"). A device that declares `narrowing` computes F32 values in a
 * narrower format whose contract holds only within `maxMagnitude`, so the session checks every F32 value
 * once, where the host sees it: a weight at upload (NarrowingRangeUpload, before any replay exists; no
 * replay reads it again, nor the copies that move it); activations and state that no command of the
 * recording has written before each replay (NarrowingRangeInput, and nothing runs); every F32 value a
 * run writes right after that run (NarrowingRangeResult), which is also how a value a later command reads
 * (a state's next value, another artifact's output) is checked. A NaN is out of range too. A device
 * without `narrowing` (the CPU) gets none of this.
 */
import { InvalidInput, NarrowingRangeInput, NarrowingRangeResult, NarrowingRangeUpload } from '../errors/index.js';
import type { WiredArg, Wiring } from '../compiler/wiring.js';
import { tensorFromBytes, tensorToBytes } from '../ir/bytes.js';
import type { Tensor } from '../ir/tensor.js';
import type { DType, Shape } from '../ir/types.js';
import type { TensorMap, StepOutput } from '../oracle/types.js';
import type { ArenaId, Binding, BufferId, Device, LoadedArtifact } from '../devices/device.js';
import { byteSize, isArenaSlot } from '../devices/device.js';

interface Slot { readonly value: string; readonly dtype: DType; readonly shape: Shape; readonly bytes: number; readonly at: Binding }

/** One recorded command of a step. */
export type Command =
  | { readonly kind: 'write'; readonly slot: Slot }
  | { readonly kind: 'run'; readonly loaded: LoadedArtifact; readonly bindings: Readonly<Record<string, Binding>> }
  | { readonly kind: 'copy'; readonly from: Slot; readonly to: Slot }
  | { readonly kind: 'read'; readonly slot: Slot; readonly as: 'result' | 'state'; readonly name: string };

/** What a session needs to know of the program beyond its artifacts' wiring. */
export interface SessionInit {
  readonly weights: TensorMap;
  readonly state: TensorMap;
  readonly activations: readonly string[];
  /** State arg → the value it takes after each step. */
  readonly stateNext: Readonly<Record<string, string>>;
  readonly results: readonly string[];
}

/** The range checks of a narrowing device (see the file's doc): what is checked where. */
interface RangeChecks {
  readonly max: number;
  /** F32 state homes by arg: checked before a replay unless the last replay's result checks covered them. */
  readonly state: readonly { readonly arg: string; readonly slot: Slot }[];
  /** Per run command: the F32 values it writes, checked as results right after it. */
  readonly outputs: ReadonlyMap<Command, readonly Slot[]>;
}

/** The index and value of the first element of an F32 tensor beyond `max` or NaN, as the device sees it. */
function firstOutOfRange(data: Float64Array, max: number): { index: number; value: number } | undefined {
  for (let i = 0; i < data.length; i++) {
    // The device holds the f32 value, so a host f64 that rounds into range is in range.
    const v = Math.fround(data[i]!);
    if (Number.isNaN(v) || Math.abs(v) > max) return { index: i, value: v };
  }
  return undefined;
}

/** One loaded artifact and how its bindings map to program values. */
export interface Stage {
  readonly loaded: LoadedArtifact;
  readonly wiring: Wiring;
}

function writeTo(device: Device, b: Binding, bytes: Uint8Array): void {
  if (isArenaSlot(b)) device.write(b.arena, b.offset, bytes);
  else device.write(b, 0, bytes);
}

function readFrom(device: Device, b: Binding, length: number): Uint8Array {
  return isArenaSlot(b) ? device.read(b.arena, b.offset, length) : device.read(b, 0, length);
}

function checkTensor(path: string, slot: Slot, t: Tensor | undefined): Tensor {
  if (!t) throw new InvalidInput(path, `no tensor supplied for ${slot.value}`);
  if (t.dtype !== slot.dtype || t.shape.length !== slot.shape.length || t.shape.some((d, i) => d !== slot.shape[i])) {
    throw new InvalidInput(path, `${slot.value} must be ${slot.dtype}[${slot.shape.join(', ')}], got ${t.dtype}[${t.shape.join(', ')}]`);
  }
  return t;
}

/** The artifacts of a program on one device, their buffers, and the recording of one step. */
export class Session {
  private closed = false;
  // State args whose current contents no result check has covered (all of them before the first replay).
  private stateUnchecked = true;

  private constructor(
    private readonly device: Device,
    readonly commands: readonly Command[],
    private readonly owned: readonly (BufferId | ArenaId)[],
    private readonly ranges: RangeChecks | undefined,
  ) {}

  /**
   * Allocates and binds every value, uploads weights and initial state, and records one step. Each value
   * has a home: its arg's buffer, or the slot of the artifact that produced it. An artifact that wants
   * a value elsewhere (at its own arena offset) gets a copy from the home before it runs.
   */
  static open(device: Device, stages: readonly Stage[], init: SessionInit): Session {
    const owned: (BufferId | ArenaId)[] = [];
    const max = device.narrowing?.maxMagnitude;
    const outputs = new Map<Command, Slot[]>();
    try {
      const commands: Command[] = [];
      const home = new Map<string, Slot>();
      const acts = new Set(init.activations);
      const isArg = (v: string) => acts.has(v) || Object.hasOwn(init.weights, v) || Object.hasOwn(init.state, v);
      const typeOf = new Map<string, { dtype: DType; shape: Shape }>();
      for (const s of stages) for (const w of s.wiring) if (!typeOf.has(w.value)) typeOf.set(w.value, { dtype: w.dtype, shape: w.shape });

      // Activations share one host arena at fixed offsets: the host rewrites them before every step.
      const actValues = [...typeOf.keys()].filter((v) => acts.has(v));
      const arenaBytes = actValues.reduce((n, v) => n + byteSize(typeOf.get(v)!.dtype, typeOf.get(v)!.shape), 0);
      if (arenaBytes > 0) {
        const arena = device.allocArena(arenaBytes);
        owned.push(arena);
        let offset = 0;
        for (const v of actValues) {
          const t = typeOf.get(v)!;
          const slot: Slot = { value: v, ...t, bytes: byteSize(t.dtype, t.shape), at: { arena, offset } };
          home.set(v, slot);
          commands.push({ kind: 'write', slot });
          offset += slot.bytes;
        }
      }
      const ownBuffer = (v: string, t: { dtype: DType; shape: Shape }): Slot => {
        const bytes = byteSize(t.dtype, t.shape);
        const buf = device.allocBuffer(bytes);
        owned.push(buf);
        return { value: v, ...t, bytes, at: buf };
      };
      // Weights and state live in buffers of their own, uploaded once.
      for (const [v, t] of typeOf) {
        if (home.has(v) || !isArg(v)) continue;
        const slot = ownBuffer(v, t);
        home.set(v, slot);
        const isWeight = Object.hasOwn(init.weights, v);
        const initial = checkTensor(`/${v}`, slot, isWeight ? init.weights[v] : init.state[v]);
        if (max !== undefined && isWeight && slot.dtype === 'f32') {
          const bad = firstOutOfRange(initial.data, max);
          if (bad) throw new NarrowingRangeUpload(v, bad.index, bad.value);
        }
        writeTo(device, slot.at, tensorToBytes(initial));
      }
      for (const s of stages) {
        const arenas = new Map<number, ArenaId>();
        const slotOf = (w: WiredArg): Slot | undefined => {
          if (!w.arena) return undefined;
          let a = arenas.get(w.arena.index);
          if (a === undefined) {
            a = device.allocArena(w.arena.arenaBytes);
            owned.push(a);
            arenas.set(w.arena.index, a);
          }
          return { value: w.value, dtype: w.dtype, shape: w.shape, bytes: byteSize(w.dtype, w.shape), at: { arena: a, offset: w.arena.offset } };
        };
        const bindings: Record<string, Binding> = {};
        const written: Slot[] = [];
        for (const w of s.wiring) {
          const placed = slotOf(w);
          if (w.direction === 'in') {
            const from = home.get(w.value);
            if (!from) throw new InvalidInput('', `${s.loaded.name} reads ${w.value} before anything writes it`);
            if (placed) commands.push({ kind: 'copy', from, to: placed });
            bindings[w.binding] = (placed ?? from).at;
          } else {
            // An output with no place of its own writes its value's home (a state written in place).
            const slot = placed ?? home.get(w.value) ?? ownBuffer(w.value, w);
            bindings[w.binding] = slot.at;
            if (w.dtype === 'f32') written.push({ ...slot, value: w.value });
            // A value is written once (SSA), so a second output of it (a result that is also a state's
            // next value) shares the slot; an arg keeps its own home.
            if (!isArg(w.value)) home.set(w.value, slot);
          }
        }
        const run: Command = { kind: 'run', loaded: s.loaded, bindings };
        commands.push(run);
        outputs.set(run, written);
      }
      for (const [arg, next] of Object.entries(init.stateNext)) {
        const to = home.get(arg);
        const from = home.get(next);
        if (!to || !from) throw new InvalidInput(`/${arg}`, `state ${arg} is not wired to any artifact`);
        if (from !== to) commands.push({ kind: 'copy', from, to });
      }
      for (const r of new Set(init.results)) {
        const slot = home.get(r);
        if (!slot) throw new InvalidInput('', `result ${r} is not wired to any artifact`);
        commands.push({ kind: 'read', slot, as: 'result', name: r });
      }
      for (const arg of Object.keys(init.stateNext)) commands.push({ kind: 'read', slot: home.get(arg)!, as: 'state', name: arg });
      const ranges: RangeChecks | undefined = max === undefined ? undefined : {
        max,
        state: Object.keys(init.stateNext).map((arg) => ({ arg, slot: home.get(arg)! })).filter((s) => s.slot.dtype === 'f32'),
        outputs,
      };
      return new Session(device, commands, owned, ranges);
    } catch (e) {
      if (!device.poisoned) for (const b of owned) device.free(b);
      throw e;
    }
  }

  /** Runs the recording once with new activation contents; `results` follow the program's order. */
  async replay(activations: TensorMap, resultOrder: readonly string[], deadlineMs: number): Promise<StepOutput> {
    const results: Record<string, Tensor> = {};
    const state: Record<string, Tensor> = {};
    const started = performance.now();
    if (this.ranges) this.checkInputs(this.ranges, activations);
    for (const c of this.commands) {
      switch (c.kind) {
        case 'write':
          writeTo(this.device, c.slot.at, tensorToBytes(checkTensor(`/${c.slot.value}`, c.slot, activations[c.slot.value])));
          break;
        case 'run': {
          // One deadline for the whole step: each run gets what is left of it.
          const left = Math.max(1, deadlineMs - (performance.now() - started));
          await this.device.run(c.loaded, c.bindings, { deadlineMs: deadlineMs === Infinity ? Infinity : left });
          if (this.ranges) this.checkResults(this.ranges, c);
          break;
        }
        case 'copy':
          writeTo(this.device, c.to.at, readFrom(this.device, c.from.at, c.from.bytes));
          break;
        case 'read': {
          const t = tensorFromBytes(c.slot.dtype, c.slot.shape, readFrom(this.device, c.slot.at, c.slot.bytes));
          if (c.as === 'result') results[c.name] = t;
          else state[c.name] = t;
          break;
        }
      }
    }
    // Every state's next value came from a run whose results were checked (or is its unchanged input).
    this.stateUnchecked = false;
    const ordered: Record<string, Tensor> = {};
    for (const r of resultOrder) ordered[r] = results[r]!;
    return { results: ordered, state };
  }

  // Checks the step's F32 activations and the state no checked result wrote, before anything is
  // written or run, so a refused replay leaves the device as it was.
  private checkInputs(ranges: RangeChecks, activations: TensorMap): void {
    for (const c of this.commands) {
      if (c.kind !== 'write' || c.slot.dtype !== 'f32') continue;
      const t = checkTensor(`/${c.slot.value}`, c.slot, activations[c.slot.value]);
      const bad = firstOutOfRange(t.data, ranges.max);
      if (bad) throw new NarrowingRangeInput(c.slot.value, bad.index, bad.value);
    }
    if (this.stateUnchecked) {
      for (const { arg, slot } of ranges.state) {
        const bad = firstOutOfRange(tensorFromBytes('f32', slot.shape, readFrom(this.device, slot.at, slot.bytes)).data, ranges.max);
        if (bad) throw new NarrowingRangeInput(arg, bad.index, bad.value);
      }
    }
    // From here the replay writes the state; until it completes, its contents are unchecked again.
    this.stateUnchecked = true;
  }

  // Checks the F32 values a run wrote, before any later command reads them.
  private checkResults(ranges: RangeChecks, run: Command): void {
    for (const slot of ranges.outputs.get(run) ?? []) {
      const bad = firstOutOfRange(tensorFromBytes('f32', slot.shape, readFrom(this.device, slot.at, slot.bytes)).data, ranges.max);
      if (bad) throw new NarrowingRangeResult(slot.value, bad.index, bad.value);
    }
  }

  /**
   * Frees the session's buffers; on a poisoned device they stay until the device drops. The loaded
   * artifacts are their owner's to unload: sessions of the same artifact share its context.
   */
  close(): void {
    if (this.closed || this.device.poisoned) return;
    this.closed = true;
    for (const b of this.owned) this.device.free(b);
  }
}
