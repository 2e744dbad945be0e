/**
 * Reading the key-value section of a GGUF header. Keys must be non-empty and unique (as ggml
 * requires); arrays may nest (the spec allows it, ggml does not), at most MAX_ARRAY_DEPTH deep so a
 * file of nested array headers cannot exhaust the stack.
 * @internal
 */
import type { Cursor } from './cursor.js';
import { GGUF_VALUE_TYPES, type GgufArray, type GgufValue, type GgufValueType } from './types.js';

/** How deep arrays may nest; real files use one level. */
const MAX_ARRAY_DEPTH = 8;

/** The fewest bytes one item of each type takes, used to bound array lengths by the bytes left. */
const MIN_BYTES: Record<GgufValueType, number> = {
  u8: 1, i8: 1, u16: 2, i16: 2, u32: 4, i32: 4, f32: 4, bool: 1, string: 8, array: 12, u64: 8, i64: 8, f64: 8,
};

function valueType(c: Cursor, what: string): GgufValueType {
  const at = c.pos;
  const n = c.u32(what);
  const t = GGUF_VALUE_TYPES[n];
  if (t === undefined) c.fail(`${what} ${n} is not a GGUF value type`, at);
  return t;
}

function bool(c: Cursor, what: string): boolean {
  const at = c.pos;
  const b = c.u8(what);
  if (b > 1) c.fail(`${what} is a bool of byte value ${b}, not 0 or 1`, at);
  return b === 1;
}

function scalar(c: Cursor, t: Exclude<GgufValueType, 'array'>, what: string): GgufValue {
  switch (t) {
    case 'u8': return { type: t, value: c.u8(what) };
    case 'i8': return { type: t, value: c.i8(what) };
    case 'u16': return { type: t, value: c.u16(what) };
    case 'i16': return { type: t, value: c.i16(what) };
    case 'u32': return { type: t, value: c.u32(what) };
    case 'i32': return { type: t, value: c.i32(what) };
    case 'f32': return { type: t, value: c.f32(what) };
    case 'f64': return { type: t, value: c.f64(what) };
    case 'u64': return { type: t, value: c.u64(what) };
    case 'i64': return { type: t, value: c.i64(what) };
    case 'bool': return { type: t, value: bool(c, what) };
    case 'string': return { type: t, value: c.string(what, false) };
  }
}

function array(c: Cursor, what: string, depth: number): GgufArray {
  if (depth > MAX_ARRAY_DEPTH) c.fail(`${what} nests arrays more than ${MAX_ARRAY_DEPTH} deep`);
  const itemType = valueType(c, `${what} item type`);
  const n = c.count(`${what} length`, MIN_BYTES[itemType]);
  const item = `${what} item`;
  switch (itemType) {
    case 'array': {
      const value: GgufArray[] = [];
      for (let i = 0; i < n; i++) value.push(array(c, item, depth + 1));
      return { type: 'array', itemType, value };
    }
    case 'u64': case 'i64': {
      const value: bigint[] = [];
      for (let i = 0; i < n; i++) value.push(itemType === 'u64' ? c.u64(item) : c.i64(item));
      return { type: 'array', itemType, value };
    }
    case 'bool': {
      const value: boolean[] = [];
      for (let i = 0; i < n; i++) value.push(bool(c, item));
      return { type: 'array', itemType, value };
    }
    case 'string': {
      const value: string[] = [];
      for (let i = 0; i < n; i++) value.push(c.string(item, false));
      return { type: 'array', itemType, value };
    }
    default: {
      const value: number[] = [];
      for (let i = 0; i < n; i++) value.push(scalar(c, itemType, item).value as number);
      return { type: 'array', itemType, value };
    }
  }
}

/** The fewest bytes one key-value pair takes: key length, a one-byte key, value type, a one-byte value. */
export const MIN_KV_BYTES = 8 + 1 + 4 + 1;

/** Reads `n` key-value pairs into a Map in file order. */
export function readMetadata(c: Cursor, n: number): Map<string, GgufValue> {
  const out = new Map<string, GgufValue>();
  for (let i = 0; i < n; i++) {
    const at = c.pos;
    const key = c.string(`key ${i}`, true);
    if (key === '') c.fail(`key ${i} is empty`, at);
    if (out.has(key)) c.fail(`duplicate key ${JSON.stringify(key)}`, at);
    const what = `value of ${JSON.stringify(key)}`;
    const t = valueType(c, `${what} type`);
    out.set(key, t === 'array' ? array(c, what, 1) : scalar(c, t, what));
  }
  return out;
}
