/**
 * The simulated Intel NPU4 (Lunar Lake) behind the Device interface, as the docs describe the hardware
 * ("Intel NPU", "Failure behavior"). A program is one compiled graph, loaded from the driver compiler's
 * blob into one context, and one replay per step, computing in FP16 (fp16Kernels.ts).
 *
 * Before anything runs: load decodes the blob (a damaged one, or one the driver refuses, is LoadFailed so
 * the engine recompiles) and checks the graph's arguments against the program's ABI the blob carries
 * (ArgumentMismatch). Dispatch refusals come before any driver call: a grid launch, a graph this device
 * did not load (foreign-graph), a binding that is not the graph's argument or not its size. A replay that
 * misses its deadline poisons the device; the failed recording's buffers stay allocated, and counted by
 * live(), until drop(). `narrowing` tells the session to check F32 values at the host (65504).
 */
import { ContextLimit, DispatchRefused, LoadFailed } from '../../errors.js';
import { tensorFromBytes, tensorToBytes } from '../../ir/bytes.js';
import type { Tensor } from '../../ir/tensor.js';
import { F16_MAX } from '../../numerics/float16.js';
import type { CompiledBlob } from '../../compiler/openvino/vendorCompiler.js';
import type { ArenaId, Artifact, ArtifactArg, Bindings, BufferId, Device, LiveResources, LoadedArtifact, RunOptions } from '../device.js';
import { assertUsable, byteSize, checkBindings, checkGrid } from '../device.js';
import type { FaultOptions } from '../faults.js';
import { checkDeadline, checkFaults, driverRun, loadFails } from '../faults.js';
import { DeviceMemory } from '../memory.js';
import { checkArguments } from './argCheck.js';
import { checkArgumentLayers, decodeBlob } from './blob.js';
import { runGraph } from './executor.js';

export interface Npu4SimOptions {
  readonly name?: string;
  /** Graphs loaded at once (default NPU4_DEFAULT_CONTEXTS). */
  readonly maxContexts?: number;
  readonly faults?: FaultOptions;
}

/** Contexts of the simulated NPU4; the engine's context accounting needs a bound, not this exact one. */
export const NPU4_DEFAULT_CONTEXTS = 16;

export class Npu4SimDevice implements Device {
  readonly kind = 'npu4' as const;
  readonly simulated = true;
  readonly name: string;
  readonly maxContexts: number;
  /** FP16's largest finite magnitude: the range the narrowing contract was measured on. */
  readonly narrowing = { maxMagnitude: F16_MAX } as const;
  private readonly faults: FaultOptions;
  private readonly memory = new DeviceMemory();
  private readonly contexts = new Map<LoadedArtifact, CompiledBlob>();
  private readonly everLoaded = new WeakSet<LoadedArtifact>();
  private poison: { readonly since: string } | null = null;
  private dropped = false;
  private loadCount = 0;
  private runCount = 0;

