/**
 * Every refusal and failure of the engine: one small class per code of the program format's error
 * table (docs/PROGRAM_FORMAT.md), all extending EngineError, by family in this folder. toWire() and
 * fromWire() carry them across worker threads, ports and `--json` output unchanged.
 */
export * from './base.js';
export * from './program.js';
export * from './planning.js';
export * from './device.js';
export * from './actors.js';
export * from './tools.js';
export { ERROR_CLASSES, fromWire, isWireError, type ErrorClass } from './table.js';
export { messageOf } from './message.js';
