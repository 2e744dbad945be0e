/** The compilers by target. */
import { NoDevice } from '../errors.js';
import type { TargetName } from '../targets/target.js';
import type { Backend } from './backend.js';
import { CPU_BACKEND } from './cpuBackend.js';
export type { Backend, CompilerId, UnitPlan } from './backend.js';
export type { WiredArg, Wiring } from './wiring.js';

/** The backend of a target; NoDevice for a target this build cannot compile for yet. */
export function backendOf(target: TargetName): Backend {
  switch (target) {
    case 'cpu': return CPU_BACKEND;
    case 'xdna2': case 'npu4': throw new NoDevice(target, 'this build has no compiler for it yet');
  }
}
