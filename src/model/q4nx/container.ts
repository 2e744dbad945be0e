/**
 * The Q4NX container: the safetensors layout (u64 LE header length n, n bytes of JSON, data from 8+n),
 * read under safetensors' own rules so that a file we accept is one `safetensors` accepts too: header
 * at most 100 MB, valid UTF-8 JSON object starting with '{', known dtypes, non-negative integer dims,
 * exact sizes, and data offsets that tile the data region from 0 to its end with no gap or overlap.
 */
import { closeSync, readSync } from 'node:fs';
import { messageOf, Q4nxError } from '../../errors/index.js';
import { escapeControl } from '../../io/escape.js';
import { fsReason, openRegularFile, readRegularFile, type FileFailure } from '../../io/files.js';
import { jsonTextDepth } from '../../ir/jsonText.js';
import { DEFAULT_LIMITS } from '../../ir/limits.js';

/** safetensors' MAX_HEADER_SIZE: a larger header is refused before it is read. */
export const MAX_HEADER_BYTES = 100_000_000;

/** The byte size of each safetensors dtype we read; sub-byte dtypes (F4, F6_*) are refused. */
export const DTYPE_BYTES = {
  BOOL: 1, U8: 1, I8: 1, F8_E5M2: 1, F8_E4M3: 1, F8_E8M0: 1,
  I16: 2, U16: 2, F16: 2, BF16: 2,
  I32: 4, U32: 4, F32: 4,
  I64: 8, U64: 8, F64: 8,
} as const;

/** A safetensors dtype name. */
export type SafetensorsDtype = keyof typeof DTYPE_BYTES;

/** One tensor entry of the header; `begin`/`end` are `data_offsets`, relative to the data region. */
export interface Q4nxTensorInfo {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  readonly begin: number;
  readonly end: number;
}

/** The parsed header: tensors in data order, `__metadata__` (or null), and where the data lies. */
export interface Q4nxHeader {
  readonly tensors: readonly Q4nxTensorInfo[];
  readonly metadata: Readonly<Record<string, string>> | null;
  /** n, the JSON header's byte length. */
  readonly headerBytes: number;
  /** 8 + n: the file offset of data byte 0. */
  readonly dataStart: number;
  readonly dataBytes: number;
}

/** A whole container in memory: its header and its data region. */
export interface Q4nxFile {
  readonly header: Q4nxHeader;
  readonly data: Uint8Array;
}

function isDtype(s: string): s is SafetensorsDtype {
  return Object.prototype.hasOwnProperty.call(DTYPE_BYTES, s);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Reads n from the first 8 bytes and checks it against the cap and the file size. */
export function headerLength(prefix: Uint8Array, fileBytes: number): number {
  if (prefix.length < 8 || fileBytes < 8) throw new Q4nxError(null, `file of ${fileBytes} bytes is too short for the 8-byte header length`);
  const n = new DataView(prefix.buffer, prefix.byteOffset, 8).getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_BYTES)) throw new Q4nxError(null, `header length ${n} is over the ${MAX_HEADER_BYTES}-byte cap`);
  const len = Number(n);
  if (len > fileBytes - 8) throw new Q4nxError(null, `header length ${len} runs past the end of the ${fileBytes}-byte file`);
  if (len < 2) throw new Q4nxError(null, `header length ${len} cannot hold a JSON object`);
  return len;
}

/** Parses and checks the JSON header against a data region of `dataBytes` bytes. */
export function parseHeader(json: Uint8Array, dataBytes: number): Q4nxHeader {
  let text: string;
  try { text = utf8.decode(json); } catch { throw new Q4nxError(null, 'header is not valid UTF-8'); }
  // safetensors refuses a header that does not start with '{' (InvalidHeaderStart).
  if (text[0] !== '{') throw new Q4nxError(null, 'header does not start with "{"');
  let root: unknown;
  const depth = jsonTextDepth(text);
  if (depth > DEFAULT_LIMITS.jsonDepth) throw new Q4nxError(null, `header is nested ${depth} deep, past the json-depth limit ${DEFAULT_LIMITS.jsonDepth}`);
  try { root = JSON.parse(text); } catch (e) {
    throw new Q4nxError(null, `header is not JSON: ${escapeControl(messageOf(e))}`);
  }
  if (!isRecord(root)) throw new Q4nxError(null, 'header is not a JSON object');
  let metadata: Record<string, string> | null = null;
  const tensors: Q4nxTensorInfo[] = [];
  for (const [name, entry] of Object.entries(root)) {
    if (name === '__metadata__') { metadata = parseMetadata(entry); continue; }
    tensors.push(parseEntry(name, entry));
  }
  // safetensors sorts by offsets and then demands each tensor start where the previous one ended.
  tensors.sort((x, y) => x.begin - y.begin || x.end - y.end);
  let at = 0;
  for (const t of tensors) {
    if (t.begin !== at) {
      throw new Q4nxError(t.name, t.begin > at ? `data_offsets start at ${t.begin}, leaving a gap after ${at}` : `data_offsets start at ${t.begin}, overlapping data before ${at}`);
    }
    at = t.end;
  }
  if (at !== dataBytes) {
    throw new Q4nxError(null, at > dataBytes ? `tensors need ${at} data bytes, the file holds ${dataBytes}` : `tensors end at ${at}, but ${dataBytes - at} data bytes follow`);
  }
  return { tensors, metadata, headerBytes: json.length, dataStart: 8 + json.length, dataBytes };
}

