/**
 * Opens a device by kind. The CPU is always here; the XDNA2 and the Intel NPU need their native addons
 * (or their simulators), which arrive in later issues, so until then they are NoDevice, never a fake.
 */
import { NoDevice } from '../errors.js';
import { CpuDevice } from './cpuDevice.js';
import type { Device, DeviceKind } from './device.js';
import type { FaultOptions } from './faults.js';

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
    case 'npu4':
      throw new NoDevice(kind, opts.simulate ? 'its simulator is not built yet' : 'no native addon in this build');
    default:
      // A kind from untyped input (a CLI flag, JSON) that names no device at all.
      throw new NoDevice(String(kind), 'unknown device kind');
  }
}
