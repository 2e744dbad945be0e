/**
 * The GGUF writer: v2 or v3, little-endian, tensors packed in the order given, each padded to the
 * alignment (ggml's own layout, so llama.cpp reads what this writes). It checks its input as strictly
 * as the reader checks a file, so a test that wants a hostile file builds those bytes by hand.
 */
import { InvalidInput } from '../../errors/index.js';
import { ggmlType, QUANT_TYPE_ID, type QuantType } from './ggmlTypes.js';
import { quantize } from './quantize.js';
import { DEFAULT_ALIGNMENT } from './reader.js';
import { GGUF_VALUE_TYPES, type GgufArray, type GgufValue, type GgufValueType } from './types.js';

/** One tensor to write: raw bytes of ggml type `type`, dims ne[0] first. */
export interface GgufTensorInput {
  readonly name: string;
  readonly dims: readonly number[];
  /** The ggml type id, or a QuantType name. */
  readonly type: number | QuantType;
  readonly data: Uint8Array;
}

/** What writeGguf writes. */
export interface WriteGgufInput {
  readonly version?: 2 | 3;
  readonly metadata?: ReadonlyMap<string, GgufValue> | Readonly<Record<string, GgufValue>>;
  readonly tensors?: readonly GgufTensorInput[];
}

/** A tensor quantized from f32 values, ready for writeGguf. */
export function quantizedTensor(name: string, type: QuantType, dims: readonly number[], values: ArrayLike<number>): GgufTensorInput {
  return { name, dims, type, data: quantize(type, values) };
}

const enc = new TextEncoder();

/** A growing little-endian byte buffer. */
class Out {
  private buf = new Uint8Array(1024);
  private view = new DataView(this.buf.buffer);
  len = 0;
  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number): void { this.room(1); this.view.setUint8(this.len, v); this.len += 1; }
  i8(v: number): void { this.room(1); this.view.setInt8(this.len, v); this.len += 1; }
  u16(v: number): void { this.room(2); this.view.setUint16(this.len, v, true); this.len += 2; }
  i16(v: number): void { this.room(2); this.view.setInt16(this.len, v, true); this.len += 2; }
  u32(v: number): void { this.room(4); this.view.setUint32(this.len, v, true); this.len += 4; }
  i32(v: number): void { this.room(4); this.view.setInt32(this.len, v, true); this.len += 4; }
  f32(v: number): void { this.room(4); this.view.setFloat32(this.len, v, true); this.len += 4; }
  f64(v: number): void { this.room(8); this.view.setFloat64(this.len, v, true); this.len += 8; }
  u64(v: bigint): void { this.room(8); this.view.setBigUint64(this.len, v, true); this.len += 8; }
  i64(v: bigint): void { this.room(8); this.view.setBigInt64(this.len, v, true); this.len += 8; }
  bytes(b: Uint8Array): void { this.room(b.length); this.buf.set(b, this.len); this.len += b.length; }
  string(s: string): void { const b = enc.encode(s); this.u64(BigInt(b.length)); this.bytes(b); }
  pad(alignment: number): void { const n = (alignment - (this.len % alignment)) % alignment; this.room(n); this.len += n; }
  result(): Uint8Array { return this.buf.slice(0, this.len); }
}

const RANGES: Partial<Record<GgufValueType, readonly [number, number]>> = {
  u8: [0, 0xff], i8: [-0x80, 0x7f], u16: [0, 0xffff], i16: [-0x8000, 0x7fff], u32: [0, 0xffffffff], i32: [-0x80000000, 0x7fffffff],
};

function checkInt(t: GgufValueType, v: number, path: string): void {
  const r = RANGES[t];
  if (r !== undefined && !(Number.isInteger(v) && v >= r[0] && v <= r[1])) throw new InvalidInput(path, `${v} is not a ${t}`);
}

function checkBig(t: 'u64' | 'i64', v: bigint, path: string): void {
  if (t === 'u64' ? BigInt.asUintN(64, v) !== v : BigInt.asIntN(64, v) !== v) throw new InvalidInput(path, `${v} is not a ${t}`);
}

function scalar(o: Out, t: Exclude<GgufValueType, 'array'>, v: unknown, path: string): void {
  switch (t) {
    case 'string': if (typeof v !== 'string') break; o.string(v); return;
    case 'bool': if (typeof v !== 'boolean') break; o.u8(v ? 1 : 0); return;
    case 'u64': case 'i64': if (typeof v !== 'bigint') break; checkBig(t, v, path); (t === 'u64' ? o.u64(v) : o.i64(v)); return;
    default: {
      if (typeof v !== 'number') break;
      checkInt(t, v, path);
      o[t](v);
      return;
    }
  }
  throw new InvalidInput(path, `a ${t} value must be a ${t === 'string' ? 'string' : t === 'bool' ? 'boolean' : t.endsWith('64') && t !== 'f64' ? 'bigint' : 'number'}, got ${typeof v}`);
}

