/**
 * Records one step of a session, in four named steps: place the activations (one host arena at fixed
 * offsets), upload the arguments (weights and initial state, in buffers of their own), bind each stage
 * (copies where an artifact wants a value at its own arena offset, then the run), and record the tail
 * (state copies and read-backs). Each value has a home: its arg's buffer, or the placement of the
 * artifact that produced it.
 */
import { InvalidInput, NarrowingRangeUpload } from '../errors/index.js';
import { stateBinding, type WiredArg, type Wiring } from '../compiler/wiring.js';
import { heldToBytes, tensorToBytes } from '../ir/bytes.js';
import { isFileWeight, readFileWeight, type FileWeight } from '../ir/fileWeight.js';
import { isQuantTensor, type HeldTensor } from '../ir/tensor.js';
import type { AnyDType, Shape } from '../ir/types.js';
import type { TensorMap, WeightMap } from '../ir/values.js';
import type { ArenaId, Binding, BufferId, Device, LoadedArtifact } from '../devices/device.js';
import { byteSize } from '../devices/device.js';
import { checkTensor, firstOutOfRange, writeTo, zeroAt, type Command, type Placement, type RangeChecks } from './commands.js';
import type { ResidentWeights } from './residentWeights.js';

/** What a session needs to know of the program beyond its artifacts' wiring. */
export interface SessionInit {
  /** Weights: tensors, quantized tensors (their blocks), or byte ranges of files (bound, not read). */
  readonly weights: WeightMap;
  readonly state: TensorMap;
  readonly activations: readonly string[];
  /** State arg → the value it takes after each step. */
  readonly stateNext: Readonly<Record<string, string>>;
  readonly results: readonly string[];
  /** A state missing from `state` starts zeroed (a session opened for a fresh KV cache). */
  readonly zeroState?: boolean;
}

/** One loaded artifact and how its bindings map to program values. */
export interface Stage {
  readonly loaded: LoadedArtifact;
  readonly wiring: Wiring;
}

type ValueType = { readonly dtype: AnyDType; readonly shape: Shape };

export class Recorder {
  /** Every buffer and arena allocated so far: the session's to free, or the caller's after a failure. */
  readonly owned: (BufferId | ArenaId)[] = [];
  /** Keys of the resident weights this recording holds a reference to: the session's to release. */
  readonly borrowed: string[] = [];
  /** Weights bound from files: taken from those resident on the device, or read (or mapped) now. */
  readonly fileWeights = { reused: 0, bound: 0 };
  readonly commands: Command[] = [];
  private readonly outputs = new Map<Command, Placement[]>();
  private readonly home = new Map<string, Placement>();
  private readonly types = new Map<string, ValueType>();
  private readonly acts: ReadonlySet<string>;
  private readonly max: number | undefined;

  // With one stage nothing reads a state's old value after that stage writes the new one, so the
  // state's next value can be written straight into its home (carried in place, no copy per step).
  private readonly inPlace: boolean;

  constructor(private readonly device: Device, stages: readonly Stage[], private readonly init: SessionInit, private readonly resident?: ResidentWeights) {
    this.inPlace = stages.length === 1;
    this.acts = new Set(init.activations);
    this.max = device.narrowing?.maxMagnitude;
    for (const s of stages) for (const w of s.wiring) if (!this.types.has(w.value)) this.types.set(w.value, { dtype: w.dtype, shape: w.shape });
  }

  private isArg(v: string): boolean {
    return this.acts.has(v) || Object.hasOwn(this.init.weights, v) || Object.hasOwn(this.init.stateNext, v) || Object.hasOwn(this.init.state, v);
  }

  private ownBuffer(value: string, t: ValueType): Placement {
    const bytes = byteSize(t.dtype, t.shape);
    const buf = this.device.allocBuffer(bytes);
    this.owned.push(buf);
    return { value, ...t, bytes, at: buf };
  }

  /** Activations share one host arena at fixed offsets: the host rewrites them before every step. */
  placeActivations(): void {
    const values = [...this.types].filter(([v]) => this.acts.has(v));
    const total = values.reduce((n, [, t]) => n + byteSize(t.dtype, t.shape), 0);
    if (total === 0) return;
    const arena = this.device.allocArena(total);
    this.owned.push(arena);
    let offset = 0;
    for (const [value, t] of values) {
      const to: Placement = { value, ...t, bytes: byteSize(t.dtype, t.shape), at: { arena, offset } };
      this.home.set(value, to);
      this.commands.push({ kind: 'write', to });
      offset += to.bytes;
    }
  }

  /**
   * Weights and state live in buffers of their own, uploaded once (a weight range-checked first); a
   * weight bound from a file is resident on the device by its key (residentWeights.ts) when it can be.
   */
  uploadArguments(): void {
    for (const [v, t] of this.types) {
      if (this.home.has(v) || !this.isArg(v)) continue;
      if (Object.hasOwn(this.init.weights, v)) {
        this.uploadWeight(v, t);
        continue;
      }
      const p = this.ownBuffer(v, t);
      this.home.set(v, p);
      const given = this.init.state[v];
      if (given === undefined && this.init.zeroState === true && Object.hasOwn(this.init.stateNext, v)) zeroAt(this.device, p.at, p.bytes);
      else writeTo(this.device, p.at, tensorToBytes(checkTensor(`/${v}`, p, given)));
    }
  }

