/**
 * Encoders: a 32 x 256 tile (row-major, value (r, k) at r*256 + k) to one chunk of each kind, and a
 * whole [rows, cols] tensor to its chunks, zero-padded to whole tiles as the FLM converter pads.
 *
 * q4_1 rounding, which the GGUF packer relies on: per row r and 32-column group g, in f64,
 *   zero  = roundBF16(min), scale = roundBF16((max - min) / 15)      (bf16 round to nearest, ties even)
 *   code  = clamp(floor((x - zero) / scale + 0.5), 0, 15)            (round half up; 0 when scale is 0)
 * so |x - (code*scale + zero)| <= scale/2 + 15*|scale - (max-min)/15| + |zero - min|.
 */
import { Q4nxError } from '../../errors/index.js';
import { bf16ToBits, roundBF16 } from '../../numerics/float16.js';
import { CHUNK_BYTES, TILE_COLS, TILE_ROWS, TILE_VALUES, type ChunkKind, type Q8Layout } from './chunks.js';
import { q41CodeByte, q4kCodeByte, q8CodeByte } from './decode.js';
import type { Q4nxTensorInput } from './writer.js';

/** Writes a bf16 value as 2 little-endian bytes. */
export function putBf16(b: Uint8Array, off: number, v: number): void {
  const bits = bf16ToBits(v);
  b[off] = bits & 0xff;
  b[off + 1] = bits >> 8;
}

function finiteTile(values: ArrayLike<number>): void {
  if (values.length !== TILE_VALUES) throw new Q4nxError(null, `a tile has ${TILE_VALUES} values, got ${values.length}`);
  for (let i = 0; i < TILE_VALUES; i++) {
    if (!Number.isFinite(values[i]!)) throw new Q4nxError(null, `value at row ${Math.floor(i / TILE_COLS)}, column ${i % TILE_COLS} of the tile is not finite`);
  }
}

function checkedBf16(v: number, what: string): number {
  const b = roundBF16(v);
  if (!Number.isFinite(b)) throw new Q4nxError(null, `${what} ${v} overflows bf16`);
  return b;
}

function putNibble(b: Uint8Array, byte: number, r: number, code: number): void {
  b[byte] = (r & 1) === 0 ? (b[byte]! & 0xf0) | code : (b[byte]! & 0x0f) | (code << 4);
}

const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);

function groupRange(values: ArrayLike<number>, r: number, g: number): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let k = g * 32; k < g * 32 + 32; k++) {
    const x = values[r * TILE_COLS + k]!;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return [lo, hi];
}

/** Encodes a tile as a q4_1 chunk with min/max quantization per 32 columns of a row (rounding above). */
export function encodeQ41Tile(values: ArrayLike<number>): Uint8Array {
  finiteTile(values);
  const c = new Uint8Array(CHUNK_BYTES.q4_1);
  for (let g = 0; g < 8; g++) {
    for (let r = 0; r < TILE_ROWS; r++) {
      const [lo, hi] = groupRange(values, r, g);
      const zero = checkedBf16(lo, 'zero');
      const scale = checkedBf16((hi - lo) / 15, 'scale');
      putBf16(c, 2 * (g * 32 + r), scale);
      putBf16(c, 512 + 2 * (g * 32 + r), zero);
      for (let k = g * 32; k < g * 32 + 32; k++) {
        const code = scale === 0 ? 0 : clamp(Math.floor((values[r * TILE_COLS + k]! - zero) / scale + 0.5), 0, 15);
        putNibble(c, q41CodeByte(r, k), r, code);
      }
    }
  }
  return c;
}

/**
 * Encodes a tile as a Q4_K-like chunk: per row, bf16 M is the most negative (or largest) group minimum
 * over 255 and bf16 S the largest group step over 255; u8 min and scale are chosen so each group's
 * offset M*min does not pass its minimum and its step S*scale covers its range.
 */
