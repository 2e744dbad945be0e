/**
 * The Device interface: what every device (the CPU, the XDNA2 over XRT, the Intel NPU over Level Zero,
 * and their simulators) offers the engine, plus the small helpers they share.
 *
 * The recording ABI. A loaded artifact lists its arguments (`LoadedArtifact.args`); a run binds every
 * one of them, no more and no fewer, each to a buffer (or a fixed offset in a host arena) of exactly its
 * byte size, in the little-endian layout of src/ir/bytes.ts:
 *   - `<argName>`       one per program arg (weight, activation, state), read by the run;
 *   - `result:<name>`   one per distinct program result, written by the run;
 *   - `state:<argName>` one per state arg, written with the state after the step.
 * A state output may be bound to the same buffer as its input: every input is read before any output
 * is written, so the state is carried in place.
 *
 * Failure behavior (docs: "Failure behavior"). Dispatch refusals need no hardware, so they are typed
 * DispatchRefused errors before any driver call. A run that misses its deadline rejects DeadlineExceeded
 * and poisons the device: from then on every call but live(), poisoned and drop() throws (or rejects)
 * DevicePoisoned, including unload() and free(), because the hardware may still be writing into what
 * the failed run used; so its buffers, arenas and context stay allocated, and counted by live(), until
 * drop().
 */
import { DispatchRefused, DevicePoisoned, NoDevice } from '../errors/index.js';
import type { FileWeight } from '../ir/fileWeight.js';
import type { AnyDType, Shape } from '../ir/types.js';
import { storageBytes } from '../ir/types.js';

/** The device kinds the engine knows. */
export type DeviceKind = 'cpu' | 'xdna2' | 'npu4' | 'host';

/** Opaque compiled bytes for one target: one artifact takes one hardware context when loaded. */
export interface Artifact {
  readonly target: string;
  readonly bytes: Uint8Array;
}

/** A device buffer handle. Handles are unique in the process, so another device's handle is unknown here. */
export type BufferId = number & { readonly __kind: 'BufferId' };
/** A host arena handle: one block of host memory that tensors sit in at fixed offsets. */
export type ArenaId = number & { readonly __kind: 'ArenaId' };

/** A tensor at a fixed byte offset in a host arena: its size is the bound argument's. */
export interface ArenaSlot {
  readonly arena: ArenaId;
  readonly offset: number;
}

/** What one binding names: a whole buffer, or a slot of an arena. */
export type Binding = BufferId | ArenaSlot;

/** The bindings of one run, by binding name (see the recording ABI above). */
export type Bindings = Readonly<Record<string, Binding>>;

/** One argument of a loaded artifact: its binding name, direction, element type and byte size. */
export interface ArtifactArg {
  readonly name: string;
  readonly direction: 'in' | 'out';
  /** Quantized only for a weight (an input), whose buffer holds its blocks. */
  readonly dtype: AnyDType;
  readonly shape: Shape;
  readonly bytes: number;
}

/** A loaded artifact: one hardware context of the device that loaded it, until unload() or drop(). */
export interface LoadedArtifact {
  readonly target: string;
  /** The program's name, for messages. */
  readonly name: string;
  readonly args: readonly ArtifactArg[];
}

export interface RunOptions {
  /** The run's deadline in ms from the call; Infinity waits for ever (an 'async' hang then never settles). */
  readonly deadlineMs: number;
  /** A launch grid. Cores run serialized, so only `[1]` (or no grid) is accepted. */
  readonly grid?: readonly number[];
}

/** The resources a device holds, as a user could observe them. */
export interface LiveResources {
  readonly buffers: number;
  readonly arenas: number;
  /** Bytes held by buffers and arenas together. */
  readonly bytes: number;
  readonly contexts: number;
}

export interface Device {
  readonly kind: DeviceKind;
  readonly name: string;
  /** True when the device is a simulator and not the hardware (the CPU device really computes). */
  readonly simulated: boolean;
  readonly maxContexts: number;
  /** Set once a run missed its deadline; `since` is the ISO time of poisoning. */
  readonly poisoned: { readonly since: string } | null;
  /** Runs that reached the driver; a refused dispatch is not counted. */
  readonly runs: number;
  /**
   * The largest F32 magnitude the device's narrowed arithmetic was measured on (an FP16 device: 65504).
   * When set, the session checks F32 weights at upload, inputs before and results after each replay.
   */
  readonly narrowing?: { readonly maxMagnitude: number };
  /** Loads an artifact into a hardware context; ContextLimit past maxContexts, LoadFailed when it cannot. */
  load(artifact: Artifact): Promise<LoadedArtifact>;
  /** Allocates a zeroed device buffer of `bytes` bytes. */
  allocBuffer(bytes: number): BufferId;
  /**
   * The seam for weights bound from a file: a device that can map files (the native host device, over
   * mmap) has this, and a weight bound from a file reaches it as the file range, not as bytes. It
   * returns a read-only buffer of exactly `weight.length` bytes over the range, freed by free(), and
   * refuses (InvalidInput at `/<name>/file`) a file whose size or mtime moved since it was bound.
   * Without it the session reads the range and writes it into a buffer of its own.
   */
  mapFile?(weight: FileWeight, name: string): BufferId;
  /** Allocates a zeroed host arena of `bytes` bytes. */
  allocArena(bytes: number): ArenaId;
  /**
   * Sets a whole buffer to zeros without writing it (the host device: fresh pages, nothing copied in,
   * and a state carried in place in its arena let go). Without it the session writes zeros.
   */
  zero?(target: BufferId): void;
  /**
   * Moves a whole buffer's contents to another of the same size and zeroes the first: the host device
   * hands over a state carried in place in its arena (a prefill's KV cache to the decode session)
   * without copying it. Without it the session copies, then zeroes.
   */
  move?(from: BufferId, to: BufferId): void;
  /** Copies `data` into a buffer or arena at `offset`. */
  write(target: BufferId | ArenaId, offset: number, data: Uint8Array): void;
  /** Copies `length` bytes out of a buffer or arena from `offset`. */
  read(target: BufferId | ArenaId, offset: number, length: number): Uint8Array;
  /** Frees one buffer or arena (without it memory only returns at drop()). */
  free(target: BufferId | ArenaId): void;
  /** Runs a loaded artifact over its bindings; results and new state land in the bound outputs. */
  run(loaded: LoadedArtifact, bindings: Bindings, opts: RunOptions): Promise<void>;
  /** Releases a loaded artifact's context; unloading it twice is a no-op. */
  unload(loaded: LoadedArtifact): void;
  /** Frees every buffer, arena and context; the device is then done and every call throws NoDevice. */
  drop(): void;
  /** The resources the device holds now. */
  live(): LiveResources;
}

