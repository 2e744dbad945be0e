/**
 * The host device: the machine's own CPU through the host_kernels addon. It keeps every device rule
 * (contexts, the exact shape ABI, deadlines and poisoning, fault injection) through DeviceRules, holds
 * its buffers in this process (JsMemory), and replays one step as ONE runList call over one arena: the
 * inputs are copied into their slots, the kernel list runs without JavaScript between kernels, and the
 * results are copied out. Opening it where the addon is not built answers NoDevice saying why and how.
 */
import { loadHostArtifact, type HostProgram } from '../../compiler/host/backend.js';
import { resultBinding, stateBinding } from '../../compiler/wiring.js';
import { HOST_TARGET } from '../../targets/host/index.js';
import { programAbi } from '../abi.js';
import type { Bindings, LoadedArtifact } from '../device.js';
import type { DeviceBaseOptions, Decoded } from '../rules.js';
import { JsDevice } from '../rules.js';
import { loadHostKernels, type HostKernels, type HostWeight } from './native.js';

export class HostDevice extends JsDevice<HostProgram> {
  readonly kind = 'host' as const;
  readonly simulated = false;
  readonly kernels: HostKernels;

  /** NoDevice('host', why and how to build it) when the addon is not built or does not load. */
  constructor(opts: DeviceBaseOptions = {}, kernels: HostKernels = loadHostKernels()) {
    super(opts, { name: 'host', maxContexts: HOST_TARGET.contexts });
    this.kernels = kernels;
  }

  protected decode(bytes: Uint8Array): Decoded<HostProgram> {
    const p = loadHostArtifact(bytes, this.name);
    return { name: p.checked.program.name, args: programAbi(p.checked), ctx: p };
  }

  protected compute(p: HostProgram, loaded: LoadedArtifact, bindings: Bindings): () => void {
    const { checked, lowered } = p;
    const sizeOf = (name: string): number => loaded.args.find((a) => a.name === name)!.bytes;
    const arena = new Uint8Array(lowered.arenaBytes);
    const dv = new DataView(arena.buffer);
    for (const [at, dtype, v] of lowered.constants) {
      if (dtype === 'i32') dv.setInt32(at, v, true);
      else dv.setFloat32(at, v, true);
    }
    for (const a of checked.program.args) {
      const slot = lowered.slots[a.name];
      if (slot !== undefined) arena.set(this.memory.view(bindings[a.name]!, sizeOf(a.name)), slot);
    }
    const weights: HostWeight[] = lowered.weights.map((w) =>
      this.kernels.weightFromBytes(this.memory.view(bindings[w.name]!, sizeOf(w.name)), w.type, w.k, w.n));
    try {
      this.kernels.run(arena, lowered.list, weights);
    } finally {
      for (const w of weights) w.close();
    }
    const outs: [string, string][] = [...new Set(checked.program.results)].map((r) => [resultBinding(r), r]);
    for (const [arg, next] of Object.entries(checked.program.state)) outs.push([stateBinding(arg), next]);
    const views = outs.map(([binding, value]) => {
      const n = sizeOf(binding);
      return [this.memory.view(bindings[binding]!, n), arena.subarray(lowered.slots[value]!, lowered.slots[value]! + n)] as const;
    });
    return () => { for (const [view, bytes] of views) view.set(bytes); };
  }
}
