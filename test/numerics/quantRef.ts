/**
 * An independent reference for the quantized dtypes, written from the block layouts themselves
 * (ggml-common.h's structs and ggml's reference dequantizers; /work/shared/Q4NX_LAYOUT.md's q4_1 chunk),
 * sharing no code with src/numerics/dequant.ts or src/model/gguf: its own f16 and bf16 decoding, each
 * block decoded in ggml's loop order (q4_k in 64-value steps, q6_k by CUDA-style thread lanes) and the
 * Q4NX codes by the `rb*4096 + k*16 + r` spelling of the layout. Values are exact (f64, unrounded).
 * Also random block bytes with finite scales, for round trips.
 */
import type { QuantDType } from '../../src/ir/types.js';
import { mulberry32 } from '../../src/numerics/random.js';

/** Values per block along the last axis, rows per block, bytes per block: the layouts' own numbers. */
export const LAYOUT: Readonly<Record<QuantDType, { cols: number; rows: number; bytes: number }>> = {
  q4_0: { cols: 32, rows: 1, bytes: 2 + 16 },
  q4_1: { cols: 32, rows: 1, bytes: 2 + 2 + 16 },
  q8_0: { cols: 32, rows: 1, bytes: 2 + 32 },
  q4_k: { cols: 256, rows: 1, bytes: 2 + 2 + 12 + 128 },
  q6_k: { cols: 256, rows: 1, bytes: 128 + 64 + 16 + 2 },
  q4nx_q41: { cols: 256, rows: 32, bytes: 512 + 512 + 4096 },
};

/** IEEE half from its bits: sign, 5-bit exponent (bias 15), 10-bit fraction. */
export function half(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const f = bits & 0x3ff;
  if (e === 0) return sign * f * 2 ** -24;
  if (e === 31) return f === 0 ? sign * Infinity : NaN;
  return sign * (1 + f / 1024) * 2 ** (e - 15);
}

/** bfloat16 from its bits: the top half of an f32. */
export function brain(bits: number): number {
  return new Float32Array(Uint32Array.of((bits & 0xffff) * 65536).buffer)[0]!;
}

const u16 = (b: Uint8Array, at: number): number => b[at]! + 256 * b[at + 1]!;
const s8 = (v: number): number => (v >= 128 ? v - 256 : v);

/** One ggml block decoded to its values, in ggml's order. */
function ggmlBlock(dtype: Exclude<QuantDType, 'q4nx_q41'>, b: Uint8Array): number[] {
  const y: number[] = [];
  switch (dtype) {
    case 'q4_0': {
      const d = half(u16(b, 0));
      for (let j = 0; j < 32; j++) y[j] = d * ((j < 16 ? b[2 + j]! & 15 : b[2 + j - 16]! >> 4) - 8);
      return y;
    }
    case 'q4_1': {
      const d = half(u16(b, 0));
      const m = half(u16(b, 2));
      for (let j = 0; j < 32; j++) y[j] = d * (j < 16 ? b[4 + j]! & 15 : b[4 + j - 16]! >> 4) + m;
      return y;
    }
    case 'q8_0': {
      const d = half(u16(b, 0));
      for (let j = 0; j < 32; j++) y[j] = d * s8(b[2 + j]!);
      return y;
    }
    case 'q4_k': {
      const d = half(u16(b, 0));
      const dmin = half(u16(b, 2));
      const sc = b.subarray(4, 16);
      const scaleMin = (j: number): [number, number] => (j < 4
        ? [sc[j]! & 63, sc[j + 4]! & 63]
        : [(sc[j + 4]! & 0xf) | ((sc[j - 4]! >> 6) << 4), (sc[j + 4]! >> 4) | ((sc[j]! >> 6) << 4)]);
      let q = 16;
      let is = 0;
      for (let j = 0; j < 256; j += 64) {
        const [s1, m1] = scaleMin(is);
        const [s2, m2] = scaleMin(is + 1);
        for (let l = 0; l < 32; l++) y.push(d * s1 * (b[q + l]! & 0xf) - dmin * m1);
        for (let l = 0; l < 32; l++) y.push(d * s2 * (b[q + l]! >> 4) - dmin * m2);
        q += 32;
        is += 2;
      }
      return y;
    }
    case 'q6_k': {
      const d = half(u16(b, 208));
      for (let tid = 0; tid < 64; tid++) {
        const ip = tid >> 5;
        const il = tid & 31;
        const is = 8 * ip + (il >> 4);
        const ql = 64 * ip + il;
        const qh = b[128 + 32 * ip + il]!;
        const sc = (k: number) => s8(b[192 + is + k]!);
        const out = 128 * ip + il;
        y[out] = d * sc(0) * (((b[ql]! & 0xf) | (((qh >> 0) & 3) << 4)) - 32);
        y[out + 32] = d * sc(2) * (((b[ql + 32]! & 0xf) | (((qh >> 2) & 3) << 4)) - 32);
        y[out + 64] = d * sc(4) * (((b[ql]! >> 4) | (((qh >> 4) & 3) << 4)) - 32);
        y[out + 96] = d * sc(6) * (((b[ql + 32]! >> 4) | (((qh >> 6) & 3) << 4)) - 32);
      }
      return y;
    }
  }
}

