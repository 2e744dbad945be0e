/**
 * Whether a segment of a partitioned program fits its target's device: the planner hands each
 * segment's program to this (it sits below the compiler, so it cannot ask a backend itself).
 */
import { ContextLimit } from '../errors/index.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { SegmentFitAnswer } from '../planner/partition.js';
import type { TargetName } from '../targets/target.js';
import { backendOf } from './index.js';

/** The bound a segment's layout passes on its target (RegionLimit naming an equation, or ContextLimit), if any, and its contexts. */
export function segmentFit(target: TargetName, segment: CheckedProgram): SegmentFitAnswer {
  const layout = backendOf(target).layout(segment, true);
  const c = layout.contexts;
  if (layout.limit !== undefined) return { error: layout.limit, contexts: c.needed };
  return c.max !== null && c.needed > c.max ? { error: new ContextLimit(c.needed, c.max), contexts: c.needed } : { contexts: c.needed };
}
