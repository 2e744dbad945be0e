/**
 * The targets the planner can judge by name. Planning needs only an admission table, no device, so the
 * XDNA2 target plans here before src/targets/index.ts resolves it for running; every other name goes
 * through resolveTarget (UsageError for an unknown name, NoDevice for one with no planner yet).
 */
import { resolveTarget } from '../targets/index.js';
import type { Target } from '../targets/target.js';
import { XDNA2_TARGET } from '../targets/xdna2.js';

/** The target whose admission table plans for `name`. */
export function planningTarget(name: string): Target {
  return name === 'xdna2' ? XDNA2_TARGET : resolveTarget(name);
}
