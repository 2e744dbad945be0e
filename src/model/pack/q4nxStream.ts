/**
 * The Q4NX container written as a stream: the header first (every tensor's size is known from the
 * plan before any is converted), then each tensor's bytes as they are produced. The header is the one
 * writeQ4nx writes for the same tensors: `__metadata__` first, tensors back to back in order, the JSON
 * padded with spaces to a multiple of 8 bytes.
 */
import { Q4nxError } from '../../errors/index.js';
import { DTYPE_BYTES, type SafetensorsDtype } from '../q4nx/container.js';
import { FileWriter } from './fileRange.js';

/** One tensor's header entry, before its data exists. */
export interface StreamTensor {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
}

/** The container's header bytes (length prefix included) for tensors written back to back. */
function q4nxHeaderBytes(tensors: readonly StreamTensor[], metadata: Readonly<Record<string, string>>): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: { ...metadata } };
  let at = 0;
  for (const t of tensors) {
    if (t.name === '__metadata__' || Object.prototype.hasOwnProperty.call(header, t.name)) throw new Q4nxError(t.name, 'tensor name is reserved or repeated');
    const size = t.shape.reduce((p, d) => p * d, DTYPE_BYTES[t.dtype]);
    header[t.name] = { dtype: t.dtype, shape: [...t.shape], data_offsets: [at, at + size] };
    at += size;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + padded).fill(0x20);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.set(json, 8);
  return out;
}

/** Writes a container to `path`: call `tensor(i)`'s sink for each tensor in order, then `finish()`. */
export class Q4nxStreamWriter {
  private readonly out: FileWriter;
  private readonly sizes: number[];
  private index = 0;
  private inTensor = 0;

  constructor(path: string, readonly tensors: readonly StreamTensor[], metadata: Readonly<Record<string, string>>) {
    this.sizes = tensors.map((t) => t.shape.reduce((p, d) => p * d, DTYPE_BYTES[t.dtype]));
    this.out = new FileWriter(path);
    this.out.write(q4nxHeaderBytes(tensors, metadata));
  }

  /** Appends bytes of the current tensor; a tensor that overruns its declared size is refused. */
  write(b: Uint8Array): void {
    while (this.inTensor === 0 && this.sizes[this.index] === 0) this.index++;
    const name = this.tensors[this.index]?.name ?? null;
    const size = this.sizes[this.index];
    if (size === undefined || this.inTensor + b.length > size) throw new Q4nxError(name, `writing past the ${size ?? 0} bytes the header declares`);
    this.out.write(b);
    this.inTensor += b.length;
    if (this.inTensor === size) { this.index++; this.inTensor = 0; }
  }

  /** Closes the file; refuses when a tensor was left short. */
  finish(): void {
    this.out.close();
    // A zero-byte tensor is complete without a write.
    while (this.index < this.sizes.length && this.sizes[this.index] === 0) this.index++;
    if (this.index !== this.tensors.length) throw new Q4nxError(this.tensors[this.index]?.name ?? null, 'the stream ended before this tensor was written');
  }

  /** Closes the file after a failure (the caller removes it). */
  abort(): void {
    try { this.out.close(); } catch { /* already closed */ }
  }
}
