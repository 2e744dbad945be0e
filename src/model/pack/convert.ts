/**
 * One planned tensor converted a tile row (32 HF rows) at a time: q4_1 chunks made from the source's
 * own codes (Q4_0, Q4_1, Q4_K), or from its dequantized values by the q4nx encoder (min/max per 32
 * columns), or bf16 values. Rows past the tensor and columns past a multiple of 256 are zero tiles,
 * as FLM's converter pads them.
 */
import { Q4nxError } from '../../errors/index.js';
import { dequantize } from '../gguf/dequant.js';
import { quantTypeInfo, type QuantType } from '../gguf/ggmlTypes.js';
import { CHUNK_BYTES, TILE_COLS, TILE_ROWS, TILE_VALUES } from '../q4nx/chunks.js';
import { q41CodeByte } from '../q4nx/decode.js';
import { encodeQ41Tile, putBf16 } from '../q4nx/encode.js';
import type { FileReader } from './fileRange.js';
import type { PlannedTensor } from './plan.js';
import { bf16Round, readQ4Row, type ExactType } from './q4Source.js';

/** The bytes one source row (ne0 elements) takes. */
export function sourceRowBytes(type: QuantType, cols: number): number {
  const info = quantTypeInfo(type);
  return (cols / info.blockSize) * info.typeSize;
}

/** Reads `count` source rows from `first` on, as raw bytes. */
export function readSourceRows(r: FileReader, t: PlannedTensor, first: number, count: number): Uint8Array {
  const rb = sourceRowBytes(t.sourceType, t.cols);
  if (t.rowOf === undefined) return r.read(t.source.fileOffset + first * rb, count * rb);
  // Rows in HF order gathered one by one from where the source holds them.
  const out = new Uint8Array(count * rb);
  for (let i = 0; i < count; i++) out.set(r.read(t.source.fileOffset + t.rowOf(first + i) * rb, rb), i * rb);
  return out;
}

/** Reads `count` source rows, dequantized to f32 as ggml dequantizes them. */
export function readSourceFloats(r: FileReader, t: PlannedTensor, first: number, count: number): Float32Array {
  const at = t.rowOf === undefined ? t.source.fileOffset + first * sourceRowBytes(t.sourceType, t.cols) : undefined;
  return dequantize(t.sourceType, readSourceRows(r, t, first, count), count * t.cols, at);
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** f32 values to bf16 bit patterns, round to nearest, ties to even (NaN stays a quiet NaN). */
function toBf16Bytes(x: Float32Array): Uint8Array {
  const out = new Uint8Array(x.length * 2);
  for (let i = 0; i < x.length; i++) {
    f32[0] = x[i]!;
    const u = u32[0]!;
    const bits = Number.isNaN(x[i]!) ? 0x7fc0 : ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
    out[2 * i] = bits & 0xff;
    out[2 * i + 1] = bits >>> 8;
  }
  return out;
}

/** Rows per bf16 piece: about a million values, so memory stays flat on a 150k-row embedding. */
const BF16_PIECE_VALUES = 1 << 20;

function bf16Tensor(r: FileReader, t: PlannedTensor, sink: (b: Uint8Array, sourceBytes: number) => void): void {
  const step = Math.max(1, Math.floor(BF16_PIECE_VALUES / t.cols));
  for (let first = 0; first < t.rows; first += step) {
    const n = Math.min(step, t.rows - first);
    const raw = readSourceRows(r, t, first, n);
    // A bf16 source moves bit for bit.
    sink(t.sourceType === 'BF16' ? raw : toBf16Bytes(dequantize(t.sourceType, raw, n * t.cols)), raw.length);
  }
}

/** q4_1 chunks of one tile row from an exact type: codes copied, scale and zero rounded to bf16. */
function repackTileRow(raw: Uint8Array, t: PlannedTensor, n: number, q: number, rowBytes: number): Uint8Array {
  const out = new Uint8Array(q * CHUNK_BYTES.q4_1);
  const groups = t.cols / 32;
  const scales = new Float64Array(groups);
  const zeros = new Float64Array(groups);
  const codes = new Uint8Array(t.cols);
  for (let r = 0; r < n; r++) {
    readQ4Row(t.sourceType as ExactType, raw.subarray(r * rowBytes, (r + 1) * rowBytes), t.cols, scales, zeros, codes);
    const shift = (r & 1) * 4;
    for (let G = 0; G < groups; G++) {
      const base = (G >> 3) * CHUNK_BYTES.q4_1;
      const g = G & 7;
      putBf16(out, base + 2 * (g * 32 + r), bf16Round(scales[G]!));
      putBf16(out, base + 512 + 2 * (g * 32 + r), bf16Round(zeros[G]!));
      for (let l = 0; l < 32; l++) {
        const at = base + q41CodeByte(r, g * 32 + l);
        out[at] = out[at]! | (codes[G * 32 + l]! << shift);
      }
    }
  }
  return out;
}

/** q4_1 chunks of one tile row requantized from f32 values by the q4nx encoder. */
function requantTileRow(x: Float32Array, t: PlannedTensor, i: number, n: number, q: number): Uint8Array {
  const out = new Uint8Array(q * CHUNK_BYTES.q4_1);
  const tile = new Float64Array(TILE_VALUES);
  for (let j = 0; j < q; j++) {
    tile.fill(0);
    const nc = Math.min(TILE_COLS, t.cols - j * TILE_COLS);
    for (let r = 0; r < n; r++) {
      for (let k = 0; k < nc; k++) tile[r * TILE_COLS + k] = x[r * t.cols + j * TILE_COLS + k]!;
    }
    try {
      out.set(encodeQ41Tile(tile), j * CHUNK_BYTES.q4_1);
    } catch (e) {
      if (e instanceof Q4nxError) throw new Q4nxError(t.name, `tile (${i}, ${j}): ${e.reason}`);
      throw e;
    }
  }
  return out;
}

/** Converts one tensor, passing each piece of stored bytes (and the source bytes it came from) to `sink`. */
export function convertTensor(r: FileReader, t: PlannedTensor, sink: (b: Uint8Array, sourceBytes: number) => void): void {
  if (t.store === 'bf16') { bf16Tensor(r, t, sink); return; }
  if (t.store === 'f32') {
    // A vector (a bias): its f32 values, little-endian, as ggml dequantizes them.
    const raw = readSourceRows(r, t, 0, t.rows);
    const x = readSourceFloats(r, t, 0, t.rows);
    sink(new Uint8Array(x.buffer, x.byteOffset, x.byteLength), raw.length); return;
  }
  const q = Math.ceil(t.cols / TILE_COLS);
  const rowBytes = sourceRowBytes(t.sourceType, t.cols);
  for (let first = 0; first < t.rows; first += TILE_ROWS) {
    const n = Math.min(TILE_ROWS, t.rows - first);
    const raw = readSourceRows(r, t, first, n);
    const chunks = t.method === 'repack'
      ? repackTileRow(raw, t, n, q, rowBytes)
      : requantTileRow(dequantize(t.sourceType, raw, n * t.cols), t, first / TILE_ROWS, n, q);
    sink(chunks, raw.length);
  }
}
