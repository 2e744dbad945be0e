/**
 * What the engine needs of a device kind (its hardware contexts, how to open its hardware and its
 * simulator), and opening a device from that: shared by the registry's table (registry.ts, every kind
 * imported) and the device worker's loader (load.ts, only the kind it serves).
 */
import type { Device } from './device.js';
import type { FaultOptions } from './faults.js';
import type { DeviceBaseOptions } from './rules.js';

export interface OpenDeviceOptions {
  readonly faults?: FaultOptions;
  /** Ask for the simulator of an NPU; a kind without one (the CPU) ignores this. */
  readonly simulate?: boolean;
  /** Overrides the device's hardware context count (default: its target's). */
  readonly maxContexts?: number;
  readonly name?: string;
  /** Threads of a device that computes on this machine's cores (host). */
  readonly threads?: number;
}

/** What the engine needs of a device kind: how to open its hardware and, where it has one, its simulator. */
export interface DeviceEntry {
  /** Hardware contexts by default: artifacts loaded at once. */
  readonly contexts: number;
  /** The device itself: the hardware, or NoDevice saying why not. */
  open(opts: DeviceBaseOptions): Device;
  /** Its simulator; absent for a kind that computes for real everywhere (the CPU). */
  simulate?(opts: DeviceBaseOptions): Device;
}

/** Opens the device of `e`; the hardware unless the simulator is asked for (never substituted here: 'auto' mode does that). */
export function openEntry(e: DeviceEntry, opts: OpenDeviceOptions = {}): Device {
  const base: DeviceBaseOptions = {
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    maxContexts: opts.maxContexts ?? e.contexts,
    ...(opts.faults !== undefined ? { faults: opts.faults } : {}),
    ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
  };
  return opts.simulate === true && e.simulate !== undefined ? e.simulate(base) : e.open(base);
}
