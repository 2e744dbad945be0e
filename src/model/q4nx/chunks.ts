/**
 * Tiles and chunk kinds. A quantized weight [rows, cols] is cut into 32 x 256 tiles stored row-major
 * over the grid, one chunk per tile; the chunk kind is the last dimension of the tensor's shape, which
 * is `[tiles, chunk]` or `[tile rows, tile cols, chunk]` (docs/Q4NX.md, "Tiles").
 */
import { Q4nxError } from '../../errors/index.js';
import { quote } from '../../io/escape.js';
import type { Q4nxTensorInfo } from './container.js';

/** Rows of one tile. */
export const TILE_ROWS = 32;
/** Columns of one tile. */
export const TILE_COLS = 256;
/** Columns sharing one scale (and zero): a group. */
export const GROUP_COLS = 32;
/** Values in one tile. */
export const TILE_VALUES = TILE_ROWS * TILE_COLS;

/** The three chunk kinds: q4_1 (5120 B), Q4_K-like (4736 B), Q8 (8704 B). */
export type ChunkKind = 'q4_1' | 'q4k' | 'q8';

/** The byte size of each chunk kind. */
export const CHUNK_BYTES = { q4_1: 5120, q4k: 4736, q8: 8704 } as const satisfies Record<ChunkKind, number>;

/** The two Q8 code orders: a = byte k*32 + r; b = byte (r/16)*4096 + k*16 + r%16 (after the scales). */
export type Q8Layout = 'a' | 'b';

/** The chunk kind of a chunk byte size, or null for a size no kind has. */
export function chunkKindOf(bytes: number): ChunkKind | null {
  for (const k of ['q4_1', 'q4k', 'q8'] as const) if (CHUNK_BYTES[k] === bytes) return k;
  return null;
}

/** How a quantized tensor lies: its kind, its tiles, and its grid and logical shape when known. */
export interface QuantLayout {
  readonly name: string;
  readonly kind: ChunkKind;
  readonly chunkBytes: number;
  readonly tiles: number;
  /** [tile rows, tile cols]: from a 3-D shape, or from the logical shape for a 2-D one; else null. */
  readonly grid: readonly [number, number] | null;
  /** [rows, cols] the tensor decodes to: given, or the whole grid; null for a 2-D tensor without one. */
  readonly logical: readonly [number, number] | null;
}

/** True for a tensor stored as chunks: a byte dtype (I8, as the converter writes it, or U8) of rank 2 or more. */
export function isQuantized(info: Q4nxTensorInfo): boolean {
  return (info.dtype === 'I8' || info.dtype === 'U8') && info.shape.length >= 2;
}

/** The `__metadata__` key under which our writer records a 2-D tensor's logical "rows,cols" (ours, not FLM's). */
export function logicalShapeKey(name: string): string {
  return `q4nx.logical_shape.${name}`;
}

/** The logical [rows, cols] recorded for a tensor in `__metadata__`, or null; a malformed entry is refused. */
export function logicalShapeFromMetadata(metadata: Readonly<Record<string, string>> | null, name: string): [number, number] | null {
  const v = metadata?.[logicalShapeKey(name)];
  if (v === undefined) return null;
  const m = /^(\d{1,15}),(\d{1,15})$/.exec(v);
  if (m === null) throw new Q4nxError(name, `__metadata__ ${logicalShapeKey(name)} = ${quote(v)} is not "rows,cols"`);
  return [Number(m[1]), Number(m[2])];
}

const ceilDiv = (a: number, b: number): number => Math.ceil(a / b);

/**
 * The layout of a quantized tensor; refuses an unknown chunk size, a rank other than 2 or 3, and a
 * tensor with fewer tiles than its grid or logical shape needs.
 */
export function quantLayout(info: Q4nxTensorInfo, logical: readonly [number, number] | null = null): QuantLayout {
  const { name, shape } = info;
  const last = shape[shape.length - 1] ?? 0;
  const kind = chunkKindOf(last);
  if (kind === null) throw new Q4nxError(name, `unknown chunk size ${last} (known: 5120 q4_1, 4736 q4k, 8704 q8)`);
  if (shape.length !== 2 && shape.length !== 3) throw new Q4nxError(name, `a chunked tensor has rank 2 or 3, this one [${shape.join(', ')}]`);
  const tiles = shape.slice(0, -1).reduce((p, d) => p * d, 1);
  if (tiles === 0) throw new Q4nxError(name, `shape [${shape.join(', ')}] holds no tile, shorter than its layout needs`);
  let grid: [number, number] | null = shape.length === 3 ? [shape[0]!, shape[1]!] : null;
  if (logical !== null) {
    const [rows, cols] = logical;
    if (!(rows > 0 && cols > 0)) throw new Q4nxError(name, `logical shape [${rows}, ${cols}] is empty`);
    const need: [number, number] = [ceilDiv(rows, TILE_ROWS), ceilDiv(cols, TILE_COLS)];
    if (grid === null) {
      // A 2-D tensor's grid width is the logical width in tiles: K is padded to a multiple of 256.
      if (tiles % need[1] !== 0) throw new Q4nxError(name, `${tiles} tiles are not whole tile rows of ${need[1]} tiles for ${cols} columns`);
      grid = [tiles / need[1], need[1]];
    }
    if (grid[0] < need[0] || grid[1] < need[1]) {
      throw new Q4nxError(name, `${rows} x ${cols} needs a ${need[0]} x ${need[1]} tile grid; the tensor holds ${grid[0]} x ${grid[1]}, shorter than its layout needs`);
    }
  }
  const whole: [number, number] | null = grid === null ? null : [grid[0] * TILE_ROWS, grid[1] * TILE_COLS];
  return { name, kind, chunkBytes: CHUNK_BYTES[kind], tiles, grid, logical: logical === null ? whole : [logical[0], logical[1]] };
}

/** The bytes of chunk `i` of a tensor's data (no copy); refuses data shorter than the chunk needs. */
export function chunkAt(data: Uint8Array, layout: QuantLayout, i: number): Uint8Array {
  const end = (i + 1) * layout.chunkBytes;
  if (!(i >= 0 && i < layout.tiles) || end > data.length) {
    throw new Q4nxError(layout.name, `chunk ${i} needs bytes up to ${end}, the tensor has ${data.length}`);
  }
  return data.subarray(end - layout.chunkBytes, end);
}
