/**
 * The IR's .bin: the constants' bytes, little-endian, packed back to back in the order the writer
 * appends them (no padding: the IR names each constant's offset and size, so none is needed, and
 * packing keeps the bytes a pure function of the graph).
 */
import { f16FromBits, f16ToBits, roundF16 } from '../../numerics/float16.js';
import type { IrElementType } from './irModel.js';
import { elementBytes } from './irModel.js';

/** `v` as the nearest value `type` holds (f32 and f16 round to nearest even, i32 wraps, booleans are 0 or 1). */
export function representable(type: IrElementType, v: number): number {
  switch (type) {
    case 'f32': return Math.fround(v);
    case 'f16': return roundF16(v);
    case 'i32': return v | 0;
    case 'i64': return v;
    case 'boolean': return v !== 0 ? 1 : 0;
  }
}

/** The little-endian bytes of `values` as `type` (f16 from its value, booleans as 0 or 1). */
function encodeValues(type: IrElementType, values: readonly number[]): Uint8Array {
  const out = new Uint8Array(values.length * elementBytes(type));
  const view = new DataView(out.buffer);
  values.forEach((v, i) => {
    switch (type) {
      case 'f32': view.setFloat32(i * 4, v, true); break;
      // f16ToBits takes an f16 value; rounding first keeps an f32 value from producing a torn pattern.
      case 'f16': view.setUint16(i * 2, f16ToBits(roundF16(v)), true); break;
      case 'i32': view.setInt32(i * 4, v, true); break;
      case 'i64': view.setBigInt64(i * 8, BigInt(v), true); break;
      case 'boolean': view.setUint8(i, v !== 0 ? 1 : 0); break;
    }
  });
  return out;
}

/** The values of `bytes` read as `type`; throws when an i64 is beyond a safe integer or a boolean is not 0 or 1. */
export function decodeValues(type: IrElementType, bytes: Uint8Array): number[] {
  const size = elementBytes(type);
  if (bytes.length % size !== 0) throw new Error(`${bytes.length} bytes are not a whole number of ${type} elements`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let o = 0; o < bytes.length; o += size) {
    switch (type) {
      case 'f32': out.push(view.getFloat32(o, true)); break;
      case 'f16': out.push(f16FromBits(view.getUint16(o, true))); break;
      case 'i32': out.push(view.getInt32(o, true)); break;
      case 'i64': {
        const v = view.getBigInt64(o, true);
        if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new Error(`i64 element ${o / 8} (${v}) is beyond a safe integer`);
        out.push(Number(v));
        break;
      }
      case 'boolean': {
        const b = view.getUint8(o);
        if (b > 1) throw new Error(`boolean element ${o} is ${b}, not 0 or 1`);
        out.push(b);
        break;
      }
    }
  }
  return out;
}

/** Collects constants into one .bin, handing back where each one lives. */
export class BinWriter {
  private readonly parts: Uint8Array[] = [];
  private length = 0;

  /** Appends `values` as `type`; returns the offset and size the Const layer names. */
  append(type: IrElementType, values: readonly number[]): { offset: number; size: number } {
    const bytes = encodeValues(type, values);
    const offset = this.length;
    this.parts.push(bytes);
    this.length += bytes.length;
    return { offset, size: bytes.length };
  }

  /** The whole .bin so far. */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.length);
    let o = 0;
    for (const p of this.parts) { out.set(p, o); o += p.length; }
    return out;
  }
}