/** Every value of a quantized tensor of `shape` over `bytes`, row-major, exact. */
export function refDequant(dtype: QuantDType, shape: readonly number[], bytes: Uint8Array): Float64Array {
  const k = shape[shape.length - 1]!;
  const n = shape.reduce((p, d) => p * d, 1);
  const out = new Float64Array(n);
  const lay = LAYOUT[dtype];
  if (dtype !== 'q4nx_q41') {
    for (let blk = 0; blk * lay.cols < n; blk++) {
      const vals = ggmlBlock(dtype, bytes.subarray(blk * lay.bytes, (blk + 1) * lay.bytes));
      out.set(vals, blk * lay.cols);
    }
    return out;
  }
  const rows = shape[shape.length - 2]!;
  const tilesPerRow = k / 256;
  for (let flat = 0; flat < n; flat++) {
    const col = flat % k;
    const row = Math.floor(flat / k) % rows;
    const matrix = Math.floor(flat / (k * rows));
    const tile = matrix * (rows / 32) * tilesPerRow + Math.floor(row / 32) * tilesPerRow + Math.floor(col / 256);
    const base = tile * 5120;
    const r = row % 32;
    const c = col % 256;
    const plane = 2 * (Math.floor(c / 32) * 32 + r);
    // V1's spelling of the code address: weight index rb*4096 + k*16 + r%16, byte i/2, low nibble when i is even.
    const i = Math.floor(r / 16) * 4096 + c * 16 + (r % 16);
    const byte = bytes[base + 1024 + Math.floor(i / 2)]!;
    const code = i % 2 === 0 ? byte & 15 : byte >> 4;
    out[flat] = code * brain(u16(bytes, base + plane)) + brain(u16(bytes, base + 512 + plane));
  }
  return out;
}

/** The byte offsets of the f16 (or, for q4nx_q41, bf16) scale fields of one block. */
function scaleFields(dtype: QuantDType): number[] {
  switch (dtype) {
    case 'q4_0': case 'q8_0': return [0];
    case 'q4_1': case 'q4_k': return [0, 2];
    case 'q6_k': return [208];
    case 'q4nx_q41': return Array.from({ length: 512 }, (_, j) => 2 * j);
  }
}

/**
 * Random bytes of a quantized tensor of `shape` with every scale a finite value (any sign, subnormals
 * included) of moderate size, so the values are numbers a model could hold.
 */
export function randomBlocks(dtype: QuantDType, shape: readonly number[], seed: number): Uint8Array {
  const rand = mulberry32(seed);
  const lay = LAYOUT[dtype];
  const n = shape.reduce((p, d) => p * d, 1);
  const blocks = n / (lay.cols * lay.rows);
  const bytes = new Uint8Array(blocks * lay.bytes);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(rand() * 256);
  for (let blk = 0; blk < blocks; blk++) {
    for (const at of scaleFields(dtype)) {
      const o = blk * lay.bytes + at;
      // f16: exponents 1..20 of 31 (magnitudes 2^-14 .. 2^5), now and then a subnormal; bf16: 2^-20 .. 2^4.
      const sign = rand() < 0.5 ? 0x8000 : 0;
      const bits = dtype === 'q4nx_q41'
        ? sign | ((107 + Math.floor(rand() * 24)) << 7) | Math.floor(rand() * 128)
        : sign | ((rand() < 0.05 ? 0 : 1 + Math.floor(rand() * 20)) << 10) | Math.floor(rand() * 1024);
      bytes[o] = bits & 0xff;
      bytes[o + 1] = bits >> 8;
    }
  }
  return bytes;
}
