/** The targets by name. */
import { NoDevice, UsageError } from '../errors.js';
import { CPU_TARGET } from './cpu.js';
import type { Target } from './target.js';
import { TARGET_NAMES, isTargetName } from './target.js';
export * from './target.js';
export { CPU_TARGET } from './cpu.js';

/** The target of a name: UsageError for a name no target has, NoDevice for one this build cannot run yet. */
export function resolveTarget(name: string): Target {
  if (!isTargetName(name)) throw new UsageError(`unknown target ${JSON.stringify(name)}: choose one of ${TARGET_NAMES.join(', ')}`);
  switch (name) {
    case 'cpu': return CPU_TARGET;
    // The XDNA2 and Intel NPU planners, compilers and devices arrive with their own issues.
    case 'xdna2': case 'npu4': throw new NoDevice(name, 'this build has no planner or device for it yet');
  }
}
