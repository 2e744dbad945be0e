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
import { DeadlineExceeded, InvalidInput, NarrowingRangeInput, NarrowingRangeResult } from '../errors/index.js';
import { tensorFromBytes, tensorToBytes } from '../ir/bytes.js';
import type { Tensor } from '../ir/tensor.js';
import { elementDtype } from '../ir/types.js';
import type { StepOutput, TensorMap } from '../ir/values.js';
import { isArenaSlot, type ArenaId, type BufferId, type Device } from '../devices/device.js';
import { checkTensor, firstOutOfRange, readAt, readFrom, writeAt, writeTo, zeroAt, type Command, type Placement, type RangeChecks } from './commands.js';
import { Recorder, type SessionInit, type Stage } from './recorder.js';
import type { ResidentWeights } from './residentWeights.js';

export type { Command } from './commands.js';
export type { SessionInit, Stage } from './recorder.js';
export { ResidentWeights } from './residentWeights.js';

/** The artifacts of a program on one device, their buffers, and the recording of one step. */
/** One state arg's device bytes in a SharedArrayBuffer (Session.exportState). */
interface SharedStateArg {
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly bytes: Uint8Array;
}

/** A session's carried state as device bytes in shared memory, by state arg. */
export type SharedState = Readonly<Record<string, SharedStateArg>>;

export class Session {
  private closed = false;
  // State args whose current contents no result check has covered (all of them before the first replay).
  private stateUnchecked = true;

  private constructor(
    private readonly device: Device,
    readonly commands: readonly Command[],
    private readonly owned: readonly (BufferId | ArenaId)[],
    private readonly ranges: RangeChecks | undefined,
    private readonly resident: ResidentWeights | undefined,
    /** Keys of the resident weights the session holds (residentWeights.ts). */
    readonly weightKeys: readonly string[],
    /** Weights bound from files: reused from those resident on the device, or bound (read or mapped) now. */
    readonly fileWeights: { readonly reused: number; readonly bound: number },
    /** Each state arg's buffer: the carried state, read or set between steps. */
    private readonly stateHomes: ReadonlyMap<string, Placement>,
  ) {}

  /**
   * Allocates and binds every value, uploads weights and initial state, and records one step
   * (recorder.ts); on a failure every buffer allocated so far is freed again. With `resident`, weights
   * bound from files are shared with the device's other sessions by their key.
   */
  static open(device: Device, stages: readonly Stage[], init: SessionInit, resident?: ResidentWeights): Session {
    const r = new Recorder(device, stages, init, resident);
    try {
      r.placeActivations();
      r.uploadArguments();
      for (const s of stages) r.bindStage(s);
      r.recordTail();
      return new Session(device, r.commands, r.owned, r.rangeChecks(), resident, r.borrowed, r.fileWeights, r.stateHomes());
    } catch (e) {
      for (const k of r.borrowed) resident?.release(k);
      if (!device.poisoned) for (const b of r.owned) device.free(b);
      throw e;
    }
  }

