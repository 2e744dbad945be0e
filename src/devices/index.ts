/** The device layer: the Device interface, the CPU device, fault injection and openDevice. */
export * from './device.js';
export * from './abi.js';
export * from './faults.js';
export { CpuDevice } from './cpuDevice.js';
export {   openDevice } from './registry.js';
