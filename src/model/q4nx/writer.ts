/**
 * Writes a Q4NX container: the safetensors layout, tensors packed back to back in the order given
 * (safetensors allows no gaps, so there is no per-tensor alignment), the JSON header padded with
 * spaces to a multiple of 8 bytes so the data region starts 8-aligned, as safetensors itself does.
 */
import { Q4nxError } from '../../errors/index.js';
import { DTYPE_BYTES, type SafetensorsDtype } from './container.js';

/** One tensor to write: its bytes must be exactly dtype size x product(shape). */
export interface Q4nxTensorInput {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  readonly data: Uint8Array;
}

/** Serializes tensors (and optional `__metadata__`) into one container. */
export function writeQ4nx(tensors: readonly Q4nxTensorInput[], metadata: Readonly<Record<string, string>> | null = null): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata !== null) header.__metadata__ = { ...metadata };
  let at = 0;
  const seen = new Set<string>();
  for (const t of tensors) {
    if (t.name === '__metadata__' || seen.has(t.name)) throw new Q4nxError(t.name, 'tensor name is reserved or repeated');
    seen.add(t.name);
    if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) throw new Q4nxError(t.name, 'shape is not a list of non-negative integers');
    const size = t.shape.reduce((p, d) => p * d, DTYPE_BYTES[t.dtype]);
    if (size !== t.data.length) throw new Q4nxError(t.name, `${t.dtype}[${t.shape.join(', ')}] needs ${size} bytes, got ${t.data.length}`);
    header[t.name] = { dtype: t.dtype, shape: [...t.shape], data_offsets: [at, at + size] };
    at += size;
  }
  let json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded !== json.length) {
    const p = new Uint8Array(padded).fill(0x20);
    p.set(json);
    json = p;
  }
  const out = new Uint8Array(8 + json.length + at);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let off = 8 + json.length;
  for (const t of tensors) { out.set(t.data, off); off += t.data.length; }
  return out;
}
