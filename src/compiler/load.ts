/**
 * A target's backend, importing only that target's compiler: what the planner and compiler workers use,
 * so that a worker planning or compiling for one target does not load (and compile, at every start of
 * every worker) the modules of the others. The same backends as backendOf's table (compiler/index.ts);
 * test/compiler/load.test.ts checks that they agree for every target.
 */
import type { TargetName } from '../targets/target.js';
import type { Backend } from './backend.js';
import type { CompileOptions } from './index.js';

const LOADERS = {
  cpu: async () => (await import('./cpuBackend.js')).CPU_BACKEND,
  xdna2: async () => (await import('./aie/backend.js')).XDNA2_BACKEND,
  npu4: async () => (await import('./openvino/backend.js')).NPU4_BACKEND,
  host: async (options: CompileOptions) => {
    const m = await import('./host/backend.js');
    return options.hostMatmul === undefined ? m.HOST_BACKEND : m.hostBackend(options.hostMatmul);
  },
} as const satisfies Record<TargetName, (options: CompileOptions) => Promise<Backend>>;

/** The backend that compiles for a target, under `options` (as backendOf), its modules imported on first use. */
export function loadBackend(target: TargetName, options: CompileOptions = {}): Promise<Backend> {
  return LOADERS[target](options);
}
