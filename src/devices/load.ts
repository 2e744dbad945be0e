/**
 * A device kind's entry (as the registry's, registry.ts), importing only that kind's modules: what the
 * device worker uses, so that a worker serving the CPU does not load (and compile, at every start) the
 * simulators and the host device. test/devices/load.test.ts checks that it opens what openDevice opens.
 */
import { NoDevice } from '../errors/index.js';
import type { DeviceKind } from './device.js';
import type { DeviceEntry } from './entry.js';

const LOADERS = {
  cpu: async () => {
    const [{ CPU_TARGET }, { CpuDevice }] = await Promise.all([import('../targets/cpu/index.js'), import('./cpuDevice.js')]);
    return { contexts: CPU_TARGET.contexts, open: (o) => new CpuDevice(o) };
  },
  xdna2: async () => {
    const [{ XDNA2_TARGET }, { openNative }, { Xdna2SimDevice }] = await Promise.all([
      import('../targets/xdna2/index.js'), import('./native.js'), import('./xdna2/simDevice.js'),
    ]);
    return { contexts: XDNA2_TARGET.contexts, open: () => openNative('xdna2'), simulate: (o) => new Xdna2SimDevice(o) };
  },
  npu4: async () => {
    const [{ NPU4_TARGET }, { openNative }, { Npu4SimDevice }] = await Promise.all([
      import('../targets/npu4/index.js'), import('./native.js'), import('./npu4/simDevice.js'),
    ]);
    return { contexts: NPU4_TARGET.contexts, open: () => openNative('npu4'), simulate: (o) => new Npu4SimDevice(o) };
  },
  host: async () => {
    const [{ HOST_TARGET }, { HostDevice }] = await Promise.all([import('../targets/host/index.js'), import('./host/device.js')]);
    return { contexts: HOST_TARGET.contexts, open: (o) => new HostDevice(o) };
  },
} as const satisfies Record<DeviceKind, () => Promise<DeviceEntry>>;

/** The entry of `kind`, its modules imported on first use; NoDevice for a kind no device has. */
export function loadDeviceEntry(kind: DeviceKind): Promise<DeviceEntry> {
  // A kind from untyped input (workerData) may name no device at all.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-conversion -- the type says DeviceKind; at run time it may be anything
  if (!Object.hasOwn(LOADERS, kind)) return Promise.reject(new NoDevice(String(kind), 'unknown device kind'));
  return LOADERS[kind]();
}