function array(o: Out, a: GgufArray, path: string): void {
  o.u32(GGUF_VALUE_TYPES.indexOf(a.itemType));
  o.u64(BigInt(a.value.length));
  a.value.forEach((item: unknown, i: number) => {
    if (a.itemType === 'array') array(o, item as GgufArray, `${path}/${i}`);
    else scalar(o, a.itemType, item, `${path}/${i}`);
  });
}

function value(o: Out, v: GgufValue, path: string): void {
  const t = GGUF_VALUE_TYPES.indexOf(v.type);
  if (t < 0) throw new InvalidInput(path, `unknown GGUF value type ${v.type}`);
  o.u32(t);
  if (v.type === 'array') array(o, v, path);
  else scalar(o, v.type, v.value, path);
}

/** Writes a GGUF file; `general.alignment` in the metadata (a u32 power of two) sets the alignment. */
export function writeGguf(input: WriteGgufInput): Uint8Array {
  const version = input.version ?? 3;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the type says 2 | 3; a JavaScript caller may pass anything
  if (version !== 2 && version !== 3) throw new InvalidInput('/version', `GGUF version ${String(version)} cannot be written: use 2 or 3`);
  // `instanceof Map` does not narrow a ReadonlyMap away (an interface), so the record is named.
  const meta: [string, GgufValue][] = input.metadata === undefined ? [] : input.metadata instanceof Map ? [...(input.metadata as ReadonlyMap<string, GgufValue>)]
    : Object.entries(input.metadata as Readonly<Record<string, GgufValue>>);
  const tensors = input.tensors ?? [];
  const align = meta.find(([k]) => k === 'general.alignment')?.[1];
  let alignment = DEFAULT_ALIGNMENT;
  if (align !== undefined) {
    if (align.type !== 'u32' || align.value === 0 || (align.value & (align.value - 1)) !== 0) {
      throw new InvalidInput('/metadata/general.alignment', 'must be a u32 non-zero power of two');
    }
    alignment = align.value;
  }

  const o = new Out();
  o.bytes(enc.encode('GGUF'));
  o.u32(version);
  o.u64(BigInt(tensors.length));
  o.u64(BigInt(meta.length));
  const keys = new Set<string>();
  for (const [k, v] of meta) {
    if (k === '' || keys.has(k)) throw new InvalidInput(`/metadata/${k}`, k === '' ? 'empty key' : 'duplicate key');
    keys.add(k);
    o.string(k);
    value(o, v, `/metadata/${k}`);
  }
  const names = new Set<string>();
  let offset = 0;
  tensors.forEach((t, i) => {
    const path = `/tensors/${i}`;
    const id = typeof t.type === 'string' ? QUANT_TYPE_ID[t.type] : t.type;
    const info = ggmlType(id);
    if (info === undefined) throw new InvalidInput(`${path}/type`, `unknown ggml type ${String(t.type)}`);
    if (t.name === '' || names.has(t.name)) throw new InvalidInput(`${path}/name`, t.name === '' ? 'empty name' : `duplicate tensor name ${t.name}`);
    names.add(t.name);
    if (t.dims.length < 1 || t.dims.length > 4 || t.dims.some((d) => !Number.isSafeInteger(d) || d < 1)) {
      throw new InvalidInput(`${path}/dims`, 'dims must be 1 to 4 positive integers');
    }
    const elements = t.dims.reduce((a, b) => a * b, 1);
    if (t.dims[0]! % info.blockSize !== 0) throw new InvalidInput(`${path}/dims/0`, `${t.dims[0]!} is not a multiple of the ${info.name} block size ${info.blockSize}`);
    const bytes = (elements / info.blockSize) * info.typeSize;
    if (t.data.length !== bytes) throw new InvalidInput(`${path}/data`, `${t.data.length} bytes, a ${info.name} tensor of ${elements} elements takes ${bytes}`);
    o.string(t.name);
    o.u32(t.dims.length);
    for (const d of t.dims) o.u64(BigInt(d));
    o.u32(id);
    o.u64(BigInt(offset));
    offset += Math.ceil(bytes / alignment) * alignment;
  });
  o.pad(alignment);
  tensors.forEach((t) => { o.bytes(t.data); o.pad(alignment); });
  return o.result();
}
