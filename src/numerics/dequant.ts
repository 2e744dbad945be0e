/**
 * The exact value of every element of a quantized tensor, in f64: the oracle's meaning of a quantized
 * weight. ggml's own dequantizers round each step to f32; these do not round at all. Every ggml value is
 * exact in f64 (its terms are small integers times f16 scales, whose sum needs at most 51 bits), and so
 * is a q4nx_q41 value `code*scale + zero` unless its bf16 scale and zero lie more than 2^45 apart, where
 * the one f64 addition rounds. Layouts: ggml-common.h's block structs and docs/Q4NX.md's q4_1 chunk.
 */
import type { QuantDType, QuantTensor } from './dtype.js';
import { bf16FromBits, f16FromBits } from './float16.js';
import { QUANT_BLOCKS } from './quant.js';

function f16(b: Uint8Array, at: number): number {
  return f16FromBits(b[at]! | (b[at + 1]! << 8));
}

function bf16(b: Uint8Array, at: number): number {
  return bf16FromBits(b[at]! | (b[at + 1]! << 8));
}

function int8(v: number): number {
  return v > 127 ? v - 256 : v;
}

/** Decodes one ggml block at byte `o` of `b` into `out[at .. at + block size)`. */
type BlockDecoder = (b: Uint8Array, o: number, out: Float64Array, at: number) => void;

// The 6-bit scale and min of sub-block `s` of a q4_k block's 12 packed bytes at `p` (ggml's get_scale_min_k4).
function scaleMin(b: Uint8Array, p: number, s: number): [number, number] {
  if (s < 4) return [b[p + s]! & 63, b[p + s + 4]! & 63];
  const hi = b[p + s + 4]!;
  return [(hi & 15) | ((b[p + s - 4]! >> 6) << 4), (hi >> 4) | ((b[p + s]! >> 6) << 4)];
}

const GGML: { readonly [Q in Exclude<QuantDType, 'q4nx_q41'>]: BlockDecoder } = {
  // d: f16, then 16 bytes: element j is the low nibble of byte j, element j + 16 its high nibble; value d * (q - 8).
  q4_0(b, o, out, at) {
    const d = f16(b, o);
    for (let j = 0; j < 16; j++) {
      const q = b[o + 2 + j]!;
      out[at + j] = d * ((q & 15) - 8);
      out[at + j + 16] = d * ((q >> 4) - 8);
    }
  },
  // d, m: f16, then 16 bytes of nibbles as q4_0; value d * q + m.
  q4_1(b, o, out, at) {
    const d = f16(b, o);
    const m = f16(b, o + 2);
    for (let j = 0; j < 16; j++) {
      const q = b[o + 4 + j]!;
      out[at + j] = d * (q & 15) + m;
      out[at + j + 16] = d * (q >> 4) + m;
    }
  },
  // d: f16, then 32 int8; value d * q.
  q8_0(b, o, out, at) {
    const d = f16(b, o);
    for (let j = 0; j < 32; j++) out[at + j] = d * int8(b[o + 2 + j]!);
  },
  // d, dmin: f16; 12 bytes of 6-bit scales and mins; 128 bytes of nibbles, sub-block s of 32 in the
  // low (s even) or high (s odd) nibbles of bytes 32*(s/2) ..; value d*sc*q - dmin*m.
  q4_k(b, o, out, at) {
    const d = f16(b, o);
    const dmin = f16(b, o + 2);
    for (let s = 0; s < 8; s++) {
      const [sc, m] = scaleMin(b, o + 4, s);
      const step = d * sc;
      const low = dmin * m;
      const src = o + 16 + (s >> 1) * 32;
      const shift = (s & 1) * 4;
      for (let l = 0; l < 32; l++) out[at + s * 32 + l] = step * ((b[src + l]! >> shift) & 15) - low;
    }
  },
  // ql[128] low 4 bits, qh[64] high 2 bits, scales int8[16], d f16; two halves of 128 elements, each
  // four runs of 32 (g = 0..3) from ql's low/high nibbles and qh's bit pairs 2g; value d * sc * (q - 32).
  q6_k(b, o, out, at) {
    const d = f16(b, o + 208);
    for (let h = 0; h < 2; h++) {
      const ql = o + h * 64;
      const qh = o + 128 + h * 32;
      const sc = o + 192 + h * 8;
      for (let e = 0; e < 128; e++) {
        const g = e >> 5;
        const l = e & 31;
        const lowByte = b[ql + l + (g & 1) * 32]!;
        const low = g < 2 ? lowByte & 15 : lowByte >> 4;
        const q = (low | (((b[qh + l]! >> (2 * g)) & 3) << 4)) - 32;
        out[at + h * 128 + e] = d * int8(b[sc + (e >> 4)]!) * q;
      }
    }
  },
};

// Row r (0..31) of a q4_1 tile at byte `o`, columns [0, 256): scale and zero bf16 at plane index
// g*32 + r (g = column / 32), code nibble at 1024 + (r/16)*2048 + c*8 + (r%16)/2, low nibble for even r.
function q4nxTileRow(b: Uint8Array, o: number, r: number, out: Float64Array, at: number): void {
  const shift = (r & 1) * 4;
  const codes = o + 1024 + (r >> 4) * 2048 + ((r & 15) >> 1);
  for (let g = 0; g < 8; g++) {
    const scale = bf16(b, o + 2 * (g * 32 + r));
    const zero = bf16(b, o + 512 + 2 * (g * 32 + r));
    for (let c = g * 32; c < g * 32 + 32; c++) out[at + c] = ((b[codes + c * 8]! >> shift) & 15) * scale + zero;
  }
}

/**
 * Writes the exact values of row `row` of `t` (rows counted row-major over every axis but the last, so
 * a `[N, K]` tensor has N rows of K values) into `out[0 .. K)`.
 */
export function dequantRow(t: QuantTensor, row: number, out: Float64Array): void {
  const blk = QUANT_BLOCKS[t.dtype];
  const k = t.shape[t.shape.length - 1]!;
  const perRow = k / blk.cols;
  if (t.dtype === 'q4nx_q41') {
    const n = t.shape[t.shape.length - 2]!;
    const matrix = Math.floor(row / n);
    const r = row % n;
    const tileRow = matrix * (n / blk.rows) + Math.floor(r / blk.rows);
    for (let j = 0; j < perRow; j++) q4nxTileRow(t.bytes, (tileRow * perRow + j) * blk.bytes, r % blk.rows, out, j * blk.cols);
    return;
  }
  const decode = GGML[t.dtype];
  for (let j = 0; j < perRow; j++) decode(t.bytes, (row * perRow + j) * blk.bytes, out, j * blk.cols);
}

/** The number of rows of `t`: its elements over the last axis's extent (0 for an empty tensor). */
function quantRows(t: QuantTensor): number {
  const k = t.shape[t.shape.length - 1]!;
  let n = 1;
  for (const d of t.shape) n *= d;
  return k === 0 ? 0 : n / k;
}

/** Every element of `t`, exact, row-major. */
export function dequantize(t: QuantTensor): Float64Array {
  const k = t.shape[t.shape.length - 1]!;
  const rows = quantRows(t);
  const out = new Float64Array(rows * k);
  for (let r = 0; r < rows; r++) dequantRow(t, r, out.subarray(r * k, (r + 1) * k));
  return out;
}
