/**
 * The recording ABI of a whole-program artifact (documented in device.ts): the binding names and byte
 * sizes a run of a checked program takes. The names are the compiler's (src/compiler/wiring.ts); a
 * device refuses a dispatch that differs from them.
 */
import type { CheckedProgram } from '../ir/checked.js';
import { wholeProgramWiring } from '../compiler/wiring.js';
import type { ArtifactArg } from './device.js';
import { byteSize } from './device.js';

export { resultBinding, stateBinding } from '../compiler/wiring.js';

/** The arguments of a program's artifact: its args (in), its distinct results and new state (out). */
export function programAbi(checked: CheckedProgram): ArtifactArg[] {
  return wholeProgramWiring(checked).map((w) => ({
    name: w.binding, direction: w.direction, dtype: w.dtype, shape: [...w.shape], bytes: byteSize(w.dtype, w.shape),
  }));
}
