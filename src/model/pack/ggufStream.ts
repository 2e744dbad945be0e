/**
 * A GGUF written as a stream: header first, then each tensor quantized a piece of rows at a time, so a
 * model larger than memory (the benchmark's Qwen3-0.6B-sized one) can be generated. The bytes equal
 * writeGguf's for the same input (ggml's layout: tensors in order, each padded to the alignment).
 */
import { InvalidInput } from '../../errors/index.js';
import { QUANT_TYPE_ID, quantTypeInfo, type QuantType } from '../gguf/ggmlTypes.js';
import { quantize } from '../gguf/quantize.js';
import { DEFAULT_ALIGNMENT } from '../gguf/reader.js';
import { GGUF_VALUE_TYPES, type GgufArray, type GgufValue } from '../gguf/types.js';
import { FileWriter } from './fileRange.js';

/** One tensor to stream: `fill` emits its f32 values in file order, in pieces of whole blocks. */
export interface StreamGgufTensor {
  readonly name: string;
  /** ne[0] first. */
  readonly dims: readonly number[];
  readonly type: QuantType;
  readonly fill: (emit: (values: Float32Array) => void) => void;
}

/** Little-endian bytes, grown as needed. */
class Bytes {
  parts: number[] = [];
  u32(v: number): void { for (let i = 0; i < 4; i++) this.parts.push((v >>> (8 * i)) & 0xff); }
  u64(v: bigint): void { for (let i = 0n; i < 8n; i++) this.parts.push(Number((BigInt.asUintN(64, v) >> (8n * i)) & 0xffn)); }
  raw(b: ArrayLike<number>): void { for (let i = 0; i < b.length; i++) this.parts.push(b[i]!); }
  num(t: string, v: number): void {
    const d = new DataView(new ArrayBuffer(8));
    const n = ({ u8: 1, i8: 1, u16: 2, i16: 2, u32: 4, i32: 4, f32: 4, f64: 8 } as Record<string, number>)[t]!;
    if (t === 'f32') d.setFloat32(0, v, true); else if (t === 'f64') d.setFloat64(0, v, true);
    else if (n === 1) d.setUint8(0, v & 0xff); else if (n === 2) d.setUint16(0, v & 0xffff, true); else d.setUint32(0, v >>> 0, true);
    this.raw(new Uint8Array(d.buffer, 0, n));
  }
  str(s: string): void { const b = new TextEncoder().encode(s); this.u64(BigInt(b.length)); this.raw(b); }
}

function item(o: Bytes, t: string, v: unknown): void {
  if (t === 'string') o.str(v as string);
  else if (t === 'bool') o.raw([v ? 1 : 0]);
  else if (t === 'u64' || t === 'i64') o.u64(v as bigint);
  else if (t === 'array') array(o, v as GgufArray);
  else o.num(t, v as number);
}

function array(o: Bytes, a: GgufArray): void {
  o.u32(GGUF_VALUE_TYPES.indexOf(a.itemType));
  o.u64(BigInt(a.value.length));
  for (const v of a.value as readonly unknown[]) item(o, a.itemType, v);
}

function value(o: Bytes, v: GgufValue): void {
  o.u32(GGUF_VALUE_TYPES.indexOf(v.type));
  item(o, v.type, v.type === 'array' ? v : v.value);
}

/** Writes a GGUF to `path` (which must not exist), quantizing each tensor's values as they are emitted. */
export function writeGgufStream(path: string, metadata: ReadonlyMap<string, GgufValue>, tensors: readonly StreamGgufTensor[], version: 2 | 3 = 3): void {
  const align = metadata.get('general.alignment');
  const alignment = align?.type === 'u32' ? align.value : DEFAULT_ALIGNMENT;
  const o = new Bytes();
  o.raw([0x47, 0x47, 0x55, 0x46]);
  o.u32(version);
  o.u64(BigInt(tensors.length));
  o.u64(BigInt(metadata.size));
  for (const [k, v] of metadata) { o.str(k); value(o, v); }
  let offset = 0;
  const sizes = tensors.map((t) => {
    const info = quantTypeInfo(t.type);
    const elements = t.dims.reduce((a, b) => a * b, 1);
    if (t.dims[0]! % info.blockSize !== 0) throw new InvalidInput(`/tensors/${t.name}`, `ne0 ${t.dims[0]!} is not whole ${t.type} blocks`);
    o.str(t.name);
    o.u32(t.dims.length);
    for (const d of t.dims) o.u64(BigInt(d));
    o.u32(QUANT_TYPE_ID[t.type]);
    o.u64(BigInt(offset));
    const bytes = (elements / info.blockSize) * info.typeSize;
    offset += Math.ceil(bytes / alignment) * alignment;
    return bytes;
  });
  const pad = (n: number): Uint8Array => new Uint8Array((alignment - (n % alignment)) % alignment);
  const w = new FileWriter(path);
  try {
    w.write(Uint8Array.from(o.parts));
    w.write(pad(o.parts.length));
    tensors.forEach((t, i) => {
      let written = 0;
      t.fill((values) => { const b = quantize(t.type, values); w.write(b); written += b.length; });
      if (written !== sizes[i]) throw new InvalidInput(`/tensors/${t.name}`, `fill emitted ${written} bytes of ${t.type}, the dims need ${sizes[i]!}`);
      w.write(pad(written));
    });
  } finally {
    w.close();
  }
}
