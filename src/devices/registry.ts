/**
 * Opens a device by kind. The CPU is always here. The XDNA2 is the native addon over XRT when this
 * build has one (none yet, so NoDevice), or its simulator when asked for by `simulate: true`, which
 * always says so (`simulated: true`). The Intel NPU is the same: NoDevice until its Level Zero addon
 * lands, its simulator (Npu4SimDevice) when asked for.
 */
import { NoDevice } from '../errors.js';
import { CpuDevice } from './cpuDevice.js';
import type { Device, DeviceKind } from './device.js';
import type { FaultOptions } from './faults.js';
import { Xdna2SimDevice } from './xdna2/simDevice.js';
import { Npu4SimDevice } from './npu4/simDevice.js';

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
      // Real hardware takes this place when the XRT addon lands; a simulator is only ever asked for.
      if (!opts.simulate) throw new NoDevice(kind, 'no native addon in this build (pass simulate: true for the simulator)');
      return new Xdna2SimDevice({
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.maxContexts !== undefined ? { maxContexts: opts.maxContexts } : {}),
        ...(opts.faults !== undefined ? { faults: opts.faults } : {}),
      });
    case 'npu4':
      // The Level Zero addon takes this place when it lands; the simulator is only ever asked for.
      if (!opts.simulate) throw new NoDevice(kind, 'no native addon in this build (pass simulate: true for the simulator)');
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
