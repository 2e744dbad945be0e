/** The targets by name. */
import { UsageError } from '../errors/index.js';
import { CPU_TARGET } from './cpu.js';
import { NPU4_TARGET } from './npu4.js';
import type { Target } from './target.js';
import { TARGET_NAMES, isTargetName } from './target.js';
import { XDNA2_TARGET } from './xdna2.js';
export * from './target.js';
export { CPU_TARGET } from './cpu.js';
export { XDNA2_TARGET } from './xdna2.js';
export { NPU4_TARGET } from './npu4.js';

/** The target of a name; UsageError for a name no target has. */
export function resolveTarget(name: string): Target {
  if (!isTargetName(name)) throw new UsageError(`unknown target ${JSON.stringify(name)}: choose one of ${TARGET_NAMES.join(', ')}`);
  switch (name) {
    case 'cpu': return CPU_TARGET;
    case 'xdna2': return XDNA2_TARGET;
    case 'npu4': return NPU4_TARGET;
  }
}
