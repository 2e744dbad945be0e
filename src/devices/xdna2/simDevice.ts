/**
 * The simulated XDNA2 NPU. It executes the ARTIFACT, not the program: it decodes the manifest the
 * region compiler linked (src/compiler/aie/artifact.ts), takes one hardware context per loaded
 * artifact, and runs each core serialized, in order, with the core's own arithmetic (coreMath.ts):
 * operands come from host arena slots (the bound arguments, as bytes at their offsets), from ObjectFifos
 * (the bytes an earlier core of the region wrote) or from literals; results go to fifos or host slots.
 * Values stay raw little-endian bytes from end to end, so a pattern the cores only move survives.
 *
 * Failures are the documents' (docs "Failure behavior") and the Device interface's: a damaged artifact,
 * one past the measured region bounds or one with a core no kernel implements is LoadFailed; a 17th
 * context is ContextLimit; dispatch refusals (foreign-graph, grid-launch, shape-abi, not-an-argument)
 * come before any driver call and are not counted as runs; a run that misses its deadline poisons the
 * device and keeps everything allocated until drop(). Fault injection and deadlines are the CpuDevice's
 * (faults.ts driverRun), so the engine meets the same failures here as on the CPU.
 */
import { ContextLimit, DispatchRefused, LoadFailed } from '../../errors.js';
import type { AieManifest } from '../../compiler/aie/artifact.js';
import type { ArenaId, Artifact, Bindings, BufferId, Device, LiveResources, LoadedArtifact, RunOptions } from '../device.js';
import { assertUsable, checkBindings, checkGrid } from '../device.js';
import type { FaultOptions } from '../faults.js';
import { checkDeadline, checkFaults, driverRun, loadFails } from '../faults.js';
import { DeviceMemory } from '../memory.js';
import type { CoreMath } from './coreMath.js';
import { CORE_MATH } from './coreMath.js';
import type { CoreStep } from './cores.js';
import { planCores } from './cores.js';
import { decodeManifest } from './decode.js';
import type { CoreValue } from './kernels.js';

export interface Xdna2SimOptions {
  readonly name?: string;
  /** Hardware contexts (default 16, the XDNA2's). */
  readonly maxContexts?: number;
  readonly faults?: FaultOptions;
  /** The core's arithmetic; another CoreMath models another (or a deliberately broken) core. */
  readonly math?: CoreMath;
}

export const XDNA2_CONTEXTS = 16;

interface Context {
  readonly manifest: AieManifest;
  readonly steps: readonly CoreStep[];
}

export class Xdna2SimDevice implements Device {
  readonly kind = 'xdna2' as const;
  readonly simulated = true;
  readonly name: string;
  readonly maxContexts: number;
  private readonly faults: FaultOptions;
  private readonly math: CoreMath;
  private readonly memory = new DeviceMemory();
  private readonly contexts = new Map<LoadedArtifact, Context>();
  // Every artifact this device ever loaded, so unloading one twice is told from unloading a foreign one.
  private readonly everLoaded = new WeakSet<LoadedArtifact>();
  private poison: { readonly since: string } | null = null;
  private dropped = false;
  private loadCount = 0;
  private runCount = 0;

  constructor(opts: Xdna2SimOptions = {}) {
    const max = opts.maxContexts ?? XDNA2_CONTEXTS;
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`maxContexts must be a whole number >= 1, got ${String(max)}`);
    this.maxContexts = max;
    this.name = opts.name ?? 'xdna2-sim';
    this.faults = checkFaults(opts.faults ?? {});
    this.math = opts.math ?? CORE_MATH;
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

  /** Loads an XDNA2 artifact into a hardware context. */
  async load(artifact: Artifact): Promise<LoadedArtifact> {
    this.usable();
    if (this.contexts.size >= this.maxContexts) throw new ContextLimit(this.contexts.size + 1, this.maxContexts);
    const n = ++this.loadCount;
    if (loadFails(this.faults, n)) throw new LoadFailed(this.name, `injected fault: load ${n} fails`);
    const target: unknown = artifact?.target;
    if (target !== 'xdna2') throw new LoadFailed(this.name, `a ${String(target)} artifact does not load on the XDNA2`);
    const manifest = decodeManifest(artifact.bytes, this.name);
    const steps = planCores(manifest, this.name);
    const args = manifest.args.map((a) => Object.freeze({
      name: a.name, direction: a.direction, dtype: a.dtype, shape: Object.freeze([...a.shape]), bytes: a.bytes,
    }));
    const loaded: LoadedArtifact = Object.freeze({ target: 'xdna2', name: manifest.program, args: Object.freeze(args) });
    this.contexts.set(loaded, { manifest, steps });
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

  /** Runs a loaded artifact once over its bindings: every core, in order. */
  async run(loaded: LoadedArtifact, bindings: Bindings, opts: RunOptions): Promise<void> {
    this.usable();
    const ctx = this.contexts.get(loaded);
    if (!ctx) throw new DispatchRefused('foreign-graph', 'the artifact is not loaded on this device');
    checkGrid(opts.grid);
    checkDeadline(opts.deadlineMs);
    checkBindings(loaded.args, bindings, (b, need) => this.memory.sizeOf(b, need));
    const runNumber = ++this.runCount;
    return driverRun({
      faults: this.faults,
      runNumber,
      deadlineMs: opts.deadlineMs,
      compute: () => this.compute(ctx, bindings),
      onMiss: () => { this.poison = { since: new Date().toISOString() }; },
    });
  }

  // Reads every input argument first (a state may be bound in place), runs the cores, and returns the
  // step that writes the host outputs, so nothing is written unless the run completes in time.
  private compute(ctx: Context, bindings: Bindings): () => void {
    // A run that outlived a drop or a poisoning by another run has nowhere trustworthy to write.
    this.usable();
    const host = new Map<string, Uint8Array>();
    for (const a of ctx.manifest.args) {
      if (a.direction === 'in') host.set(a.name, this.memory.view(bindings[a.name]!, a.bytes).slice());
    }
    const fifos = new Map<number, Uint8Array>();
    const outs = new Map<string, Uint8Array>();
    for (const step of ctx.steps) {
      const ins: CoreValue[] = step.sources.map((s, j) => {
        const t = step.core.inTypes[j]!;
        let bytes: Uint8Array;
        if (s.kind === 'literal') bytes = s.bytes;
        else if (s.kind === 'fifo') bytes = fifos.get(s.fifo)!;
        else bytes = host.get(s.arg.name) ?? this.memory.view(bindings[s.arg.name]!, s.arg.bytes).slice();
        return { dtype: t.dtype, shape: t.shape, bytes };
      });
      const results = step.compute(this.math, ins);
      step.sinks.forEach((k, j) => {
        const bytes = results[j]!;
        if (k.fifo !== undefined) fifos.set(k.fifo, bytes);
        if (k.kind === 'host') {
          host.set(k.arg.name, bytes);
          outs.set(k.arg.name, bytes);
        }
      });
    }
    const views = [...outs].map(([name, bytes]) => {
      const arg = ctx.manifest.args.find((a) => a.name === name && a.direction === 'out')!;
      if (bytes.length !== arg.bytes) throw new Error(`core output ${name} is ${bytes.length} bytes, its argument ${arg.bytes}`);
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
