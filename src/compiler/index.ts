/** The compilers by target. */
import type { TargetName } from '../targets/target.js';
import { XDNA2_BACKEND } from './aie/backend.js';
import type { Backend } from './backend.js';
import { CPU_BACKEND } from './cpuBackend.js';
import { HOST_BACKEND, hostBackend } from './host/backend.js';
import type { HostMatmulClass } from './host/kernelList.js';
import { NPU4_BACKEND } from './openvino/backend.js';
export type {  Backend,  Layout, RegionSummary,  } from './backend.js';

/** Every target's backend: a name added to TARGET_NAMES refuses to compile until it has one here. */
const BACKENDS = { cpu: CPU_BACKEND, xdna2: XDNA2_BACKEND, npu4: NPU4_BACKEND, host: HOST_BACKEND } as const satisfies Record<TargetName, Backend>;

/** Options of a compile that some targets take (each part of the artifacts' identity). */
export interface CompileOptions {
  /** host: the class of a matmul by a quantized weight (default 'exact'; docs/HOST.md). */
  readonly hostMatmul?: HostMatmulClass;
}

/** The backend that compiles for a target, under `options`. */
export function backendOf(target: TargetName, options: CompileOptions = {}): Backend {
  if (target === 'host' && options.hostMatmul !== undefined) return hostBackend(options.hostMatmul);
  return BACKENDS[target];
}
