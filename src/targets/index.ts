/** The targets by name. */
import { UsageError } from '../errors/index.js';
import { CPU_TARGET } from './cpu/index.js';
import { HOST_TARGET } from './host/index.js';
import { NPU4_TARGET } from './npu4/index.js';
import type { Target, TargetName } from './target.js';
import { TARGET_NAMES, isTargetName } from './target.js';
import { XDNA2_TARGET } from './xdna2/index.js';
export * from './target.js';
export { CPU_TARGET } from './cpu/index.js';
export { XDNA2_TARGET } from './xdna2/index.js';
export { NPU4_TARGET } from './npu4/index.js';
export { HOST_TARGET } from './host/index.js';

/** Every target's record, by name. */
export const TARGETS = { cpu: CPU_TARGET, xdna2: XDNA2_TARGET, npu4: NPU4_TARGET, host: HOST_TARGET } as const satisfies Record<TargetName, Target>;

/** The target of a name; UsageError for a name no target has. */
export function resolveTarget(name: string): Target {
  if (!isTargetName(name)) throw new UsageError(`unknown target ${JSON.stringify(name)}: choose one of ${TARGET_NAMES.join(', ')}`);
  return TARGETS[name];
}
