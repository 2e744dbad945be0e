/** The compiler pool's task: one unit of one program (JSON form) for one target, to artifact bytes. */
import type { CompileOptions } from '../compiler/index.js';
import { loadBackend } from '../compiler/load.js';
import { parseProgram } from '../ir/codec.js';
import { checkProgram } from '../ops/validate.js';
import { NO_LIMITS } from '../ir/limits.js';
import { planProgram } from '../planner/plan.js';
import { resolveTarget } from '../targets/index.js';
import { transfer } from './transfer.js';

export interface CompileTask {
  readonly target: string;
  readonly programJson: unknown;
  /** Which of the backend's units to compile. */
  readonly unit: number;
  /** The compile's options (as the planner's, which put them in the identity). */
  readonly options?: CompileOptions;
}

/** Compiles one unit (importing only its target's backend); the result's buffer is transferred, not copied. */
export async function compileTask(task: CompileTask): Promise<Uint8Array> {
  const t = resolveTarget(task.target);
  // The planner checked the program under the engine's limits; the defaults must not refuse it here.
  const checked = checkProgram(parseProgram(task.programJson, NO_LIMITS), NO_LIMITS);
  const bytes = (await loadBackend(t.name, task.options ?? {})).compile(checked, planProgram(checked, t), task.unit);
  const out = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
  return transfer(out, [out.buffer as ArrayBuffer]);
}