  /** Each state arg's home (its own buffer), for reading or setting a session's state between steps. */
  stateHomes(): ReadonlyMap<string, Placement> {
    return new Map(Object.keys(this.init.stateNext).map((arg) => [arg, this.home.get(arg)!]));
  }

  private uploadWeight(v: string, t: ValueType): void {
    const bytes = byteSize(t.dtype, t.shape);
    const w = checkTensor(`/${v}`, { value: v, ...t }, this.init.weights[v]);
    if (!isFileWeight(w)) {
      const p = this.ownBuffer(v, t);
      this.home.set(v, p);
      this.checkUpload(v, w);
      writeTo(this.device, p.at, heldToBytes(w));
      return;
    }
    let at: BufferId;
    if (this.resident) {
      const got = this.resident.acquire(w.key, () => this.bindFile(v, w));
      this.borrowed.push(w.key);
      at = got.buffer;
      if (got.reused) this.fileWeights.reused++;
      else this.fileWeights.bound++;
    } else {
      at = this.bindFile(v, w);
      this.owned.push(at);
      this.fileWeights.bound++;
    }
    this.home.set(v, { value: v, ...t, bytes, at });
  }

  // A weight bound from a file reaches a device that maps files as the file range; any other device (or
  // an f32 weight a narrowing device must range-check) gets the bytes read from the file here.
  private bindFile(v: string, w: FileWeight): BufferId {
    if (this.device.mapFile && !(this.max !== undefined && w.dtype === 'f32')) return this.device.mapFile(w, v);
    const held = readFileWeight(w, v);
    this.checkUpload(v, held);
    const buf = this.device.allocBuffer(w.length);
    try {
      this.device.write(buf, 0, heldToBytes(held));
    } catch (e) {
      if (!this.device.poisoned) this.device.free(buf);
      throw e;
    }
    return buf;
  }

  private checkUpload(v: string, w: HeldTensor): void {
    if (this.max === undefined || isQuantTensor(w) || w.dtype !== 'f32') return;
    const bad = firstOutOfRange(w.data, this.max);
    if (bad) throw new NarrowingRangeUpload(v, bad.index, bad.value);
  }

  /** Binds one stage: its inputs (copied to its own arena offsets where it wants them), its outputs, its run. */
  bindStage(s: Stage): void {
    const arenas = new Map<number, ArenaId>();
    const placed = (w: WiredArg): Placement | undefined => {
      if (!w.arena) return undefined;
      let a = arenas.get(w.arena.index);
      if (a === undefined) {
        a = this.device.allocArena(w.arena.arenaBytes);
        this.owned.push(a);
        arenas.set(w.arena.index, a);
      }
      return { value: w.value, dtype: w.dtype, shape: w.shape, bytes: byteSize(w.dtype, w.shape), at: { arena: a, offset: w.arena.offset } };
    };
    const bindings: Record<string, Binding> = {};
    const written: Placement[] = [];
    for (const w of s.wiring) {
      const own = placed(w);
      if (w.direction === 'in') {
        const from = this.home.get(w.value);
        if (!from) throw new InvalidInput('', `${s.loaded.name} reads ${w.value} before anything writes it`);
        if (own) this.commands.push({ kind: 'copy', from, to: own });
        bindings[w.binding] = (own ?? from).at;
      } else {
        // An output with no place of its own writes its value's home (a state written in place).
        const to = own ?? this.home.get(w.value) ?? this.stateHomeFor(w) ?? this.ownBuffer(w.value, w);
        bindings[w.binding] = to.at;
        if (w.dtype === 'f32') written.push({ ...to, value: w.value });
        // A value is written once (SSA), so a second output of it (a result that is also a state's
        // next value) shares the placement; an arg keeps its own home.
        if (!this.isArg(w.value)) this.home.set(w.value, to);
      }
    }
    const run: Command = { kind: 'run', loaded: s.loaded, bindings };
    this.commands.push(run);
    this.outputs.set(run, written);
  }

  // The arg's home for the output binding of a state's next value, when it is carried in place.
  private stateHomeFor(w: WiredArg): Placement | undefined {
    if (!this.inPlace) return undefined;
    const arg = Object.keys(this.init.stateNext).find((a) => this.init.stateNext[a] === w.value && w.binding === stateBinding(a));
    return arg === undefined ? undefined : this.home.get(arg);
  }

  /** Each state takes its next value, then results and state are read back. */
  recordTail(): void {
    for (const [arg, next] of Object.entries(this.init.stateNext)) {
      const to = this.home.get(arg);
      const from = this.home.get(next);
      if (!to || !from) throw new InvalidInput(`/${arg}`, `state ${arg} is not wired to any artifact`);
      if (from !== to) this.commands.push({ kind: 'copy', from, to });
    }
    for (const r of new Set(this.init.results)) {
      const from = this.home.get(r);
      if (!from) throw new InvalidInput('', `result ${r} is not wired to any artifact`);
      this.commands.push({ kind: 'read', from, as: 'result', name: r });
    }
    for (const arg of Object.keys(this.init.stateNext)) this.commands.push({ kind: 'read', from: this.home.get(arg)!, as: 'state', name: arg });
  }

  /** The checks a narrowing device needs, or undefined for a device without a narrowing range. */
  rangeChecks(): RangeChecks | undefined {
    if (this.max === undefined) return undefined;
    const state = Object.keys(this.init.stateNext).map((arg) => ({ arg, home: this.home.get(arg)! })).filter((s) => s.home.dtype === 'f32');
    return { max: this.max, state, outputs: this.outputs };
  }
}
