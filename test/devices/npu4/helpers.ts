/**
 * Shared by the NPU4 tests: a program through the NPU4 backend (plan, narrow, write IR, the driver
 * compiler) onto the simulated device, and replayed through a Session.
 */
import type { CheckedProgram } from '../../../src/ir/checked.js';
import type { Tensor } from '../../../src/ir/tensor.js';
import { tensor } from '../../../src/ir/tensor.js';
import type { DType, Shape } from '../../../src/ir/types.js';
import { numel } from '../../../src/ir/types.js';
import { planProgram } from '../../../src/planner/plan.js';
import { NPU4_TARGET } from '../../../src/targets/npu4/index.js';
import { NPU4_BACKEND, irOf } from '../../../src/compiler/openvino/backend.js';
import type { Miscompile } from '../../../src/compiler/openvino/blobFormat.js';
import { compileIrToBlob } from '../../../src/compiler/openvino/vendorCompiler.js';
import { expectedArgs } from '../../../src/compiler/openvino/blobFormat.js';
import { wholeProgramWiring } from '../../../src/compiler/wiring.js';
import { Session } from '../../../src/session/session.js';
import type { Artifact, Device } from '../../../src/devices/device.js';
import { Npu4SimDevice } from '../../../src/devices/npu4/simDevice.js';
import type { StepOutput, TensorMap } from '../../../src/oracle/types.js';
import { roundToDtype } from '../../../src/numerics/float16.js';

/** The NPU4 artifact of a program through the NPU4 backend (or a deliberately wrong driver compiler). */
export function npu4Artifact(checked: CheckedProgram, miscompile?: Miscompile): Artifact {
  const plan = planProgram(checked, NPU4_TARGET);
  if (!miscompile) return { target: 'npu4', bytes: NPU4_BACKEND.compile(checked, plan, 0) };
  const { xml, bin } = irOf(checked);
  return { target: 'npu4', bytes: compileIrToBlob(xml, bin, { expected: expectedArgs(wholeProgramWiring(checked)), miscompile }) };
}

/** Weights, initial state and activation names of a session over `checked`. */
export interface Feeds {
  readonly weights?: TensorMap;
  readonly state?: TensorMap;
}

/** Loads the program on `device` and opens a session over its one graph. */
export async function openSession(device: Device, checked: CheckedProgram, feeds: Feeds = {}): Promise<Session> {
  const loaded = await device.load(npu4Artifact(checked));
  const p = checked.program;
  const [unit] = NPU4_BACKEND.units(checked, planProgram(checked, NPU4_TARGET));
  return Session.open(device, [{ loaded, wiring: unit!.wiring }], {
    weights: feeds.weights ?? {},
    state: feeds.state ?? {},
    activations: p.args.filter((a) => a.role === 'activation').map((a) => a.name),
    stateNext: p.state,
    results: p.results,
  });
}

/** Runs `steps` replays on a fresh simulated NPU4 and returns each step's output. */
export async function runOnNpu4(checked: CheckedProgram, feeds: Feeds, steps: readonly TensorMap[]): Promise<StepOutput[]> {
  const dev = new Npu4SimDevice();
  try {
    const s = await openSession(dev, checked, feeds);
    const out: StepOutput[] = [];
    for (const acts of steps) out.push(await s.replay(acts, checked.program.results, 10_000));
    return out;
  } finally {
    dev.drop();
  }
}

/** A tensor of `dtype` whose elements are `f(i)`, rounded to the dtype. */
export function filled(dtype: DType, shape: Shape, f: (i: number) => number): Tensor {
  return tensor(dtype, shape, Array.from({ length: numel(shape) }, (_, i) => roundToDtype(dtype, f(i))));
}

export { rejection, thrown } from '../helpers.js';
