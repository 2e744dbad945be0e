/**
 * The devices by kind, as one table: each kind's hardware (a native addon: src/devices/native.ts), its
 * simulator where it has one, and its hardware contexts (from its target's record). The CPU is always
 * here and is no simulator: it computes the oracle's results itself. The XDNA2 is the native addon over
 * XRT and the Intel NPU the one over Level Zero: NoDevice when this build has no addon, when the driver
 * finds no device (its answer in the detail), and for now even when it finds one, since load and run
 * are not written yet. Their simulators serve when asked for by `simulate: true`, and always say so
 * (`simulated: true`).
 */
import { NoDevice } from '../errors/index.js';
import { TARGETS } from '../targets/index.js';
import { CpuDevice } from './cpuDevice.js';
import { HostDevice } from './host/device.js';
import type { Device, DeviceKind } from './device.js';
import { openEntry, type DeviceEntry, type OpenDeviceOptions } from './entry.js';
import { openNative } from './native.js';
import { Npu4SimDevice } from './npu4/simDevice.js';
import { Xdna2SimDevice } from './xdna2/simDevice.js';

export const DEVICES = {
  cpu: { contexts: TARGETS.cpu.contexts, open: (o) => new CpuDevice(o) },
  xdna2: { contexts: TARGETS.xdna2.contexts, open: () => openNative('xdna2'), simulate: (o) => new Xdna2SimDevice(o) },
  npu4: { contexts: TARGETS.npu4.contexts, open: () => openNative('npu4'), simulate: (o) => new Npu4SimDevice(o) },
  // The machine's own CPU: no simulator, it computes for real (NoDevice where the addon is not built).
  host: { contexts: TARGETS.host.contexts, open: (o) => new HostDevice(o) },
} as const satisfies Record<DeviceKind, DeviceEntry>;

function entryOf(kind: DeviceKind): DeviceEntry {
  // A kind from untyped input (a CLI flag, JSON) may name no device at all.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-conversion -- the type says DeviceKind; at run time it may be anything
  if (!Object.hasOwn(DEVICES, kind)) throw new NoDevice(String(kind), 'unknown device kind');
  return DEVICES[kind];
}

/** Opens a device of `kind`; NoDevice when this machine (or this build) has none. */
export function openDevice(kind: DeviceKind, opts: OpenDeviceOptions = {}): Device {
  return openEntry(entryOf(kind), opts);
}
