/**
 * Opens a device by kind. The CPU is always here. The XDNA2 is the native addon over XRT and the Intel
 * NPU the one over Level Zero (src/devices/native.ts): NoDevice when this build has no addon, when the
 * driver finds no device (its answer in the detail), and for now even when it finds one, since load
 * and run are not written yet. Their simulators serve when asked for by `simulate: true`, and always
 * say so (`simulated: true`).
 */
import { NoDevice } from '../errors/index.js';
import { CpuDevice } from './cpuDevice.js';
import type { Device, DeviceKind } from './device.js';
import type { FaultOptions } from './faults.js';
import { Xdna2SimDevice } from './xdna2/simDevice.js';
import { Npu4SimDevice } from './npu4/simDevice.js';
import { openNative } from './native.js';

export interface OpenDeviceOptions {
  readonly faults?: FaultOptions;
  /** Ask for the simulator of an NPU; the CPU is never simulated, so it ignores this. */
  readonly simulate?: boolean;
  /** Overrides the device's hardware context count (the CPU's default is 16). */
  readonly maxContexts?: number;
  readonly name?: string;
}

/** Opens a device of `kind`; NoDevice when this machine (or this build) has none. */
export function openDevice(kind: DeviceKind, opts: OpenDeviceOptions = {}): Device {
  switch (kind) {
    case 'cpu':
      return new CpuDevice({
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.maxContexts !== undefined ? { maxContexts: opts.maxContexts } : {}),
        ...(opts.faults !== undefined ? { faults: opts.faults } : {}),
      });
    case 'xdna2':
      // The hardware unless the simulator is asked for: it is never substituted here ('auto' mode does that).
      if (!opts.simulate) return openNative(kind);
      return new Xdna2SimDevice({
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.maxContexts !== undefined ? { maxContexts: opts.maxContexts } : {}),
        ...(opts.faults !== undefined ? { faults: opts.faults } : {}),
      });
    case 'npu4':
      if (!opts.simulate) return openNative(kind);
      return new Npu4SimDevice({
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.maxContexts !== undefined ? { maxContexts: opts.maxContexts } : {}),
        ...(opts.faults !== undefined ? { faults: opts.faults } : {}),
      });
    default:
      // A kind from untyped input (a CLI flag, JSON) that names no device at all.
      throw new NoDevice(String(kind), 'unknown device kind');
  }
}