  constructor(opts: Npu4SimOptions = {}) {
    const max = opts.maxContexts ?? NPU4_DEFAULT_CONTEXTS;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`maxContexts must be a whole number >= 1, got ${String(max)}`);
    this.maxContexts = max;
    this.name = opts.name ?? 'npu4-sim';
    this.faults = checkFaults(opts.faults ?? {});
  }

  /** Set once a replay missed its deadline. */
  get poisoned(): { readonly since: string } | null {
    return this.poison;
  }

  /** Replays that reached the driver. */
  get runs(): number {
    return this.runCount;
  }

  private usable(): void {
    assertUsable(this, this.dropped);
  }

  /** Loads a blob into a context after checking its graph's arguments against the program's. */
  async load(artifact: Artifact): Promise<LoadedArtifact> {
    this.usable();
    if (this.contexts.size >= this.maxContexts) throw new ContextLimit(this.contexts.size + 1, this.maxContexts);
    const n = ++this.loadCount;
    if (loadFails(this.faults, n)) throw new LoadFailed(this.name, `injected fault: load ${n} fails`);
    const target: unknown = artifact?.target;
    if (target !== 'npu4') throw new LoadFailed(this.name, `a ${String(target)} artifact does not load on the Intel NPU`);
    const blob = decodeBlob(artifact.bytes, this.name);
    checkArguments(blob.graph.expected, blob.graph.args);
    checkArgumentLayers(blob, this.name);
    const args: ArtifactArg[] = [...blob.graph.args].sort((a, b) => a.order - b.order).map((a) => Object.freeze({
      name: a.name, direction: a.direction === 'parameter' ? 'in' : 'out', dtype: a.precision,
      shape: Object.freeze([...a.dims]), bytes: byteSize(a.precision, a.dims),
    }) satisfies ArtifactArg);
    const loaded: LoadedArtifact = Object.freeze({ target: 'npu4', name: blob.graph.name, args: Object.freeze(args) });
    this.contexts.set(loaded, blob);
    this.everLoaded.add(loaded);
    return loaded;
  }

  /** Allocates a zeroed buffer in host memory the NPU addresses. */
  allocBuffer(bytes: number): BufferId {
    this.usable();
    return this.memory.allocBuffer(bytes);
  }

  /** Allocates a zeroed host arena. */
  allocArena(bytes: number): ArenaId {
    this.usable();
    return this.memory.allocArena(bytes);
  }

  /** Copies bytes into a buffer or arena. */
  write(target: BufferId | ArenaId, offset: number, data: Uint8Array): void {
    this.usable();
    this.memory.write(target, offset, data);
  }

  /** Copies bytes out of a buffer or arena. */
  read(target: BufferId | ArenaId, offset: number, length: number): Uint8Array {
    this.usable();
    return this.memory.read(target, offset, length);
  }

  /** Frees a buffer or arena. */
  free(target: BufferId | ArenaId): void {
    this.usable();
    this.memory.free(target);
  }

  /** Replays a loaded graph once over its bindings. */
  async run(loaded: LoadedArtifact, bindings: Bindings, opts: RunOptions): Promise<void> {
    this.usable();
    const blob = this.contexts.get(loaded);
    if (!blob) throw new DispatchRefused('foreign-graph', 'the graph is not loaded on this device');
    checkGrid(opts.grid);
    checkDeadline(opts.deadlineMs);
    checkBindings(loaded.args, bindings, (b, need) => this.memory.sizeOf(b, need));
    const runNumber = ++this.runCount;
    return driverRun({
      faults: this.faults,
      runNumber,
      deadlineMs: opts.deadlineMs,
      compute: () => this.compute(blob, loaded, bindings),
      onMiss: () => { this.poison = { since: new Date().toISOString() }; },
    });
  }

  // Reads every parameter, runs the graph, and returns the writes of its results, so nothing is written
  // unless the replay completes in time (and an in-place state is read before it is overwritten).
  private compute(blob: CompiledBlob, loaded: LoadedArtifact, bindings: Bindings): () => void {
    this.usable();
    const params = new Map<string, Tensor>();
    for (const a of loaded.args) {
      if (a.direction === 'in') params.set(a.name, tensorFromBytes(a.dtype, a.shape, this.memory.view(bindings[a.name]!, a.bytes)));
    }
    const results = runGraph(blob, params);
    const writes = loaded.args.filter((a) => a.direction === 'out').map((a) => {
      const t = results.get(a.name);
      if (!t) throw new Error(`the graph computed no value for ${a.name}`);
      return [this.memory.view(bindings[a.name]!, a.bytes), tensorToBytes({ ...t, dtype: a.dtype })] as const;
    });
    return () => { for (const [view, bytes] of writes) view.set(bytes); };
  }

  /** Releases a loaded graph's context; unloading it twice is a no-op. */
  unload(loaded: LoadedArtifact): void {
    this.usable();
    if (this.contexts.delete(loaded)) return;
    if (!this.everLoaded.has(loaded)) throw new DispatchRefused('foreign-graph', 'the graph was not loaded on this device');
  }

  /** Frees everything; the device is then done. */
  drop(): void {
    this.dropped = true;
    this.memory.clear();
    this.contexts.clear();
  }

  /** The resources held now. */
  live(): LiveResources {
    return { ...this.memory.counts(), contexts: this.contexts.size };
  }
}
