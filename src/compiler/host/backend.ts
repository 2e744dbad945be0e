/**
 * The `host` target's compiler and backend. A program compiles to ONE artifact: the program's JSON
 * (its ABI, re-checked at load like a CPU artifact) and its lowering (lower.ts), one kernel list over
 * offsets in one arena, behind the shared frame (magic, version, length, CRC-32). docs/HOST.md.
 */
import { LoadFailed, messageOf } from '../../errors/index.js';
import type { CheckedProgram } from '../../ir/checked.js';
import { parseProgram, programToJson } from '../../ir/codec.js';
import { NO_LIMITS } from '../../ir/limits.js';
import { checkProgram } from '../../ops/validate.js';
import { planProgram } from '../../planner/plan.js';
import { HOST_TARGET } from '../../targets/host/index.js';
import { wholeProgramLayout, type Backend } from '../backend.js';
import { frame, unframe } from '../frame.js';
import { wholeProgramWiring } from '../wiring.js';
import { KERNEL_OPS, type HostMatmulClass } from './kernelList.js';
import { lowerHost, type HostLowered } from './lower.js';

/**
 * The kernel list's op numbering as a short tag (FNV-1a of the names in order): part of the compiler
 * version, so an artifact written by a build that numbers its kernels otherwise (another branch sharing
 * the blob cache) is never read under this build's key.
 */
function abiTag(): string {
  let h = 0x811c9dc5;
  for (const c of KERNEL_OPS.join(',')) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

// Version 4: the rewrites of rewrite.ts (fused attention, rope); an artifact cached by version 3 lists the unfused kernels.
// Version 5: the kernel list gained matmul_wq (the q8-activations class).
// Version 6: a reshape is an alias of its operand's slot (no copy record).
// The kernel list gained attention_f16 (an f16 KV cache): the ABI tag (KERNEL_OPS) changes with it.
// Version 7: the attention records gained kRows (keys [B, N, D], the KV cache's layout since then).
const HOST_COMPILER = { name: 'host-kernels', version: `7-${abiTag()}` } as const;
const HOST_ARTIFACT_MAGIC = 'NPUOHST1';
const HOST_ARTIFACT_VERSION = 1;

/** A loaded host artifact: the checked program and its kernel list. */
export interface HostProgram {
  readonly checked: CheckedProgram;
  readonly lowered: HostLowered;
}

/** Compiles a checked program for `host`; CapabilityMissing for an equation the target refuses. */
export function compileHost(checked: CheckedProgram, matmul: HostMatmulClass = 'exact'): Uint8Array {
  planProgram(checked, HOST_TARGET);
  const l = lowerHost(checked, { matmul });
  const json = { program: programToJson(checked.program), lowered: { ...l, list: Array.from(l.list) } };
  return frame(HOST_ARTIFACT_MAGIC, HOST_ARTIFACT_VERSION, new TextEncoder().encode(JSON.stringify(json)));
}

/** Reads a host artifact back; LoadFailed(device, detail) on any damage. */
export function loadHostArtifact(bytes: Uint8Array, device = 'host'): HostProgram {
  const fail = (detail: string): never => { throw new LoadFailed(device, detail); };
  const framed = unframe(bytes, HOST_ARTIFACT_MAGIC, HOST_ARTIFACT_VERSION, 'a host artifact');
  if ('problem' in framed) return fail(framed.problem);
  let json: { program: unknown; lowered: Omit<HostLowered, 'list'> & { list: number[] } };
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(framed.payload)) as typeof json;
  } catch (e) {
    return fail(`the payload is not JSON: ${messageOf(e)}`);
  }
  let checked: CheckedProgram;
  try {
    checked = checkProgram(parseProgram(json.program, NO_LIMITS), NO_LIMITS);
  } catch (e) {
    return fail(`the program does not check: ${messageOf(e)}`);
  }
  const l = json.lowered;
  if (typeof l?.arenaBytes !== 'number' || !Array.isArray(l.list) || typeof l.slots !== 'object' || !Array.isArray(l.weights) || !Array.isArray(l.constants)) {
    return fail('the kernel list is malformed');
  }
  // The addon checks every record against the arena before running any kernel.
  return { checked, lowered: { ...l, list: Float64Array.from(l.list) } };
}

/**
 * The host backend whose matmuls by a quantized weight are of class `matmul`. The class is a compiler
 * option, so it is part of every artifact's cache identity; the exact class records no option, so its
 * identities are the ones from before the option existed.
 */
export function hostBackend(matmul: HostMatmulClass): Backend {
  if (matmul === 'exact') return HOST_BACKEND;
  return { ...HOST_BACKEND, options: { matmul }, compile: (checked) => compileHost(checked, matmul) };
}

export const HOST_BACKEND: Backend = {
  target: HOST_TARGET,
  compiler: HOST_COMPILER,
  options: {},
  units(checked, plan) {
    return [{ region: { program: programToJson(checked.program), eqns: plan.regions.map((r) => r.eqns) }, wiring: wholeProgramWiring(checked) }];
  },
  layout: wholeProgramLayout,
  compile(checked) {
    return compileHost(checked);
  },
};
