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
import { LoadFailed } from '../errors.js';
import type { CheckedProgram } from '../ir/checked.js';
import { parseProgram, programToJson } from '../ir/codec.js';
import { checkProgram } from '../ir/validate.js';
import { planProgram } from '../planner/plan.js';
import { CPU_TARGET } from '../targets/cpu.js';

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

export const CPU_ARTIFACT_MAGIC = 'NPUOCPU1';
export const CPU_ARTIFACT_VERSION = 1;
const HEADER_BYTES = 20;

let crcTable: Uint32Array | undefined;
/** CRC-32 (IEEE 802.3, as zlib) of `bytes`. */
export function crc32(bytes: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const b of bytes) crc = crcTable[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Compiles a checked program for the CPU target; CapabilityMissing for an op the target does not admit. */
export function compileCpu(checked: CheckedProgram): CpuArtifact {
  // The planner's admission is the only judge of what a target runs; compiling past it would let an
  // all_reduce reach a single device.
  planProgram(checked, CPU_TARGET);
  const payload = new TextEncoder().encode(JSON.stringify(programToJson(checked.program)));
  const bytes = new Uint8Array(HEADER_BYTES + payload.length);
  bytes.set(new TextEncoder().encode(CPU_ARTIFACT_MAGIC), 0);
  const view = new DataView(bytes.buffer);
  view.setUint32(8, CPU_ARTIFACT_VERSION, true);
  view.setUint32(12, payload.length, true);
  view.setUint32(16, crc32(payload), true);
  bytes.set(payload, HEADER_BYTES);
  return { target: 'cpu', bytes };
}

/** Reads a CPU artifact back into a checked program; LoadFailed(device, detail) on any damage. */
export function loadCpuArtifact(bytes: Uint8Array, device = 'cpu'): CheckedProgram {
  const fail = (detail: string): never => { throw new LoadFailed(device, detail); };
  if (!(bytes instanceof Uint8Array)) fail('the artifact is not bytes');
  if (bytes.length < HEADER_BYTES) fail(`the artifact is ${bytes.length} bytes, shorter than its ${HEADER_BYTES}-byte header`);
  const magic = new TextDecoder().decode(bytes.subarray(0, 8));
  if (magic !== CPU_ARTIFACT_MAGIC) fail('not a CPU artifact (bad magic)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (version !== CPU_ARTIFACT_VERSION) fail(`CPU artifact format version ${version}, this build reads ${CPU_ARTIFACT_VERSION}`);
  const length = view.getUint32(12, true);
  if (length !== bytes.length - HEADER_BYTES) fail(`the header says ${length} payload bytes, the artifact holds ${bytes.length - HEADER_BYTES}`);
  const payload = bytes.subarray(HEADER_BYTES);
  if (crc32(payload) !== view.getUint32(16, true)) fail('the payload does not match its checksum');
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
  } catch (e) {
    return fail(`the payload is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    return checkProgram(parseProgram(json));
  } catch (e) {
    // A checksummed payload that no longer checks was written by another build: still a load failure.
    return fail(`the program does not check: ${e instanceof Error ? e.message : String(e)}`);
  }
}