let nextHandle = 1;
/** A fresh process-unique handle number, shared by buffers and arenas of every device. */
export function freshHandle(): number {
  return nextHandle++;
}

/** The byte size of a tensor of this dtype and shape (a quantized one's blocks). */
export function byteSize(dtype: AnyDType, shape: Shape): number {
  return storageBytes(dtype, shape);
}

/** True for a binding that names an arena slot rather than a whole buffer. */
export function isArenaSlot(b: Binding): b is ArenaSlot {
  return typeof b === 'object' && b !== null;
}

/** Throws the error a dropped or poisoned device answers every call with. */
export function assertUsable(d: { readonly name: string; readonly poisoned: { readonly since: string } | null }, dropped: boolean): void {
  if (dropped) throw new NoDevice(d.name, 'the device was dropped');
  if (d.poisoned) throw new DevicePoisoned(d.poisoned.since);
}

/** Refuses any grid but `[1]`: the cores are serialized, a kernel's thread grid is already loops. */
export function checkGrid(grid: readonly number[] | undefined): void {
  if (grid === undefined) return;
  if (grid.length !== 1 || grid[0] !== 1) {
    throw new DispatchRefused('grid-launch', `grid [${grid.join(', ')}] on serialized cores`);
  }
}

/**
 * Checks bindings against an artifact's arguments (names first, then sizes), so every shape-ABI refusal
 * comes before any driver call. `sizeOf` answers a binding's byte size, or undefined when the handle or
 * slot is not this device's.
 */
export function checkBindings(args: readonly ArtifactArg[], bindings: Bindings, sizeOf: (b: Binding, need: number) => number | undefined): void {
  const known = new Set(args.map((a) => a.name));
  for (const name of Object.keys(bindings)) {
    if (!known.has(name)) throw new DispatchRefused('not-an-argument', `binding ${name} names no argument`);
  }
  for (const a of args) {
    const b = Object.prototype.hasOwnProperty.call(bindings, a.name) ? bindings[a.name] : undefined;
    if (b === undefined) throw new DispatchRefused('shape-abi', `argument ${a.name} is not bound`);
    const size = sizeOf(b, a.bytes);
    if (size === undefined) throw new DispatchRefused('shape-abi', `argument ${a.name} is bound to memory this device does not hold`);
    if (size !== a.bytes) throw new DispatchRefused('shape-abi', `argument ${a.name} needs ${a.bytes} bytes, its buffer has ${size}`);
  }
}

/** The calls a device wrapper may replace; the rest go to the device it wraps. */
export type DeviceOverrides = Partial<Pick<Device, 'name' | 'load' | 'write' | 'read' | 'run'>>;

/** A device that forwards every call to `inner`, except those `over` replaces (wrappers for tools and tests). */
export function wrapDevice(inner: Device, over: DeviceOverrides): Device {
  return {
    kind: inner.kind,
    name: over.name ?? inner.name,
    simulated: inner.simulated,
    maxContexts: inner.maxContexts,
    get poisoned() { return inner.poisoned; },
    get runs() { return inner.runs; },
    ...(inner.narrowing ? { narrowing: inner.narrowing } : {}),
    load: over.load ?? ((a) => inner.load(a)),
    allocBuffer: (n) => inner.allocBuffer(n),
    ...(inner.mapFile ? { mapFile: inner.mapFile.bind(inner) } : {}),
    allocArena: (n) => inner.allocArena(n),
    write: over.write ?? ((t, o, d) => inner.write(t, o, d)),
    read: over.read ?? ((t, o, n) => inner.read(t, o, n)),
    free: (t) => inner.free(t),
    run: over.run ?? ((l, b, opts) => inner.run(l, b, opts)),
    unload: (l) => inner.unload(l),
    drop: () => inner.drop(),
    live: () => inner.live(),
  };
}

/** A device's memory: buffers and host arenas with bounds-checked access, whatever holds the bytes. */
export interface Memory {
  allocBuffer(bytes: number): BufferId;
  allocArena(bytes: number): ArenaId;
  write(id: BufferId | ArenaId, offset: number, data: Uint8Array): void;
  read(id: BufferId | ArenaId, offset: number, length: number): Uint8Array;
  free(id: BufferId | ArenaId): void;
  /** The bytes a binding offers an argument that needs `need`; undefined for memory this device lacks. */
  sizeOf(b: Binding, need: number): number | undefined;
  /** Frees everything. */
  clear(): void;
  /** Buffers, arenas and their bytes (contexts are the device's to count). */
  counts(): Omit<LiveResources, 'contexts'>;
}
