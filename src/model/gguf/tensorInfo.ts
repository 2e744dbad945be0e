/**
 * Reading and checking the tensor infos of a GGUF header. Sizes are computed in bigint and refused
 * past Number.MAX_SAFE_INTEGER, so no later arithmetic on them can round; offsets are checked against
 * the alignment, the file's end and each other before any tensor's bytes are touched.
 * @internal
 */
import type { Cursor } from './cursor.js';
import { ggmlType } from './ggmlTypes.js';

/** ggml's limit on dimensions. */
const MAX_DIMS = 4;

/** ggml's name buffer, NUL included: a tensor name may have at most 63 bytes. */
const GGML_MAX_NAME = 64;

/** The fewest bytes one tensor info takes: name length, n_dims, one dim, type, offset. */
export const MIN_TENSOR_INFO_BYTES = 8 + 4 + 8 + 4 + 8;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A tensor info as the header declares it, sizes checked, offsets not yet. @internal */
export interface RawTensorInfo {
  readonly name: string;
  readonly dims: number[];
  readonly type: number;
  readonly typeName: string;
  readonly offset: number;
  readonly elements: number;
  readonly byteSize: number;
  /** Where this info starts in the file, for errors about it. */
  readonly at: number;
}

/** Reads `n` tensor infos; refuses bad names, dims, types and sizes. */
export function readTensorInfos(c: Cursor, n: number): RawTensorInfo[] {
  const out: RawTensorInfo[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const at = c.pos;
    const name = c.string(`tensor ${i} name`, true);
    if (name === '') c.fail(`tensor ${i} has an empty name`, at);
    // ggml keeps a tensor's name in a GGML_MAX_NAME (64) byte buffer with its terminating NUL.
    const nameBytes = Buffer.byteLength(name, 'utf8');
    if (nameBytes >= GGML_MAX_NAME) c.fail(`tensor ${i} name is ${nameBytes} bytes; ggml holds at most ${GGML_MAX_NAME - 1}`, at);
    if (seen.has(name)) c.fail(`duplicate tensor name ${JSON.stringify(name)}`, at);
    seen.add(name);
    const t = JSON.stringify(name);

    const nDimsAt = c.pos;
    const nDims = c.u32(`tensor ${t} n_dims`);
    // A 0-dim tensor means one element to ggml, but no weight file has one and it hides a truncated
    // shape, so it is refused along with more dims than ggml can hold.
    if (nDims === 0 || nDims > MAX_DIMS) c.fail(`tensor ${t} has ${nDims} dimensions, expected 1 to ${MAX_DIMS}`, nDimsAt);
    const dims: number[] = [];
    let elements = 1n;
    for (let d = 0; d < nDims; d++) {
      const dAt = c.pos;
      const ne = c.u64(`tensor ${t} dim ${d}`);
      if (ne >= 1n << 63n) c.fail(`tensor ${t} dim ${d} is negative (${BigInt.asIntN(64, ne)})`, dAt);
      // ggml allows an empty dimension; a weight with no elements is a broken converter, so refused.
      if (ne === 0n) c.fail(`tensor ${t} dim ${d} is zero`, dAt);
      elements *= ne;
      if (elements > MAX_SAFE) c.fail(`tensor ${t} has more than 2^53 elements`, dAt);
      dims.push(Number(ne));
    }

    const typeAt = c.pos;
    const type = c.u32(`tensor ${t} type`);
    const info = ggmlType(type);
    if (info === undefined) c.fail(`tensor ${t} has unknown ggml type ${type}`, typeAt);
    if (dims[0]! % info.blockSize !== 0) {
      c.fail(`tensor ${t} of type ${info.name} has rows of ${dims[0]!} elements, not a multiple of its block size ${info.blockSize}`, typeAt);
    }
    const bytes = (elements / BigInt(info.blockSize)) * BigInt(info.typeSize);
    if (bytes > MAX_SAFE) c.fail(`tensor ${t} takes more than 2^53 bytes`, typeAt);

    const offAt = c.pos;
    const off = c.u64(`tensor ${t} offset`);
    if (off > MAX_SAFE) c.fail(`tensor ${t} offset ${off} is beyond any file`, offAt);
    out.push({ name, dims, type, typeName: info.name, offset: Number(off), elements: Number(elements), byteSize: Number(bytes), at });
  }
  return out;
}

/**
 * Checks every tensor's data range: aligned, inside the file, not overlapping another. With `packed`,
 * also ggml's stricter rule that each tensor starts where the previous one ends, padded.
 */
export function checkTensorRanges(c: Cursor, infos: readonly RawTensorInfo[], dataOffset: number, alignment: number, packed: boolean): void {
  const dataSize = c.total - dataOffset;
  let expected = 0;
  for (const t of infos) {
    const name = JSON.stringify(t.name);
    if (t.offset % alignment !== 0) c.fail(`tensor ${name} offset ${t.offset} is not a multiple of the alignment ${alignment}`, t.at);
    if (packed && t.offset !== expected) c.fail(`tensor ${name} has offset ${t.offset}, the packed layout puts it at ${expected}`, t.at);
    expected = t.offset + Math.ceil(t.byteSize / alignment) * alignment;
    if (t.offset + t.byteSize > dataSize) {
      c.fail(`tensor ${name} data [${t.offset}, ${t.offset + t.byteSize}) runs past the end of the data section (${Math.max(dataSize, 0)} bytes): the file is shorter than declared`, t.at);
    }
  }
  const sorted = [...infos].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (cur.offset < prev.offset + prev.byteSize) {
      c.fail(`tensor ${JSON.stringify(cur.name)} data at ${cur.offset} overlaps tensor ${JSON.stringify(prev.name)} [${prev.offset}, ${prev.offset + prev.byteSize})`, cur.at);
    }
  }
}
