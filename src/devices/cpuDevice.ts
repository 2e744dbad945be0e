/**
 * The CPU device: the oracle behind the Device interface. It is not a simulator (it really computes),
 * but it keeps the hardware's rules (contexts, exact shape ABI, serialized cores, deadlines and
 * poisoning) so that the engine meets the same failures on it as on an NPU, and it takes the same
 * fault injection as the simulated devices.
 */
import { loadCpuArtifact } from '../compiler/cpu.js';
import type { CheckedProgram } from '../ir/checked.js';
import { heldFromBytes, tensorFromBytes, tensorToBytes } from '../ir/bytes.js';
import type { HeldTensor, Tensor } from '../ir/tensor.js';
import { elementDtype } from '../ir/types.js';
import { runStep } from '../oracle/index.js';
import { programAbi, resultBinding, stateBinding } from './abi.js';
import type { DeviceBaseOptions, Decoded } from './rules.js';
import { JsDevice } from './rules.js';
import type { Bindings, LoadedArtifact } from './device.js';
import { CPU_TARGET } from '../targets/cpu/index.js';

export type CpuDeviceOptions = DeviceBaseOptions;

export class CpuDevice extends JsDevice<CheckedProgram> {
  readonly kind = 'cpu' as const;
  readonly simulated = false;

  constructor(opts: CpuDeviceOptions = {}) {
    super(opts, { name: 'cpu', maxContexts: CPU_TARGET.contexts });
  }

  protected decode(bytes: Uint8Array): Decoded<CheckedProgram> {
    const checked = loadCpuArtifact(bytes, this.name);
    return { name: checked.program.name, args: programAbi(checked), ctx: checked };
  }

  // Reads every input, runs the oracle, and returns the writes of the outputs.
  protected compute(checked: CheckedProgram, loaded: LoadedArtifact, bindings: Bindings): () => void {
    const weights: Record<string, HeldTensor> = {};
    const state: Record<string, Tensor> = {};
    const activations: Record<string, Tensor> = {};
    for (const a of checked.program.args) {
      // A quantized weight stays its blocks (a view of the buffer: the run reads it before anything is written).
      const bytes = this.memory.view(bindings[a.name]!, loaded.args.find((x) => x.name === a.name)!.bytes);
      if (a.role === 'weight') weights[a.name] = heldFromBytes(a.dtype, a.shape, bytes);
      else (a.role === 'state' ? state : activations)[a.name] = tensorFromBytes(elementDtype(a.dtype, `${a.role} ${a.name}`), a.shape, bytes);
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
}

function bytesOf(t: Tensor | undefined, name: string): Uint8Array {
  if (!t) throw new Error(`the oracle returned no value for ${name}`);
  return tensorToBytes(t);
}
