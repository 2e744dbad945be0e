/** The compilers by target. */
import type { TargetName } from '../targets/target.js';
import { XDNA2_BACKEND } from './aie/backend.js';
import type { Backend } from './backend.js';
import { CPU_BACKEND } from './cpuBackend.js';
import { NPU4_BACKEND } from './openvino/backend.js';
export type { Backend, CompilerId, UnitPlan } from './backend.js';
export type { WiredArg, Wiring } from './wiring.js';

/** The backend that compiles for a target. */
export function backendOf(target: TargetName): Backend {
  switch (target) {
    case 'cpu': return CPU_BACKEND;
    case 'xdna2': return XDNA2_BACKEND;
    case 'npu4': return NPU4_BACKEND;
  }
}
