/**
 * The CPU device: the oracle behind the Device interface. It is not a simulator (it really computes),
 * but it keeps the hardware's rules (contexts, exact shape ABI, serialized cores, deadlines and
 * poisoning) so that the engine meets the same failures on it as on an NPU, and it takes the same
 * fault injection as the simulated devices.
 */
import { ContextLimit, DispatchRefused, LoadFailed } from '../errors.js';
import { loadCpuArtifact } from '../compiler/cpu.js';
import type { CheckedProgram } from '../ir/checked.js';
import { tensorFromBytes, tensorToBytes } from '../ir/bytes.js';
import type { Tensor } from '../ir/tensor.js';
import { runStep } from '../oracle/index.js';
import { programAbi, resultBinding, stateBinding } from './abi.js';
import type { ArenaId, Artifact, Bindings, BufferId, Device, LiveResources, LoadedArtifact, RunOptions } from './device.js';
import { assertUsable, checkBindings, checkGrid } from './device.js';
import type { FaultOptions } from './faults.js';
import { checkDeadline, checkFaults, driverRun, loadFails } from './faults.js';
import { DeviceMemory } from './memory.js';

export interface CpuDeviceOptions {
  readonly name?: string;
  /** Hardware contexts, i.e. artifacts loaded at once (default 16, as the XDNA2 has). */
  readonly maxContexts?: number;
  readonly faults?: FaultOptions;
}

export const CPU_DEFAULT_CONTEXTS = 16;

export class CpuDevice implements Device {
  readonly kind = 'cpu' as const;
  readonly simulated = false;
  readonly name: string;
  readonly maxContexts: number;
  private readonly faults: FaultOptions;
  private readonly memory = new DeviceMemory();
  private readonly contexts = new Map<LoadedArtifact, CheckedProgram>();
  // Every artifact this device ever loaded, so unloading one twice is told from unloading a foreign one.
  private readonly everLoaded = new WeakSet<LoadedArtifact>();
  private poison: { readonly since: string } | null = null;
  private dropped = false;
  private loadCount = 0;
  private runCount = 0;

  constructor(opts: CpuDeviceOptions = {}) {
    const max = opts.maxContexts ?? CPU_DEFAULT_CONTEXTS;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`maxContexts must be a whole number >= 1, got ${String(max)}`);
    this.maxContexts = max;
    this.name = opts.name ?? 'cpu';
    this.faults = checkFaults(opts.faults ?? {});
  }

  /** Set once a run missed its deadline. */
  get poisoned(): { readonly since: string } | null {
    return this.poison;
  }

  /** Runs that reached the driver. */
  get runs(): number {
    return this.runCount;
  }

  private usable(): void {
    assertUsable(this, this.dropped);
  }

  /** Loads a CPU artifact into a context. */
  async load(artifact: Artifact): Promise<LoadedArtifact> {
    this.usable();
    if (this.contexts.size >= this.maxContexts) throw new ContextLimit(this.contexts.size + 1, this.maxContexts);
    const n = ++this.loadCount;
    if (loadFails(this.faults, n)) throw new LoadFailed(this.name, `injected fault: load ${n} fails`);
    const target: unknown = artifact?.target;
    if (target !== 'cpu') throw new LoadFailed(this.name, `a ${String(target)} artifact does not load on the CPU`);
    const checked = loadCpuArtifact(artifact.bytes, this.name);
    const args = programAbi(checked).map((a) => Object.freeze({ ...a, shape: Object.freeze([...a.shape]) }));
    const loaded: LoadedArtifact = Object.freeze({ target: 'cpu', name: checked.program.name, args: Object.freeze(args) });
    this.contexts.set(loaded, checked);
    this.everLoaded.add(loaded);
    return loaded;
  }

  /** Allocates a zeroed buffer. */
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

  /** Runs a loaded program for one step over its bindings. */
  async run(loaded: LoadedArtifact, bindings: Bindings, opts: RunOptions): Promise<void> {
    this.usable();
    const checked = this.contexts.get(loaded);
    if (!checked) throw new DispatchRefused('foreign-graph', 'the artifact is not loaded on this device');
    checkGrid(opts.grid);
    checkDeadline(opts.deadlineMs);
    checkBindings(loaded.args, bindings, (b, need) => this.memory.sizeOf(b, need));
    const runNumber = ++this.runCount;
    return driverRun({
      faults: this.faults,
      runNumber,
      deadlineMs: opts.deadlineMs,
      compute: () => this.compute(checked, loaded, bindings),
      onMiss: () => { this.poison = { since: new Date().toISOString() }; },
    });
  }

  // Reads every input, runs the oracle, and returns the writes of the outputs, so that nothing is
  // written unless the run completes in time (and an in-place state is read before it is overwritten).
  private compute(checked: CheckedProgram, loaded: LoadedArtifact, bindings: Bindings): () => void {
    // A run that outlived a drop or a poisoning by another run has nowhere trustworthy to write.
    this.usable();
    const weights: Record<string, Tensor> = {};
    const state: Record<string, Tensor> = {};
    const activations: Record<string, Tensor> = {};
    for (const a of checked.program.args) {
      const t = tensorFromBytes(a.dtype, a.shape, this.memory.view(bindings[a.name]!, loaded.args.find((x) => x.name === a.name)!.bytes));
      (a.role === 'weight' ? weights : a.role === 'state' ? state : activations)[a.name] = t;
    }
    const step = runStep(checked, { weights, state, activations });
    const writes: [string, Uint8Array][] = [];
    for (const r of new Set(checked.program.results)) writes.push([resultBinding(r), bytesOf(step.results[r], r)]);
    for (const a of checked.program.args) {
      if (a.role === 'state') writes.push([stateBinding(a.name), bytesOf(step.state[a.name], a.name)]);
    }
    const views = writes.map(([name, bytes]) => {
      const arg = loaded.args.find((x) => x.name === name)!;
      if (bytes.length !== arg.bytes) throw new Error(`oracle output ${name} is ${bytes.length} bytes, its argument ${arg.bytes}`);
      return [this.memory.view(bindings[name]!, arg.bytes), bytes] as const;
    });
    return () => { for (const [view, bytes] of views) view.set(bytes); };
  }

  /** Releases a loaded artifact's context; unloading it twice is a no-op. */
  unload(loaded: LoadedArtifact): void {
    this.usable();
    if (this.contexts.delete(loaded)) return;
    if (!this.everLoaded.has(loaded)) throw new DispatchRefused('foreign-graph', 'the artifact was not loaded on this device');
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

function bytesOf(t: Tensor | undefined, name: string): Uint8Array {
  if (!t) throw new Error(`the oracle returned no value for ${name}`);
  return tensorToBytes(t);
}
