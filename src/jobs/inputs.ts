/**
 * What a caller may hand the job API: a program as the format's JSON, a decoded Program or a builder;
 * inputs as an inputs file (tensors on the wire) whose tensors may also be Tensor objects.
 */
import { InvalidInput } from '../errors/index.js';
import { ProgramBuilder } from '../ops/builder.js';
import { programToJson } from '../ir/codec.js';
import { ptr, setOwn } from '../ir/pointer.js';
import type { HeldTensor } from '../ir/tensor.js';
import { encodeHeld } from '../ir/tensorCodec.js';
import { isAnyDType } from '../ir/scalars.js';
import type { Program } from '../ir/types.js';

export type ProgramSource = ProgramBuilder | Program | object;

function isDecodedProgram(p: object): p is Program {
  const eqns = (p as { eqns?: unknown }).eqns;
  return Array.isArray(eqns) && eqns.every((e) => typeof e === 'object' && e !== null && typeof (e as { attrs?: unknown }).attrs === 'object');
}

/** The program in the format's JSON form, whatever form the caller gave. */
export function programJsonOf(p: ProgramSource): unknown {
  if (p instanceof ProgramBuilder) return programToJson(p.build());
  if (typeof p === 'object' && p !== null && isDecodedProgram(p)) return programToJson(p);
  return p;
}

// A Tensor (elements in a Float64Array) or a QuantTensor (blocks in a Uint8Array), as code builds them.
function isTensor(v: unknown): v is HeldTensor {
  if (typeof v !== 'object' || v === null || !isAnyDType((v as { dtype?: unknown }).dtype)) return false;
  return (v as { data?: unknown }).data instanceof Float64Array || (v as { bytes?: unknown }).bytes instanceof Uint8Array;
}

/** An inputs file with every Tensor and QuantTensor object written as a `b64` wire tensor, ready for decodeInputs. */
export function inputsJsonOf(inputs: unknown): unknown {
  if (inputs === undefined) return {};
  if (typeof inputs !== 'object' || inputs === null || Array.isArray(inputs)) {
    throw new InvalidInput('', 'inputs must be an object mapping arg names to tensors');
  }
  const out: Record<string, unknown> = {};
  // setOwn: a key `__proto__` stays a key (and is refused as no arg's name), not the object's prototype.
  for (const [k, v] of Object.entries(inputs)) {
    setOwn(out, k, Array.isArray(v) ? v.map((t: unknown, i) => wire(t, ptr('', k, i))) : wire(v, ptr('', k)));
  }
  return out;
}

// A Tensor object crosses as `b64`; one whose `data` does not fit its shape is refused at its `data`,
// where the caller's mistake is, not at the `b64` the engine would have written.
function wire(v: unknown, path: string): unknown {
  if (!isTensor(v)) return v;
  const shape: unknown = v.shape;
  if ('data' in v && Array.isArray(shape) && shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    const n = (shape as number[]).reduce((a, d) => a * d, 1);
    if (v.data.length !== n) throw new InvalidInput(ptr(path, 'data'), `shape [${shape.join(', ')}] needs ${n} elements, "data" has ${v.data.length}`);
  }
  return encodeHeld(v, 'b64');
}