function parseMetadata(v: unknown): Record<string, string> {
  if (!isRecord(v)) throw new Q4nxError(null, '__metadata__ is not an object');
  const out: Record<string, string> = {};
  for (const [k, s] of Object.entries(v)) {
    if (typeof s !== 'string') throw new Q4nxError(null, `__metadata__.${escapeControl(k)} is not a string`);
    out[k] = s;
  }
  return out;
}

function parseEntry(name: string, v: unknown): Q4nxTensorInfo {
  if (!isRecord(v)) throw new Q4nxError(name, 'entry is not an object');
  const { dtype, shape, data_offsets: offs } = v;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-conversion -- JSON.stringify(undefined) is undefined, whatever its type says
  if (typeof dtype !== 'string' || !isDtype(dtype)) throw new Q4nxError(name, `unknown dtype ${escapeControl(String(JSON.stringify(dtype)))}`);
  if (!Array.isArray(shape) || !shape.every(isCount)) throw new Q4nxError(name, 'shape is not a list of non-negative integers');
  if (!Array.isArray(offs) || offs.length !== 2 || !isCount(offs[0]) || !isCount(offs[1])) {
    throw new Q4nxError(name, 'data_offsets is not [begin, end] of non-negative integers');
  }
  const begin = offs[0];
  const end = offs[1];
  if (end < begin) throw new Q4nxError(name, `data_offsets [${begin}, ${end}] end before they begin`);
  // Checked arithmetic: the product is exact in BigInt, so a huge shape cannot wrap to a small size.
  let size = BigInt(DTYPE_BYTES[dtype]);
  for (const d of shape) size *= BigInt(d);
  if (size !== BigInt(end - begin)) {
    throw new Q4nxError(name, `${dtype}[${(shape).join(', ')}] needs ${size} bytes, data_offsets give ${end - begin}`);
  }
  return { name, dtype, shape: Object.freeze([...(shape)]), begin, end };
}

/** Parses a whole container held in memory. */
export function parseQ4nx(bytes: Uint8Array): Q4nxFile {
  const n = headerLength(bytes, bytes.length);
  const header = parseHeader(bytes.subarray(8, 8 + n), bytes.length - 8 - n);
  return { header, data: bytes.subarray(8 + n) };
}

/** The refusal of a container file that cannot be read (missing, a directory, a FIFO). */
export const q4nxReadError: FileFailure = (path, reason) => new Q4nxError(null, `cannot read ${path}: ${reason}`);

/** Reads a container from bytes or a file path, checking the header and every tensor's extent. */
export function readQ4nx(src: Uint8Array | string): Q4nxFile {
  if (typeof src !== 'string') return parseQ4nx(src);
  // A container read whole is a model: no file-bytes bound beyond what a Buffer holds.
  return parseQ4nx(readRegularFile(src, { maxBytes: Number.MAX_SAFE_INTEGER, fail: q4nxReadError }));
}

/** Reads only the 8 + n header bytes of a container file; the data is checked against the file size. */
export function readQ4nxHeader(path: string): Q4nxHeader {
  const { fd, size } = openRegularFile(path, { fail: q4nxReadError });
  try {
    const prefix = new Uint8Array(8);
    const got = size >= 8 ? readSync(fd, prefix, 0, 8, 0) : 0;
    const n = headerLength(prefix.subarray(0, got), size);
    const json = new Uint8Array(n);
    let off = 0;
    while (off < n) {
      const r = readSync(fd, json, off, n - off, 8 + off);
      if (r === 0) throw new Q4nxError(null, `file ended after ${8 + off} bytes inside the header`);
      off += r;
    }
    return parseHeader(json, size - 8 - n);
  } catch (e) {
    if (e instanceof Q4nxError) throw e;
    throw q4nxReadError(path, fsReason(e));
  } finally {
    closeSync(fd);
  }
}

/** The info of one tensor, or a Q4nxError naming it. */
export function tensorInfo(header: Q4nxHeader, name: string): Q4nxTensorInfo {
  const t = header.tensors.find((x) => x.name === name);
  if (t === undefined) throw new Q4nxError(name, 'no such tensor in the container');
  return t;
}

/** The bytes of one tensor (a view into the file's data region). */
export function tensorData(file: Q4nxFile, name: string): Uint8Array {
  const t = tensorInfo(file.header, name);
  return file.data.subarray(t.begin, t.end);
}
