/**
 * A device with one deliberately wrong kernel, for the negative controls of contract verification (a
 * check that cannot fail proves nothing). It wraps a real device and, after each run of the named graph,
 * rewrites that graph's float outputs through `fault`: what a wrong kernel on the NPU would hand back.
 * Everything else (loading, buffers, range checks, other graphs) is the inner device's.
 *
 * @internal
 */
import { tensorFromBytes, tensorToBytes } from '../ir/bytes.js';
import { isFloat } from '../ir/types.js';
import type { Bindings, Device, LoadedArtifact, RunOptions } from '../devices/device.js';
import { isArenaSlot, wrapDevice } from '../devices/device.js';

export interface KernelFault {
  /** The graph whose kernel is wrong: its program's name (contract programs are `npu4-contract-<op>`). */
  readonly graph: string;
  /** The wrong kernel's result where the right one gives `x` (element `i` of the output). */
  readonly fault: (x: number, i: number) => number;
}

/** `inner` with the kernel of one graph replaced by a wrong one (see the file's doc). */
export function withKernelFault(inner: Device, f: KernelFault): Device {
  return wrapDevice(inner, {
    name: `${inner.name} (wrong kernel in ${f.graph})`,
    async run(loaded: LoadedArtifact, bindings: Bindings, opts: RunOptions): Promise<void> {
      await inner.run(loaded, bindings, opts);
      if (loaded.name !== f.graph) return;
      for (const a of loaded.args) {
        const b = bindings[a.name];
        if (a.direction !== 'out' || !isFloat(a.dtype) || b === undefined) continue;
        const [target, offset] = isArenaSlot(b) ? [b.arena, b.offset] : [b, 0];
        const t = tensorFromBytes(a.dtype, a.shape, inner.read(target, offset, a.bytes));
        inner.write(target, offset, tensorToBytes({ ...t, data: t.data.map((x, i) => f.fault(x, i)) }));
      }
    },
  });
}
