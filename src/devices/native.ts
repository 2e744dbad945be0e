/**
 * The native addons (src/native/, built by `npm run build:native` into build/Release/), loaded through
 * createRequire(import.meta.url) from this package's own build/ (resolved from this file, never from
 * the working directory, so the library embeds unchanged). Each addon is handed the NoDevice class
 * once, at load, so a driver's failure arrives already typed, carrying the driver's own answer.
 *
 * A build without the addon file answers NoDevice saying so, and the simulators serve in 'auto' mode.
 * A driver that does report devices still gets NoDevice here: load, buffers and run are not written
 * yet (there is no hardware to check them against), and a result is never faked.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NoDevice } from '../errors/index.js';
import type { DeviceKind } from './device.js';

/** The device kinds served by an NPU driver's addon (the host kernels have their own loader: host/native.ts). */
export type NativeKind = Exclude<DeviceKind, 'cpu' | 'host'>;

/** The static side of an addon's device class (src/native/xrtDevice.h, zeDevice.h). */
interface NativeDeviceClass {
  /** The number of devices the driver reports; throws NoDevice, with the driver's answer, for none. */
  probe(): number;
}

interface NativeAddon {
  setErrorClasses(classes: { readonly NoDevice: typeof NoDevice }): void;
  readonly [cls: string]: unknown;
}

const ADDONS = {
  xdna2: { file: 'xrt_device.node', cls: 'XrtDevice' },
  npu4: { file: 'ze_device.node', cls: 'ZeDevice' },
} as const satisfies Record<NativeKind, { readonly file: string; readonly cls: string }>;

/** @internal This package's build/Release/: this file sits in dist/src/devices/, three below the root. */
export const NATIVE_BUILD_DIR = fileURLToPath(new URL('../../../build/Release/', import.meta.url));

const require = createRequire(import.meta.url);
const loaded = new Map<string, NativeDeviceClass>();

/** @internal The device class of `kind`'s addon in `dir`, loaded once; NoDevice when absent or unloadable. */
export function nativeClass(kind: NativeKind, dir: string = NATIVE_BUILD_DIR): NativeDeviceClass {
  const { file, cls } = ADDONS[kind];
  const path = join(dir, file);
  const hit = loaded.get(path);
  if (hit) return hit;
  if (!existsSync(path)) throw new NoDevice(kind, 'no native addon in this build (npm run build:native)');
  let addon: NativeAddon;
  try {
    addon = require(path) as NativeAddon;
  } catch (e) {
    // A build whose SDK libraries were removed since, or built for another platform.
    throw new NoDevice(kind, `native addon ${file} does not load: ${e instanceof Error ? e.message : String(e)}`);
  }
  const c = addon[cls] as NativeDeviceClass | undefined;
  if (typeof addon.setErrorClasses !== 'function' || typeof c?.probe !== 'function') {
    throw new NoDevice(kind, `native addon ${file} is not this version's (rebuild: npm run build:native)`);
  }
  addon.setErrorClasses({ NoDevice });
  loaded.set(path, c);
  return c;
}

/** Asks the driver how many devices of `kind` it has; NoDevice, with the driver's answer, when none. */
export function probeNative(kind: NativeKind, dir?: string): number {
  return nativeClass(kind, dir).probe();
}

/** Opens the hardware of `kind`: NoDevice, always for now (see the file's doc), with the reason. */
export function openNative(kind: NativeKind): never {
  const n = probeNative(kind);
  throw new NoDevice(kind, `the driver reports ${n} device${n === 1 ? '' : 's'}, but this build cannot drive one yet (load, buffers and run are not implemented)`);
}
