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
import type { FaultOptions } from './faults.js';
import { openNative } from './native.js';
import { Npu4SimDevice } from './npu4/simDevice.js';
import type { DeviceBaseOptions } from './rules.js';
import { Xdna2SimDevice } from './xdna2/simDevice.js';

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

/** True when `kind` has a simulator (the NPUs); the CPU computes for real in every mode. */
export function hasSimulator(kind: DeviceKind): boolean {
  return entryOf(kind).simulate !== undefined;
}

/** Opens a device of `kind`; NoDevice when this machine (or this build) has none. */
export function openDevice(kind: DeviceKind, opts: OpenDeviceOptions = {}): Device {
  const e = entryOf(kind);
  const base: DeviceBaseOptions = {
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    maxContexts: opts.maxContexts ?? e.contexts,
    ...(opts.faults !== undefined ? { faults: opts.faults } : {}),
    ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
  };
  // The hardware unless the simulator is asked for: it is never substituted here ('auto' mode does that).
  return opts.simulate === true && e.simulate !== undefined ? e.simulate(base) : e.open(base);
}
