/** The device layer: the Device interface, the CPU device, fault injection and openDevice. */
export * from './device.js';
export * from './abi.js';
export * from './faults.js';
export { JsMemory } from './memory.js';
export { DeviceRules, JsDevice } from './rules.js';
export type { DeviceBaseOptions, Decoded } from './rules.js';
export { CpuDevice } from './cpuDevice.js';
export type { CpuDeviceOptions } from './cpuDevice.js';
export { DEVICES, hasSimulator, openDevice } from './registry.js';
export type { DeviceEntry, OpenDeviceOptions } from './registry.js';
