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
import type { AieManifest } from '../../compiler/aie/artifact.js';
import type { DeviceBaseOptions, Decoded } from '../rules.js';
import { JsDevice } from '../rules.js';
import type { Bindings, LoadedArtifact } from '../device.js';
import type { CoreMath } from './coreMath.js';
import { CORE_MATH } from './coreMath.js';
import type { CoreStep } from './cores.js';
import { planCores } from './cores.js';
import { decodeManifest } from './decode.js';
import type { CoreValue } from './kernels.js';
import { XDNA2_TARGET } from '../../targets/xdna2/index.js';

export interface Xdna2SimOptions extends DeviceBaseOptions {
  /** The core's arithmetic; another CoreMath models another (or a deliberately broken) core. */
  readonly math?: CoreMath;
}

interface Context {
  readonly manifest: AieManifest;
  readonly steps: readonly CoreStep[];
}

export class Xdna2SimDevice extends JsDevice<Context> {
  readonly kind = 'xdna2' as const;
  readonly simulated = true;
  private readonly math: CoreMath;

  constructor(opts: Xdna2SimOptions = {}) {
    super(opts, { name: 'xdna2-sim', maxContexts: XDNA2_TARGET.contexts });
    this.math = opts.math ?? CORE_MATH;
  }

  protected decode(bytes: Uint8Array): Decoded<Context> {
    const manifest = decodeManifest(bytes, this.name);
    const steps = planCores(manifest, this.name);
    const args = manifest.args.map((a) => ({ name: a.name, direction: a.direction, dtype: a.dtype, shape: a.shape, bytes: a.bytes }));
    return { name: manifest.program, args, ctx: { manifest, steps } };
  }

  // Reads every input argument first (a state may be bound in place), runs the cores, and returns the
  // step that writes the host outputs, so nothing is written unless the run completes in time.
  protected compute(ctx: Context, _loaded: LoadedArtifact, bindings: Bindings): () => void {
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
}
