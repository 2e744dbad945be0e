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
import { tensorFromBytes, tensorToBytes } from '../../ir/bytes.js';
import type { Tensor } from '../../ir/tensor.js';
import { elementDtype } from '../../ir/types.js';
import { F16_MAX } from '../../numerics/float16.js';
import type { CompiledBlob } from '../../compiler/openvino/blobFormat.js';
import type { DeviceBaseOptions, Decoded } from '../rules.js';
import { JsDevice } from '../rules.js';
import type { ArtifactArg, Bindings, LoadedArtifact } from '../device.js';
import { byteSize } from '../device.js';
import { checkArguments } from './argCheck.js';
import { checkArgumentLayers, decodeBlob } from './blob.js';
import { runGraph } from './executor.js';
import { NPU4_TARGET } from '../../targets/npu4/index.js';

export type Npu4SimOptions = DeviceBaseOptions;

export class Npu4SimDevice extends JsDevice<CompiledBlob> {
  readonly kind = 'npu4' as const;
  readonly simulated = true;
  /** FP16's largest finite magnitude: the range the narrowing contract was measured on. */
  readonly narrowing = { maxMagnitude: F16_MAX } as const;

  constructor(opts: Npu4SimOptions = {}) {
    super(opts, { name: 'npu4-sim', maxContexts: NPU4_TARGET.contexts });
  }

  /** Decodes a blob after checking its graph's arguments against the program's. */
  protected decode(bytes: Uint8Array): Decoded<CompiledBlob> {
    const blob = decodeBlob(bytes, this.name);
    checkArguments(blob.graph.expected, blob.graph.args);
    checkArgumentLayers(blob, this.name);
    const args: ArtifactArg[] = [...blob.graph.args].sort((a, b) => a.order - b.order).map((a) => ({
      name: a.name, direction: a.direction === 'parameter' ? 'in' : 'out', dtype: a.precision,
      shape: [...a.dims], bytes: byteSize(a.precision, a.dims),
    }));
    return { name: blob.graph.name, args, ctx: blob };
  }

  // Reads every parameter, runs the graph, and returns the writes of its results, so nothing is written
  // unless the replay completes in time (and an in-place state is read before it is overwritten).
  protected compute(blob: CompiledBlob, loaded: LoadedArtifact, bindings: Bindings): () => void {
    const params = new Map<string, Tensor>();
    for (const a of loaded.args) {
      if (a.direction === 'in') params.set(a.name, tensorFromBytes(elementDtype(a.dtype, `NPU4 parameter ${a.name}`), a.shape, this.memory.view(bindings[a.name]!, a.bytes)));
    }
    const results = runGraph(blob, params);
    const writes = loaded.args.filter((a) => a.direction === 'out').map((a) => {
      const t = results.get(a.name);
      if (!t) throw new Error(`the graph computed no value for ${a.name}`);
      return [this.memory.view(bindings[a.name]!, a.bytes), tensorToBytes({ ...t, dtype: elementDtype(a.dtype, `NPU4 result ${a.name}`) })] as const;
    });
    return () => { for (const [view, bytes] of writes) view.set(bytes); };
  }
}
