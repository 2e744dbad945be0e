/**
 * Dequantization of ggml blocks to Float32Array, from the public block layouts of ggml-common.h.
 * f32, not f64, is the output: it is what ggml itself dequantizes to, so each step here is rounded to
 * f32 (Math.fround) exactly as ggml's scalar C rounds it without FMA, and a value equals ggml's bit for
 * bit. Values come out in file order: ne[0] fastest.
 */
import { GgufError } from '../../errors/index.js';
import { bf16FromBits, f16FromBits } from '../../numerics/float16.js';
import { QK_K, asQuantType, ggmlType, type QuantType, quantTypeInfo } from './ggmlTypes.js';

let halfTable: Float32Array | undefined;

/** The f32 value of every f16 bit pattern, built once: decoding a half is then one load. */
function halves(): Float32Array {
  if (halfTable === undefined) {
    halfTable = new Float32Array(65536);
    for (let b = 0; b < 65536; b++) halfTable[b] = f16FromBits(b);
  }
  return halfTable;
}

const fr = Math.fround;

/** The 6-bit scale and min of sub-block j of a Q4_K/Q5_K super-block (ggml's get_scale_min_k4). */
export function scaleMinK4(s: Uint8Array, base: number, j: number): [number, number] {
  if (j < 4) return [s[base + j]! & 63, s[base + j + 4]! & 63];
  const hi = s[base + j + 4]!;
  return [(hi & 0x0f) | ((s[base + j - 4]! >> 6) << 4), (hi >> 4) | ((s[base + j]! >> 6) << 4)];
}

function half(b: Uint8Array, i: number, h: Float32Array): number {
  return h[b[i]! | (b[i + 1]! << 8)]!;
}

type Decoder = (b: Uint8Array, nBlocks: number, y: Float32Array) => void;

const DECODERS: { readonly [T in QuantType]: Decoder } = {
  F32: (b, n, y) => {
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; i < n; i++) y[i] = v.getFloat32(i * 4, true);
  },
  F16: (b, n, y) => {
    const h = halves();
    for (let i = 0; i < n; i++) y[i] = half(b, i * 2, h);
  },
  BF16: (b, n, y) => {
    for (let i = 0; i < n; i++) y[i] = bf16FromBits(b[i * 2]! | (b[i * 2 + 1]! << 8));
  },
  Q4_0: (b, n, y) => {
    const h = halves();
    for (let i = 0; i < n; i++) {
      const o = i * 18;
      const d = half(b, o, h);
      for (let j = 0; j < 16; j++) {
        const q = b[o + 2 + j]!;
        y[i * 32 + j] = fr(((q & 0x0f) - 8) * d);
        y[i * 32 + j + 16] = fr(((q >> 4) - 8) * d);
      }
    }
  },
  Q4_1: (b, n, y) => {
    const h = halves();
    for (let i = 0; i < n; i++) {
      const o = i * 20;
      const d = half(b, o, h);
      const m = half(b, o + 2, h);
      for (let j = 0; j < 16; j++) {
        const q = b[o + 4 + j]!;
        y[i * 32 + j] = fr(fr((q & 0x0f) * d) + m);
        y[i * 32 + j + 16] = fr(fr((q >> 4) * d) + m);
      }
    }
  },
  Q8_0: (b, n, y) => {
    const h = halves();
    for (let i = 0; i < n; i++) {
      const o = i * 34;
      const d = half(b, o, h);
      for (let j = 0; j < 32; j++) y[i * 32 + j] = fr(((b[o + 2 + j]! << 24) >> 24) * d);
    }
  },
  Q4_K: (b, n, y) => kQuant(b, n, y, 144, false),
  Q5_K: (b, n, y) => kQuant(b, n, y, 176, true),
  Q6_K: (b, n, y) => {
    const h = halves();
    for (let i = 0; i < n; i++) {
      const o = i * 210;
      const d = half(b, o + 208, h);
      for (let half128 = 0; half128 < 2; half128++) {
        const ql = o + half128 * 64;
        const qh = o + 128 + half128 * 32;
        const sc = o + 192 + half128 * 8;
        const out = i * QK_K + half128 * 128;
        for (let e = 0; e < 128; e++) {
          const l = e & 31;
          const g = e >> 5;
          const lo = g & 1 ? b[ql + l + 32]! : b[ql + l]!;
          const low4 = g < 2 ? lo & 0x0f : lo >> 4;
          const q = (low4 | (((b[qh + l]! >> (2 * g)) & 3) << 4)) - 32;
          const s = (b[sc + (e >> 4)]! << 24) >> 24;
          y[out + e] = fr(fr(d * s) * q);
        }
      }
    }
  },
};

/** Q4_K and Q5_K: 8 sub-blocks of 32, each `d*sc*q - dmin*m` with 6-bit packed sc and m. */
function kQuant(b: Uint8Array, n: number, y: Float32Array, size: number, five: boolean): void {
  const h = halves();
  for (let i = 0; i < n; i++) {
    const o = i * size;
    const d = half(b, o, h);
    const dmin = half(b, o + 2, h);
    const qs = o + (five ? 48 : 16);
    const qh = o + 16;
    for (let sub = 0; sub < 8; sub++) {
      const [sc, m] = scaleMinK4(b, o + 4, sub);
      const d1 = fr(d * sc);
      const m1 = fr(dmin * m);
      const src = qs + (sub >> 1) * 32;
      const out = i * QK_K + sub * 32;
      for (let l = 0; l < 32; l++) {
        const byte = b[src + l]!;
        let q = sub & 1 ? byte >> 4 : byte & 0x0f;
        if (five && (b[qh + l]! >> sub) & 1) q += 16;
        y[out + l] = fr(fr(d1 * q) - m1);
      }
    }
  }
}

/**
 * Dequantizes `count` elements of ggml type `type` from `bytes`. `at` is the file offset errors name.
 * A type this package cannot decode, or too few bytes, is a GgufError.
 */
export function dequantize(type: number | QuantType, bytes: Uint8Array, count: number, at = 0): Float32Array {
  const t = typeof type === 'string' ? type : asQuantType(type);
  if (t === undefined) {
    throw new GgufError(at, `cannot dequantize ggml type ${ggmlType(type as number)?.name ?? type}: not one of F32, F16, BF16, Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K`);
  }
  const info = quantTypeInfo(t);
  if (!Number.isSafeInteger(count) || count < 0 || count % info.blockSize !== 0) {
    throw new GgufError(at, `${count} elements is not a whole number of ${t} blocks of ${info.blockSize}`);
  }
  const nBlocks = count / info.blockSize;
  if (bytes.length < nBlocks * info.typeSize) {
    throw new GgufError(at, `${t} data of ${bytes.length} bytes is shorter than the ${nBlocks * info.typeSize} its ${count} elements need`);
  }
  const y = new Float32Array(count);
  DECODERS[t](bytes, info.blockSize === 1 ? count : nBlocks, y);
  return y;
}
