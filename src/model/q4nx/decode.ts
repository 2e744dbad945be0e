/**
 * Decoders: one chunk to a 32 x 256 tile (row-major, value (r, k) at r*256 + k), and a whole tensor to
 * [rows, cols]. Byte orders follow docs/Q4NX.md; every bf16 is 2 little-endian bytes, the top half of
 * an f32. Each value is computed in f64 from exact products and rounded once to f32 when stored, which
 * equals the f32 arithmetic of the reference decoders (their products are exact in f32 too).
 */
import { Q4nxError } from '../../errors/index.js';
import { bf16FromBits } from '../../numerics/float16.js';
import { CHUNK_BYTES, TILE_COLS, TILE_ROWS, TILE_VALUES, chunkAt, type ChunkKind, type Q8Layout, type QuantLayout } from './chunks.js';

/** The bf16 at byte `off` of `b`, as a number. */
export function bf16At(b: Uint8Array, off: number): number {
  return bf16FromBits(b[off]! | (b[off + 1]! << 8));
}

/** The byte, within a q4_1 chunk, holding the code of (r, k); the low nibble holds even rows. */
export function q41CodeByte(r: number, k: number): number {
  return 1024 + (r >> 4) * 2048 + k * 8 + ((r & 15) >> 1);
}

/** The byte, within a Q4_K-like chunk, holding the code of (r, k); the low nibble holds even rows. */
export function q4kCodeByte(r: number, k: number): number {
  return 512 + k * 16 + (r >> 1);
}

/** The byte, within a Q8 chunk, holding the int8 code of (r, k) in the given code order. */
export function q8CodeByte(layout: Q8Layout, r: number, k: number): number {
  return layout === 'a' ? 512 + k * 32 + r : 512 + (r >> 4) * 4096 + k * 16 + (r & 15);
}

function need(chunk: Uint8Array, kind: ChunkKind): void {
  if (chunk.length < CHUNK_BYTES[kind]) throw new Q4nxError(null, `a ${kind} chunk has ${CHUNK_BYTES[kind]} bytes, got ${chunk.length}`);
}

function tileOut(out: Float32Array | undefined): Float32Array {
  if (out === undefined) return new Float32Array(TILE_VALUES);
  if (out.length < TILE_VALUES) throw new Q4nxError(null, `a tile needs ${TILE_VALUES} values of output, got ${out.length}`);
  return out;
}

/** Decodes a q4_1 chunk: w = code*scale + zero, scale and zero bf16 at plane index g*32 + r. */
export function decodeQ41Tile(chunk: Uint8Array, out?: Float32Array): Float32Array {
  need(chunk, 'q4_1');
  const o = tileOut(out);
  for (let g = 0; g < 8; g++) {
    for (let r = 0; r < TILE_ROWS; r++) {
      const i = g * 32 + r;
      const scale = bf16At(chunk, 2 * i);
      const zero = bf16At(chunk, 512 + 2 * i);
      const shift = (r & 1) * 4;
      for (let k = g * 32; k < g * 32 + 32; k++) {
        const code = (chunk[q41CodeByte(r, k)]! >> shift) & 15;
        o[r * TILE_COLS + k] = code * scale + zero;
      }
    }
  }
  return o;
}

/** Decodes a Q4_K-like chunk: w = S[r]*scale*code + M[r]*min, u8 scale and min at g*32 + r. */
export function decodeQ4kTile(chunk: Uint8Array, out?: Float32Array): Float32Array {
  need(chunk, 'q4k');
  const o = tileOut(out);
  for (let r = 0; r < TILE_ROWS; r++) {
    const S = bf16At(chunk, 4608 + 2 * r);
    const M = bf16At(chunk, 4672 + 2 * r);
    const shift = (r & 1) * 4;
    for (let g = 0; g < 8; g++) {
      const step = S * chunk[g * 32 + r]!;
      const offset = M * chunk[256 + g * 32 + r]!;
      for (let k = g * 32; k < g * 32 + 32; k++) {
        const code = (chunk[q4kCodeByte(r, k)]! >> shift) & 15;
        o[r * TILE_COLS + k] = step * code + offset;
      }
    }
  }
  return o;
}

/** Decodes a Q8 chunk in the given code order: w = d*code, d bf16 at g*32 + r, codes int8. */
export function decodeQ8Tile(chunk: Uint8Array, layout: Q8Layout, out?: Float32Array): Float32Array {
  need(chunk, 'q8');
  const o = tileOut(out);
  for (let g = 0; g < 8; g++) {
    for (let r = 0; r < TILE_ROWS; r++) {
      const d = bf16At(chunk, 2 * (g * 32 + r));
      for (let k = g * 32; k < g * 32 + 32; k++) {
        const b = chunk[q8CodeByte(layout, r, k)]!;
        o[r * TILE_COLS + k] = d * (b > 127 ? b - 256 : b);
      }
    }
  }
  return o;
}

/** Decodes one chunk of any kind; a Q8 chunk needs its code order, which the file does not record. */
export function decodeTile(kind: ChunkKind, chunk: Uint8Array, q8Layout: Q8Layout | null = null, out?: Float32Array): Float32Array {
  switch (kind) {
    case 'q4_1': return decodeQ41Tile(chunk, out);
    case 'q4k': return decodeQ4kTile(chunk, out);
    case 'q8':
      if (q8Layout === null) throw new Q4nxError(null, 'a Q8 chunk needs its code layout (a or b): the file does not say; run detect-q8');
      return decodeQ8Tile(chunk, q8Layout, out);
  }
}

/** Decodes a whole tensor to its logical [rows, cols], row-major; padding rows and columns are dropped. */
export function decodeTensor(data: Uint8Array, layout: QuantLayout, q8Layout: Q8Layout | null = null): Float32Array {
  if (layout.grid === null || layout.logical === null) {
    throw new Q4nxError(layout.name, `a [tiles, ${layout.chunkBytes}] tensor needs its logical [rows, cols] to be decoded`);
  }
  const [p, q] = layout.grid;
  const [rows, cols] = layout.logical;
  if (p * q > layout.tiles) throw new Q4nxError(layout.name, `grid ${p} x ${q} needs ${p * q} tiles, the tensor has ${layout.tiles}`);
  const out = new Float32Array(rows * cols);
  const tile = new Float32Array(TILE_VALUES);
  for (let i = 0; i < p && i * TILE_ROWS < rows; i++) {
    for (let j = 0; j < q && j * TILE_COLS < cols; j++) {
      decodeTile(layout.kind, chunkAt(data, layout, i * q + j), q8Layout, tile);
      const nr = Math.min(TILE_ROWS, rows - i * TILE_ROWS);
      const nc = Math.min(TILE_COLS, cols - j * TILE_COLS);
      for (let r = 0; r < nr; r++) {
        const src = tile.subarray(r * TILE_COLS, r * TILE_COLS + nc);
        out.set(src, (i * TILE_ROWS + r) * cols + j * TILE_COLS);
      }
    }
  }
  return out;
}