export function encodeQ4kTile(values: ArrayLike<number>): Uint8Array {
  finiteTile(values);
  const c = new Uint8Array(CHUNK_BYTES.q4k);
  for (let r = 0; r < TILE_ROWS; r++) {
    const ranges = Array.from({ length: 8 }, (_, g) => groupRange(values, r, g));
    const far = ranges.reduce((m, [lo]) => (Math.abs(lo) > Math.abs(m) ? lo : m), 0);
    const M = checkedBf16(far / 255, 'M');
    const mins = ranges.map(([lo]) => (M === 0 ? 0 : clamp(M < 0 ? Math.ceil(lo / M) : Math.floor(lo / M), 0, 255)));
    const steps = ranges.map(([, hi], g) => Math.max(0, hi - M * mins[g]!) / 15);
    const S = checkedBf16(Math.max(...steps) / 255, 'S');
    putBf16(c, 4608 + 2 * r, S);
    putBf16(c, 4672 + 2 * r, M);
    for (let g = 0; g < 8; g++) {
      const scale = S === 0 ? 0 : clamp(Math.ceil(steps[g]! / S), 0, 255);
      const step = S * scale;
      const offset = M * mins[g]!;
      c[g * 32 + r] = scale;
      c[256 + g * 32 + r] = mins[g]!;
      for (let k = g * 32; k < g * 32 + 32; k++) {
        const code = step === 0 ? 0 : clamp(Math.floor((values[r * TILE_COLS + k]! - offset) / step + 0.5), 0, 15);
        putNibble(c, q4kCodeByte(r, k), r, code);
      }
    }
  }
  return c;
}

/** Encodes a tile as a Q8 chunk (absmax per 32 columns of a row, d = bf16(amax/127), codes rounded half away from 0). */
export function encodeQ8Tile(values: ArrayLike<number>, layout: Q8Layout): Uint8Array {
  finiteTile(values);
  const c = new Uint8Array(CHUNK_BYTES.q8);
  for (let g = 0; g < 8; g++) {
    for (let r = 0; r < TILE_ROWS; r++) {
      const [lo, hi] = groupRange(values, r, g);
      const d = checkedBf16(Math.max(-lo, hi) / 127, 'd');
      putBf16(c, 2 * (g * 32 + r), d);
      for (let k = g * 32; k < g * 32 + 32; k++) {
        const t = d === 0 ? 0 : values[r * TILE_COLS + k]! / d;
        const code = clamp(Math.sign(t) * Math.floor(Math.abs(t) + 0.5), -127, 127);
        c[q8CodeByte(layout, r, k)] = code & 0xff;
      }
    }
  }
  return c;
}

/** Encodes one tile as a chunk of the given kind (Q8 in the given code order, a by default). */
export function encodeTile(kind: ChunkKind, values: ArrayLike<number>, q8Layout: Q8Layout = 'a'): Uint8Array {
  switch (kind) {
    case 'q4_1': return encodeQ41Tile(values);
    case 'q4k': return encodeQ4kTile(values);
    case 'q8': return encodeQ8Tile(values, q8Layout);
  }
}

/** A tensor's chunks, row-major over its grid, and the grid [tile rows, tile cols]. */
export interface EncodedTensor {
  readonly kind: ChunkKind;
  readonly grid: readonly [number, number];
  readonly chunks: Uint8Array;
}

/** Encodes a row-major [rows, cols] matrix as chunks, padding with zeros to whole 32 x 256 tiles. */
export function encodeTensor(kind: ChunkKind, values: ArrayLike<number>, rows: number, cols: number, q8Layout: Q8Layout = 'a'): EncodedTensor {
  if (!(Number.isSafeInteger(rows) && Number.isSafeInteger(cols) && rows > 0 && cols > 0) || values.length !== rows * cols) {
    throw new Q4nxError(null, `a ${rows} x ${cols} matrix needs ${rows * cols} values, got ${values.length}`);
  }
  const p = Math.ceil(rows / TILE_ROWS);
  const q = Math.ceil(cols / TILE_COLS);
  const size = CHUNK_BYTES[kind];
  const chunks = new Uint8Array(p * q * size);
  const tile = new Float64Array(TILE_VALUES);
  for (let i = 0; i < p; i++) {
    for (let j = 0; j < q; j++) {
      tile.fill(0);
      for (let r = 0; r < TILE_ROWS && i * TILE_ROWS + r < rows; r++) {
        for (let k = 0; k < TILE_COLS && j * TILE_COLS + k < cols; k++) {
          tile[r * TILE_COLS + k] = values[(i * TILE_ROWS + r) * cols + j * TILE_COLS + k]!;
        }
      }
      chunks.set(encodeTile(kind, tile, q8Layout), (i * q + j) * size);
    }
  }
  return { kind, grid: [p, q], chunks };
}

/** The container entry of encoded chunks: I8 `[tiles, chunk]`, or `[tile rows, tile cols, chunk]` when `threeD`. */
export function quantizedTensor(name: string, t: EncodedTensor, threeD = false): Q4nxTensorInput {
  const [p, q] = t.grid;
  const size = CHUNK_BYTES[t.kind];
  return { name, dtype: 'I8', shape: threeD ? [p, q, size] : [p * q, size], data: t.chunks };
}
