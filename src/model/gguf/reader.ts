/**
 * The GGUF reader: v2 and v3, little-endian. `readGguf` parses a file held in memory; `openGguf` reads
 * only the header of a file on disk (in growing prefixes) and each tensor's bytes when asked, so a
 * model of hundreds of MB is never read whole to list it. Every malformed or hostile field is a
 * GgufError naming the byte it is about.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { GgufError } from '../../errors/index.js';
import { openRegularFile } from '../../io/files.js';
import { Cursor, NeedMoreBytes } from './cursor.js';
import { dequantize } from './dequant.js';
import { ggmlType } from './ggmlTypes.js';
import { MIN_KV_BYTES, readMetadata } from './metadata.js';
import { MIN_TENSOR_INFO_BYTES, checkTensorRanges, readTensorInfos } from './tensorInfo.js';
import type { GgufFile, GgufMetadata, GgufTensorInfo } from './types.js';

/** Options of the reader. */
export interface ReadGgufOptions {
  /** Also require ggml's layout: tensors in header order, each at the previous end padded (llama.cpp refuses others). */
  readonly packed?: boolean;
}

/** The default alignment of the data section when `general.alignment` is absent. */
export const DEFAULT_ALIGNMENT = 32;

/** "GGUF" read as a little-endian u32. */
const MAGIC = 0x46554747;

interface Header {
  readonly version: 2 | 3;
  readonly alignment: number;
  readonly metadata: GgufMetadata;
  readonly tensors: readonly GgufTensorInfo[];
  readonly dataOffset: number;
}

function parseHeader(c: Cursor, opts: ReadGgufOptions): Header {
  if (c.total < 4 || c.u32('magic') !== MAGIC) c.fail('bad magic: not a GGUF file', 0);
  const version = c.u32('version');
  if (version === 1) c.fail('GGUF v1 is not supported (its 32-bit counts were replaced in v2)', 4);
  // A big-endian file shows its version byte-swapped when read little-endian.
  if (version === 0x02000000 || version === 0x03000000) c.fail('big-endian GGUF is not supported', 4);
  if (version !== 2 && version !== 3) c.fail(`unknown GGUF version ${version}`, 4);
  const nTensors = c.count('tensor count', MIN_TENSOR_INFO_BYTES);
  const nKv = c.count('metadata key-value count', MIN_KV_BYTES);
  // Both sections follow, so together they must fit too.
  if (nTensors * MIN_TENSOR_INFO_BYTES + nKv * MIN_KV_BYTES > c.remaining) {
    c.fail(`${nTensors} tensors and ${nKv} metadata pairs cannot fit in the ${c.remaining} bytes left`, 8);
  }
  const kvAt = c.pos;
  const metadata = readMetadata(c, nKv);
  const alignment = alignmentOf(c, metadata, kvAt);
  const raw = readTensorInfos(c, nTensors);
  const dataOffset = Math.ceil(c.pos / alignment) * alignment;
  checkTensorRanges(c, raw, dataOffset, alignment, opts.packed === true);
  const tensors = raw.map(({ at: _at, ...t }): GgufTensorInfo => ({ ...t, fileOffset: dataOffset + t.offset }));
  return { version: version, alignment, metadata, tensors, dataOffset };
}

function alignmentOf(c: Cursor, metadata: GgufMetadata, at: number): number {
  const v = metadata.get('general.alignment');
  if (v === undefined) return DEFAULT_ALIGNMENT;
  // ggml reads it as a u32 and nothing else.
  if (v.type !== 'u32') c.fail(`general.alignment has type ${v.type}, expected u32`, at);
  const a = v.value;
  if (a === 0 || (a & (a - 1)) !== 0) c.fail(`general.alignment ${a} is not a non-zero power of two`, at);
  return a;
}

function build(h: Header, size: number, bytesOf: (t: GgufTensorInfo) => Uint8Array, close: () => void): GgufFile {
  const byName = new Map(h.tensors.map((t) => [t.name, t]));
  const resolve = (t: GgufTensorInfo | string): GgufTensorInfo => {
    if (typeof t !== 'string') return t;
    const found = byName.get(t);
    if (found === undefined) throw new GgufError(h.dataOffset, `no tensor named ${JSON.stringify(t)}`);
    return found;
  };
  return {
    ...h,
    size,
    tensor: (name) => byName.get(name),
    tensorBytes: (t) => bytesOf(resolve(t)),
    tensorFloats: (t) => {
      const info = resolve(t);
      return dequantize(info.type, bytesOf(info), info.elements, info.fileOffset);
    },
    close,
  };
}

/** Parses a whole GGUF file held in memory; tensor bytes are views into `bytes`. */
export function readGguf(bytes: Uint8Array, opts: ReadGgufOptions = {}): GgufFile {
  const h = parseHeader(new Cursor(bytes, bytes.length), opts);
  return build(h, bytes.length, (t) => bytes.subarray(t.fileOffset, t.fileOffset + t.byteSize), () => {});
}

/** The first window an opened file's header is read in; it grows fourfold until the header fits. */
const FIRST_WINDOW = 1 << 20;

/** Opens a GGUF file on disk, reading its header now and each tensor's bytes when asked; call close(). */
export function openGguf(path: string, opts: ReadGgufOptions = {}): GgufFile {
  // A FIFO or a device is refused before it is opened for reading: reading one would block or never end.
  const { fd, size } = openRegularFile(path, { what: 'GGUF' });
  let open = true;
  const close = (): void => { if (open) { open = false; closeSync(fd); } };
  try {
    const read = (at: number, n: number): Uint8Array => {
      if (!open) throw new GgufError(at, 'the file is closed');
      const buf = Buffer.alloc(n);
      let got = 0;
      while (got < n) {
        const r = readSync(fd, buf, got, n - got, at + got);
        if (r === 0) throw new GgufError(at + got, 'the file shrank while it was read');
        got += r;
      }
      return new Uint8Array(buf.buffer, buf.byteOffset, n);
    };
    let window = Math.min(size, FIRST_WINDOW);
    for (;;) {
      try {
        const h = parseHeader(new Cursor(read(0, window), size), opts);
        return build(h, size, (t) => read(t.fileOffset, t.byteSize), close);
      } catch (e) {
        if (!(e instanceof NeedMoreBytes)) throw e;
        window = Math.min(size, Math.max(e.needed, window * 4));
      }
    }
  } catch (e) {
    close();
    throw e;
  }
}

/** The ggml type name of an id, or `type N` for one this package does not know. */
export function typeName(id: number): string {
  return ggmlType(id)?.name ?? `type ${id}`;
}

/** True when the file at `path` starts with the GGUF magic; the caller has checked it is a regular file. */
export function hasGgufMagic(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.alloc(4);
    return readSync(fd, b, 0, 4, 0) === 4 && b.toString('latin1') === 'GGUF';
  } finally {
    closeSync(fd);
  }
}
