/**
 * A canonical JSON serialization: one string per value, so two identities hash alike exactly when they
 * are the same value. Plain JSON cannot do this: it writes -0 as 0, NaN and the infinities as null,
 * typed arrays as index maps and drops undefined, so distinct regions would share a cache key.
 *
 * Rules:
 * - object keys sorted by UTF-16 code units; properties whose value is undefined are absent, as in JSON;
 * - a finite number other than -0 is written by `String(n)`, the shortest text that reads back as the
 *   same f64, so every f64 value has exactly one spelling and no two share one;
 * - -0, NaN, Infinity and -Infinity, bigints, undefined array elements and binary data are written as a
 *   tagged object with a single key `$f64`, `$bigint`, `$undefined` or `$bytes`. A user key that starts
 *   with `$` is written with one more `$` in front, so a user object can never read as a tag;
 * - typed arrays, DataView and ArrayBuffer are written by their bytes (base64, in the machine's byte
 *   order, little-endian on every platform Node supports) with their kind, so Float32Array and
 *   Int32Array holding the same bytes differ, and so do -0 and 0 or two NaN payloads inside them;
 * - an object with a toJSON method is written as what toJSON returns (a Date as its ISO string);
 * - anything else that is not plain data (Map, Set, class instances, functions, symbols, cycles) is
 *   refused with a CacheError rather than written as `{}`, which would collide with every other one.
 */
import { CacheError } from '../errors/index.js';

/** Tags of the values plain JSON cannot write distinctly. */
const TAG_F64 = '$f64';
const TAG_BIGINT = '$bigint';
const TAG_UNDEFINED = '$undefined';
const TAG_BYTES = '$bytes';

/** Writes `value` as canonical JSON; throws CacheError naming the JSON pointer of what it cannot write. */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  write(value, '', parts, new Set());
  return parts.join('');
}

function tag(name: string, body: string): string {
  return `{${JSON.stringify(name)}:${body}}`;
}

function numberText(v: number): string {
  if (Number.isNaN(v)) return tag(TAG_F64, '"nan"');
  if (v === Infinity) return tag(TAG_F64, '"inf"');
  if (v === -Infinity) return tag(TAG_F64, '"-inf"');
  if (Object.is(v, -0)) return tag(TAG_F64, '"-0"');
  return String(v);
}

function bytesText(kind: string, bytes: Uint8Array): string {
  const b64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  return tag(TAG_BYTES, `{"data":${JSON.stringify(b64)},"kind":${JSON.stringify(kind)}}`);
}

/** The user's key as written: one more `$` in front of a key that starts with `$`. */
function escapeKey(k: string): string {
  return k.startsWith('$') ? `$${k}` : k;
}

function pointer(path: string, k: string | number): string {
  return `${path}/${String(k).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

function write(v: unknown, path: string, out: string[], ancestors: Set<object>): void {
  switch (typeof v) {
    case 'string': out.push(JSON.stringify(v)); return;
    case 'number': out.push(numberText(v)); return;
    case 'boolean': out.push(v ? 'true' : 'false'); return;
    case 'bigint': out.push(tag(TAG_BIGINT, JSON.stringify(v.toString()))); return;
    case 'undefined': out.push(tag(TAG_UNDEFINED, 'true')); return;
    case 'function':
    case 'symbol':
      throw new CacheError(path, `a ${typeof v} cannot be part of a cache identity`);
    case 'object': break;
  }
  if (v === null) { out.push('null'); return; }
  const o = v;
  if (ArrayBuffer.isView(o)) {
    // Symbol.toStringTag names the view kind even for Buffer (a Uint8Array), which is what we want.
    const kind = o instanceof DataView ? 'DataView' : (o as unknown as { [Symbol.toStringTag]: string })[Symbol.toStringTag];
    out.push(bytesText(kind, new Uint8Array(o.buffer, o.byteOffset, o.byteLength)));
    return;
  }
  if (o instanceof ArrayBuffer) { out.push(bytesText('ArrayBuffer', new Uint8Array(o))); return; }
  if (typeof SharedArrayBuffer !== 'undefined' && o instanceof SharedArrayBuffer) {
    out.push(bytesText('SharedArrayBuffer', new Uint8Array(o)));
    return;
  }
  if (ancestors.has(o)) throw new CacheError(path, 'a cache identity cannot contain a cycle');
  ancestors.add(o);
  try {
    if (Array.isArray(o)) { writeArray(o, path, out, ancestors); return; }
    const toJSON = (o as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') { write(toJSON.call(o), path, out, ancestors); return; }
    const proto: unknown = Object.getPrototypeOf(o);
    if (proto !== Object.prototype && proto !== null) {
      const name = (o as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      throw new CacheError(path, `a ${name} is not plain data and cannot be part of a cache identity`);
    }
    writeObject(o as Record<string, unknown>, path, out, ancestors);
  } finally {
    ancestors.delete(o);
  }
}

function writeArray(a: readonly unknown[], path: string, out: string[], ancestors: Set<object>): void {
  out.push('[');
  for (let i = 0; i < a.length; i++) {
    if (i > 0) out.push(',');
    write(a[i], pointer(path, i), out, ancestors);
  }
  out.push(']');
}

function writeObject(o: Record<string, unknown>, path: string, out: string[], ancestors: Set<object>): void {
  // Default sort compares UTF-16 code units: locale-independent, so the order is the same everywhere.
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  out.push('{');
  keys.forEach((k, i) => {
    if (i > 0) out.push(',');
    out.push(JSON.stringify(escapeKey(k)), ':');
    write(o[k], pointer(path, k), out, ancestors);
  });
  out.push('}');
}
