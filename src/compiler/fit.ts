/**
 * Whether a segment of a partitioned program fits its target's device: the planner hands each
 * segment's program to this (it sits below the compiler, so it cannot ask a backend itself).
 */
import { ContextLimit, type EngineError } from '../errors/index.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { TargetName } from '../targets/target.js';
import { backendOf } from './index.js';

/** The bound a segment's layout passes on its target (RegionLimit naming an equation, or ContextLimit), if any. */
export function segmentFit(target: TargetName, segment: CheckedProgram): EngineError | undefined {
  const layout = backendOf(target).layout(segment, true);
  if (layout.limit !== undefined) return layout.limit;
  const c = layout.contexts;
  return c.max !== null && c.needed > c.max ? new ContextLimit(c.needed, c.max) : undefined;
}
