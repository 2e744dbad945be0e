/**
 * The CPU target's compiler. The CPU device runs the oracle itself, so its artifact is the checked
 * program's JSON behind a small header; loading re-parses and re-checks it, so an artifact is never
 * trusted more than a program file would be.
 *
 * Layout, little-endian:
 *   0   8 bytes  magic 'NPUOCPU1'
 *   8   u32      format version (CPU_ARTIFACT_VERSION)
 *   12  u32      payload byte length
 *   16  u32      CRC-32 (IEEE) of the payload
 *   20  payload  UTF-8 program@1 JSON (programToJson)
 * The CRC catches damage that still parses (a flipped digit in a literal), which re-checking cannot.
 */
import { LoadFailed, messageOf } from '../errors/index.js';
import type { CheckedProgram } from '../ir/checked.js';
import { parseProgram, programToJson } from '../ir/codec.js';
import { checkProgram } from '../ops/validate.js';
import { NO_LIMITS } from '../ir/limits.js';
import { planProgram } from '../planner/plan.js';
import { CPU_TARGET } from '../targets/cpu/index.js';
import { frame, unframe } from './frame.js';

/**
 * A CPU artifact. It is structurally the devices' Artifact: the compiler sits above devices in the
 * layering and may not import them, so it names its own type instead.
 */
export interface CpuArtifact {
  readonly target: 'cpu';
  readonly bytes: Uint8Array;
}

/** The compiler identity recorded in cache keys. */
export const CPU_COMPILER = { name: 'cpu-oracle', version: '1' } as const;

const CPU_ARTIFACT_MAGIC = 'NPUOCPU1';
const CPU_ARTIFACT_VERSION = 1;

/** Compiles a checked program for the CPU target; CapabilityMissing for an op the target does not admit. */
export function compileCpu(checked: CheckedProgram): CpuArtifact {
  // The planner's admission is the only judge of what a target runs; compiling past it would let an
  // all_reduce reach a single device.
  planProgram(checked, CPU_TARGET);
  const payload = new TextEncoder().encode(JSON.stringify(programToJson(checked.program)));
  return { target: 'cpu', bytes: frame(CPU_ARTIFACT_MAGIC, CPU_ARTIFACT_VERSION, payload) };
}

/** Reads a CPU artifact back into a checked program; LoadFailed(device, detail) on any damage. */
export function loadCpuArtifact(bytes: Uint8Array, device = 'cpu'): CheckedProgram {
  const fail = (detail: string): never => { throw new LoadFailed(device, detail); };
  const framed = unframe(bytes, CPU_ARTIFACT_MAGIC, CPU_ARTIFACT_VERSION, 'a CPU artifact');
  if ('problem' in framed) return fail(framed.problem);
  const payload = framed.payload;
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
  } catch (e) {
    return fail(`the payload is not JSON: ${messageOf(e)}`);
  }
  try {
    // Compiled from a program checked under the engine's limits, whatever they were.
    return checkProgram(parseProgram(json, NO_LIMITS), NO_LIMITS);
  } catch (e) {
    // A checksummed payload that no longer checks was written by another build: still a load failure.
    return fail(`the program does not check: ${messageOf(e)}`);
  }
}
