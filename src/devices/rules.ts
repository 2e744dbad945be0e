/**
 * The rules every device shares: hardware contexts, the dispatch checks that come before any driver
 * call, deadlines with poisoning, fault injection, live-resource accounting and drop(). Memory is the
 * device's own (a Memory): the simulators and the CPU device keep theirs in this process (JsMemory,
 * memory.ts), a device over a native addon keeps handles to the driver's. A device class says only how
 * it decodes its artifacts and how it computes one run.
 *
 * The failure rules are device.ts's: after a missed deadline every call but live(), poisoned and
 * drop() throws DevicePoisoned, so the failed run's buffers, arenas and context stay allocated (and
 * counted by live()) until drop().
 */
import { ContextLimit, DispatchRefused, LoadFailed } from '../errors/index.js';
import type {
  ArenaId, Artifact, ArtifactArg, Bindings, BufferId, Device, DeviceKind, LiveResources, LoadedArtifact, Memory, RunOptions,
} from './device.js';
import { assertUsable, checkBindings, checkGrid } from './device.js';
import type { FaultOptions } from './faults.js';
import { checkDeadline, checkFaults, driverRun, loadFails } from './faults.js';
import { JsMemory } from './memory.js';

export interface DeviceBaseOptions {
  readonly name?: string;
  /** Hardware contexts, i.e. artifacts loaded at once. */
  readonly maxContexts?: number;
  readonly faults?: FaultOptions;
  /** Threads of a device that computes on this machine's cores (host); others ignore it. */
  readonly threads?: number;
}

/** A decoded artifact: its name, its arguments and what the device keeps to run it. */
export interface Decoded<C> {
  readonly name: string;
  readonly args: readonly ArtifactArg[];
  readonly ctx: C;
}

export abstract class DeviceRules<C, M extends Memory> implements Device {
  abstract readonly kind: DeviceKind;
  abstract readonly simulated: boolean;
  readonly name: string;
  readonly maxContexts: number;
  protected readonly faults: FaultOptions;
  private readonly contexts = new Map<LoadedArtifact, C>();
  // Every artifact this device ever loaded, so unloading one twice is told from unloading a foreign one.
  private readonly everLoaded = new WeakSet<LoadedArtifact>();
  private poison: { readonly since: string } | null = null;
  private dropped = false;
  private loadCount = 0;
  private runCount = 0;

  constructor(
    opts: DeviceBaseOptions,
    defaults: { readonly name: string; readonly maxContexts: number },
    protected readonly memory: M,
  ) {
    const max = opts.maxContexts ?? defaults.maxContexts;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`maxContexts must be a whole number >= 1, got ${String(max)}`);
    this.maxContexts = max;
    this.name = opts.name ?? defaults.name;
    this.faults = checkFaults(opts.faults ?? {});
  }

  /** Decodes an artifact of this device's kind; LoadFailed for one it cannot take. */
  protected abstract decode(bytes: Uint8Array): Decoded<C>;

  /**
   * Computes one run: reads every input first (a state may be bound in place) and returns the step
   * that writes the outputs, so nothing is written unless the run completes in time.
   */
  protected abstract compute(ctx: C, loaded: LoadedArtifact, bindings: Bindings): () => void;

  /** Set once a run missed its deadline. */
  get poisoned(): { readonly since: string } | null {
    return this.poison;
  }

  /** Runs that reached the driver. */
  get runs(): number {
    return this.runCount;
  }

  protected usable(): void {
    assertUsable(this, this.dropped);
  }

  /** Loads an artifact into a hardware context. */
  async load(artifact: Artifact): Promise<LoadedArtifact> {
    this.usable();
    if (this.contexts.size >= this.maxContexts) throw new ContextLimit(this.contexts.size + 1, this.maxContexts);
    const n = ++this.loadCount;
    if (loadFails(this.faults, n)) throw new LoadFailed(this.name, `injected fault: load ${n} fails`);
    const target: unknown = artifact?.target;
    if (target !== this.kind) throw new LoadFailed(this.name, `a ${String(target)} artifact does not load on a ${this.kind} device`);
    const d = this.decode(artifact.bytes);
    const args = d.args.map((a) => Object.freeze({ ...a, shape: Object.freeze([...a.shape]) }));
    const loaded: LoadedArtifact = Object.freeze({ target: this.kind, name: d.name, args: Object.freeze(args) });
    this.contexts.set(loaded, d.ctx);
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

  /** Runs a loaded artifact once over its bindings; refusals come before any driver call. */
  async run(loaded: LoadedArtifact, bindings: Bindings, opts: RunOptions): Promise<void> {
    this.usable();
    const ctx = this.contexts.get(loaded);
    if (ctx === undefined) throw new DispatchRefused('foreign-graph', 'the artifact is not loaded on this device');
    checkGrid(opts.grid);
    checkDeadline(opts.deadlineMs);
    checkBindings(loaded.args, bindings, (b, need) => this.memory.sizeOf(b, need));
    const runNumber = ++this.runCount;
    return driverRun({
      faults: this.faults,
      runNumber,
      deadlineMs: opts.deadlineMs,
      compute: () => {
        // A run that outlived a drop or a poisoning by another run has nowhere trustworthy to write.
        this.usable();
        return this.compute(ctx, loaded, bindings);
      },
      onMiss: () => { this.poison = { since: new Date().toISOString() }; },
    });
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

/** A device whose memory lives in this process (the simulators and the CPU device). */
export abstract class JsDevice<C> extends DeviceRules<C, JsMemory> {
  constructor(opts: DeviceBaseOptions, defaults: { readonly name: string; readonly maxContexts: number }) {
    super(opts, defaults, new JsMemory());
  }
}