  /**
   * Runs the recording once with new activation contents; `results` follow the program's order. With
   * `readState: false` the state stays on the device (a session carried from step to step) and the
   * output's state is empty.
   */
  async replay(activations: TensorMap, resultOrder: readonly string[], deadlineMs: number, readState = true): Promise<StepOutput> {
    const results: Record<string, Tensor> = {};
    const state: Record<string, Tensor> = {};
    const started = performance.now();
    if (this.ranges) this.checkInputs(this.ranges, activations);
    for (const c of this.commands) {
      switch (c.kind) {
        case 'write':
          writeTo(this.device, c.to.at, tensorToBytes(checkTensor(`/${c.to.value}`, c.to, activations[c.to.value])));
          break;
        case 'run': {
          // One deadline for the whole step: each run gets what is left of it.
          const left = Math.max(1, deadlineMs - (performance.now() - started));
          try {
            await this.device.run(c.loaded, c.bindings, { deadlineMs: deadlineMs === Infinity ? Infinity : left });
          } catch (e) {
            // The miss is of the step's deadline, whatever part of it this run was given.
            if (e instanceof DeadlineExceeded) throw new DeadlineExceeded(deadlineMs);
            throw e;
          }
          if (this.ranges) this.checkResults(this.ranges, c);
          break;
        }
        case 'copy':
          writeTo(this.device, c.to.at, readFrom(this.device, c.from.at, c.from.bytes));
          break;
        case 'read': {
          if (c.as === 'state' && !readState) break;
          const t = tensorFromBytes(elementDtype(c.from.dtype, `${c.as} ${c.name}`), c.from.shape, readFrom(this.device, c.from.at, c.from.bytes));
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

  /** The state the session carries now, read from the device. */
  readState(): TensorMap {
    const out: Record<string, Tensor> = {};
    for (const [arg, h] of this.stateHomes) out[arg] = tensorFromBytes(elementDtype(h.dtype, `state ${arg}`), h.shape, readFrom(this.device, h.at, h.bytes));
    return out;
  }

  /**
   * The carried state as its device bytes in shared memory: another thread's session takes it
   * (setSharedState) with no copy between the threads and no element passing through a JS number.
   */
  exportState(): SharedState {
    const out: Record<string, SharedStateArg> = {};
    for (const [arg, h] of this.stateHomes) {
      const bytes = new Uint8Array(new SharedArrayBuffer(h.bytes));
      bytes.set(readFrom(this.device, h.at, h.bytes));
      out[arg] = { dtype: h.dtype, shape: [...h.shape], bytes };
    }
    return out;
  }

  /**
   * Sets the carried state to another session's exported bytes (exportState, any device): each state
   * arg's of the same dtype and shape, else InvalidInput naming it and nothing is written. With `names`
   * (this session's state arg -> the exported one's name) only those args are set, each from its name's.
   */
  setSharedState(from: SharedState, names?: Readonly<Record<string, string>>): void {
    const homes = this.homesOf(names);
    for (const [arg, h] of homes) {
      const src = from[names?.[arg] ?? arg];
      if (src === undefined || src.dtype !== h.dtype || src.bytes.length !== h.bytes || src.shape.length !== h.shape.length || src.shape.some((d, i) => d !== h.shape[i])) {
        throw new InvalidInput(`/${arg}`, `state ${arg} (${h.dtype}[${h.shape.join(', ')}]) has no counterpart of that type in the state handed over`);
      }
    }
    for (const [arg, h] of homes) writeTo(this.device, h.at, from[names?.[arg] ?? arg]!.bytes);
    this.stateUnchecked = true;
  }

  // The state homes `names` picks (every one without it); InvalidInput names an arg this session does not carry.
  private homesOf(names: Readonly<Record<string, string>> | undefined): [string, Placement][] {
    if (names === undefined) return [...this.stateHomes];
    return Object.keys(names).map((arg) => {
      const h = this.stateHomes.get(arg);
      if (h === undefined) throw new InvalidInput(`/${arg}`, `this session carries no state ${arg}`);
      return [arg, h];
    });
  }

  /**
   * Positions `[from, to)` of each state arg named in `axes`, along its axis there (a KV cache's
   * positions), as the row-major bytes of that sub-box in shared memory, one piece per range: a state's
   * filled part read without the rest of it. InvalidInput names an arg or a range that is not the state's.
   */
  readPositions(axes: Readonly<Record<string, number>>, ranges: readonly (readonly [number, number])[]): SharedState[] {
    const boxes = this.positionBoxes(axes);
    // The cast is what lets `out[k][arg]` be indexed under tsc 7 (the 6.0 API eslint runs on calls it unnecessary).
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
    const out = ranges.map(() => ({}) as Record<string, SharedStateArg>);
    for (const b of boxes) {
      const pieces = ranges.map(([from, to]) => {
        if (!(Number.isSafeInteger(from) && Number.isSafeInteger(to) && from >= 0 && from < to && to <= b.count)) throw new InvalidInput(`/${b.arg}`, `positions [${from}, ${to}) are not within the ${b.count} of state ${b.arg}`);
        const shape = [...b.home.shape];
        shape[b.axis] = to - from;
        return { from, run: (to - from) * b.inner, bytes: new Uint8Array(new SharedArrayBuffer(b.outer * (to - from) * b.inner)), shape };
      });
      // Ranges that follow one another are read as one run per row: a call per row, not per range and row.
      for (const group of adjacent(pieces, b.inner)) {
        const first = group[0]!;
        const run = group.reduce((a, g) => a + g.run, 0);
        for (let o = 0; o < b.outer; o++) {
          const row = readAt(this.device, b.home.at, o * b.count * b.inner + first.from * b.inner, run);
          let at = 0;
          for (const g of group) { g.bytes.set(row.subarray(at, at + g.run), o * g.run); at += g.run; }
        }
      }
      pieces.forEach((g, i) => { out[i]![b.arg] = { dtype: b.home.dtype, shape: g.shape, bytes: g.bytes }; });
    }
    return out;
  }

  /**
   * Writes pieces that readPositions gave (each state arg's positions from `from`, along the same axes)
   * into the carried state; the other positions keep their bytes. Every piece is checked before any
   * is written: InvalidInput names the first that does not fit.
   */
  writePositions(axes: Readonly<Record<string, number>>, pieces: readonly { readonly from: number; readonly state: SharedState }[]): void {
    const boxes = this.positionBoxes(axes);
    for (const { from, state } of pieces) {
      for (const b of boxes) {
        const src = state[b.arg];
        const n = src?.shape[b.axis] ?? 0;
        const fits = src !== undefined && src.dtype === b.home.dtype && src.shape.length === b.home.shape.length
          && src.shape.every((d, i) => i === b.axis || d === b.home.shape[i]) && Number.isSafeInteger(from) && from >= 0 && n >= 1 && from + n <= b.count
          && src.bytes.length === b.outer * n * b.inner;
        if (!fits) throw new InvalidInput(`/${b.arg}`, `the piece of state ${b.arg} at position ${from} is not ${b.home.dtype} positions of [${b.home.shape.join(', ')}] along axis ${b.axis}`);
      }
    }
    for (const b of boxes) {
      const runs = pieces.map(({ from, state }) => ({ from, run: state[b.arg]!.shape[b.axis]! * b.inner, bytes: state[b.arg]!.bytes }));
      // Pieces that follow one another are written as one run per row.
      for (const group of adjacent(runs, b.inner)) {
        const run = group.reduce((a, g) => a + g.run, 0);
        const row = new Uint8Array(run);
        for (let o = 0; o < b.outer; o++) {
          let at = 0;
          for (const g of group) { row.set(g.bytes.subarray(o * g.run, (o + 1) * g.run), at); at += g.run; }
          writeAt(this.device, b.home.at, o * b.count * b.inner + group[0]!.from * b.inner, row);
        }
      }
    }
    this.stateUnchecked = true;
  }

  // Each named state arg's home and how its positions lie: `outer` runs of `count` positions of `inner` bytes.
  private positionBoxes(axes: Readonly<Record<string, number>>): { arg: string; home: Placement; axis: number; count: number; outer: number; inner: number }[] {
    return Object.entries(axes).map(([arg, axis]) => {
      const home = this.stateHomes.get(arg);
      if (home === undefined || !(Number.isSafeInteger(axis) && axis >= 0 && axis < home.shape.length)) throw new InvalidInput(`/${arg}`, `no state ${arg} with an axis ${axis}`);
      const elements = home.shape.reduce((a, d) => a * d, 1);
      const outer = home.shape.slice(0, axis).reduce((a, d) => a * d, 1);
      const inner = (home.shape.slice(axis + 1).reduce((a, d) => a * d, 1) * home.bytes) / elements;
      return { arg, home, axis, count: home.shape[axis]!, outer, inner };
    });
  }

  /**
   * Sets the carried state: zeroed, given as tensors (each state arg's, of its type), or copied from
   * another session's on the same device (the same
   * state args, names, dtypes and shapes: the prefill program's KV cache handed to the decode
   * program's), without the bytes leaving the device's process. With `move` the other session's state
   * is zeroed after it is taken: a device that can (the host's move) hands it over with no copy. With
   * `names` (this session's state arg -> the other session's) only those args are set, each from its
   * name's in the other session: one sequence's KV cache moved into its slot of a program of several.
   */
  setState(from: Session | 'zero' | TensorMap, move = false, names?: Readonly<Record<string, string>>): void {
    if (names !== undefined && !(from instanceof Session)) throw new InvalidInput('/names', 'state args are renamed only from another session');
    if (from !== 'zero' && !(from instanceof Session)) {
      // Tensors from elsewhere (another device's state): every one checked before any is written.
      const bytes = [...this.stateHomes].map(([arg, h]) => [h, tensorToBytes(checkTensor(`/${arg}`, { ...h, value: arg }, from[arg]))] as const);
      for (const [h, b] of bytes) writeTo(this.device, h.at, b);
      this.stateUnchecked = true;
      return;
    }
    if (from === 'zero') {
      for (const [, h] of this.stateHomes) zeroAt(this.device, h.at, h.bytes);
      this.stateUnchecked = true;
      return;
    }
    const pairs = this.homesOf(names).map(([arg, h]) => {
      const src = from.stateHomes.get(names?.[arg] ?? arg);
      if (src === undefined || src.dtype !== h.dtype || src.bytes !== h.bytes || src.shape.length !== h.shape.length || src.shape.some((d, i) => d !== h.shape[i])) {
        throw new InvalidInput(`/${arg}`, `state ${arg} (${h.dtype}[${h.shape.join(', ')}]) has no counterpart of that type in the session it is taken from`);
      }
      return [src, h] as const;
    });
    for (const [src, h] of pairs) {
      if (src.at === h.at) continue;
      if (move && from.device === this.device && this.device.move !== undefined && !isArenaSlot(src.at) && !isArenaSlot(h.at)) {
        this.device.move(src.at, h.at);
        continue;
      }
      writeTo(this.device, h.at, readFrom(from.device, src.at, src.bytes));
      if (move) zeroAt(from.device, src.at, src.bytes);
    }
    if (move) from.stateUnchecked = true;
    this.stateUnchecked = true;
  }

  // Checks the step's F32 activations and the state no checked result wrote, before anything is
  // written or run, so a refused replay leaves the device as it was.
  private checkInputs(ranges: RangeChecks, activations: TensorMap): void {
    for (const c of this.commands) {
      if (c.kind !== 'write' || c.to.dtype !== 'f32') continue;
      const t = checkTensor(`/${c.to.value}`, c.to, activations[c.to.value]);
      const bad = firstOutOfRange(t.data, ranges.max);
      if (bad) throw new NarrowingRangeInput(c.to.value, bad.index, bad.value);
    }
    if (this.stateUnchecked) {
      for (const { arg, home } of ranges.state) {
        const bad = firstOutOfRange(tensorFromBytes('f32', home.shape, readFrom(this.device, home.at, home.bytes)).data, ranges.max);
        if (bad) throw new NarrowingRangeInput(arg, bad.index, bad.value);
      }
    }
    // From here the replay writes the state; until it completes, its contents are unchecked again.
    this.stateUnchecked = true;
  }

  // Checks the F32 values a run wrote, before any later command reads them.
  private checkResults(ranges: RangeChecks, run: Command): void {
    for (const p of ranges.outputs.get(run) ?? []) {
      const bad = firstOutOfRange(tensorFromBytes('f32', p.shape, readFrom(this.device, p.at, p.bytes)).data, ranges.max);
      if (bad) throw new NarrowingRangeResult(p.value, bad.index, bad.value);
    }
  }

  /**
   * Frees the session's buffers; on a poisoned device they stay until the device drops. The loaded
   * artifacts are their owner's to unload: sessions of the same artifact share its context.
   */
  close(): void {
    if (this.closed || this.device.poisoned) return;
    this.closed = true;
    for (const k of this.weightKeys) this.resident?.release(k);
    for (const b of this.owned) this.device.free(b);
  }
}

/** Runs of pieces each starting where the one before ends (in the order given), for one call per row. */
function adjacent<T extends { readonly from: number; readonly run: number }>(pieces: readonly T[], inner: number): T[][] {
  const groups: T[][] = [];
  for (const p of pieces) {
    const last = groups[groups.length - 1];
    const prev = last?.[last.length - 1];
    if (last !== undefined && prev !== undefined && prev.from * inner + prev.run === p.from * inner) last.push(p);
    else groups.push([p]);
  }
  return groups;
}
