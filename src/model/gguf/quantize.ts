/**
 * Quantizers from f32 to each type this package reads: plain min/max (or abs-max) rounding per block,
 * reference quality, not ggml's error-minimising search. They exist so tests can build models in any
 * type; every block they write decodes with dequant.ts exactly as ggml decodes it. Block scales are
 * stored as f16, so weights must stay well inside the f16 range.
 */
import { InvalidInput } from '../../errors/index.js';
import { bf16ToBits, f16ToBits, roundBF16, roundF16 } from '../../numerics/float16.js';
import { QK_K, type QuantType, quantTypeInfo } from './ggmlTypes.js';

const fr = Math.fround;

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

/** Writes v rounded to f16 at b[o..o+1] and returns the rounded value, as decoding will see it. */
function putHalf(b: Uint8Array, o: number, v: number): number {
  const r = roundF16(v);
  const bits = f16ToBits(r);
  b[o] = bits & 0xff;
  b[o + 1] = bits >> 8;
  return r;
}

function range(x: ArrayLike<number>, o: number, n: number): { min: number; max: number; absMax: number; signedMax: number } {
  let min = Infinity;
  let max = -Infinity;
  let signedMax = 0;
  for (let i = o; i < o + n; i++) {
    const v = x[i]!;
    if (v < min) min = v;
    if (v > max) max = v;
    if (Math.abs(v) > Math.abs(signedMax)) signedMax = v;
  }
  return { min, max, absMax: Math.abs(signedMax), signedMax };
}

type Encoder = (x: ArrayLike<number>, nBlocks: number, b: Uint8Array) => void;

const ENCODERS: { readonly [T in QuantType]: Encoder } = {
  F32: (x, n, b) => {
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; i < n; i++) v.setFloat32(i * 4, x[i]!, true);
  },
  F16: (x, n, b) => { for (let i = 0; i < n; i++) putHalf(b, i * 2, x[i]!); },
  BF16: (x, n, b) => {
    for (let i = 0; i < n; i++) {
      const bits = bf16ToBits(roundBF16(x[i]!));
      b[i * 2] = bits & 0xff;
      b[i * 2 + 1] = bits >> 8;
    }
  },
  Q4_0: (x, n, b) => {
    for (let i = 0; i < n; i++) {
      // The largest-magnitude value maps to code 0 (-8 * d), so its sign is kept exactly.
      const d = putHalf(b, i * 18, range(x, i * 32, 32).signedMax / -8);
      const q = (j: number): number => (d === 0 ? 8 : clamp(Math.round(x[i * 32 + j]! / d) + 8, 0, 15));
      for (let j = 0; j < 16; j++) b[i * 18 + 2 + j] = q(j) | (q(j + 16) << 4);
    }
  },
  Q4_1: (x, n, b) => {
    for (let i = 0; i < n; i++) {
      const r = range(x, i * 32, 32);
      const d = putHalf(b, i * 20, (r.max - r.min) / 15);
      const m = putHalf(b, i * 20 + 2, r.min);
      const q = (j: number): number => (d === 0 ? 0 : clamp(Math.round((x[i * 32 + j]! - m) / d), 0, 15));
      for (let j = 0; j < 16; j++) b[i * 20 + 4 + j] = q(j) | (q(j + 16) << 4);
    }
  },
  Q8_0: (x, n, b) => {
    for (let i = 0; i < n; i++) {
      const d = putHalf(b, i * 34, range(x, i * 32, 32).absMax / 127);
      for (let j = 0; j < 32; j++) b[i * 34 + 2 + j] = (d === 0 ? 0 : clamp(Math.round(x[i * 32 + j]! / d), -127, 127)) & 0xff;
    }
  },
  Q4_K: (x, n, b) => kQuant(x, n, b, false),
  Q5_K: (x, n, b) => kQuant(x, n, b, true),
  Q6_K: (x, n, b) => {
    for (let i = 0; i < n; i++) {
      const o = i * 210;
      const scales = Array.from({ length: 16 }, (_, s) => range(x, i * QK_K + s * 16, 16).absMax / 31);
      const d = putHalf(b, o + 208, Math.max(...scales) / 127);
      const sc = scales.map((s) => (d === 0 ? 0 : clamp(Math.round(s / d), 0, 127)));
      sc.forEach((s, j) => { b[o + 192 + j] = s; });
      b.fill(0, o, o + 192);
      for (let e = 0; e < QK_K; e++) {
        const ds = fr(d * sc[e >> 4]!);
        const q = (ds === 0 ? 0 : clamp(Math.round(x[i * QK_K + e]! / ds), -32, 31)) + 32;
        const half128 = e >> 7;
        const l = e & 31;
        const g = (e >> 5) & 3;
        const ql = o + half128 * 64 + l + (g & 1 ? 32 : 0);
        b[ql] = b[ql]! | ((q & 0x0f) << (g < 2 ? 0 : 4));
        const qh = o + 128 + half128 * 32 + l;
        b[qh] = b[qh]! | ((q >> 4) << (2 * g));
      }
    }
  },
};

/** Q4_K and Q5_K: per sub-block of 32 a scale (max - min) / levels and a min, both as 6-bit multiples of d and dmin. */
function kQuant(x: ArrayLike<number>, n: number, b: Uint8Array, five: boolean): void {
  const size = five ? 176 : 144;
  const levels = five ? 31 : 15;
  for (let i = 0; i < n; i++) {
    const o = i * size;
    b.fill(0, o, o + size);
    const subs = Array.from({ length: 8 }, (_, s) => {
      const r = range(x, i * QK_K + s * 32, 32);
      // The min is stored as a non-negative offset subtracted from d*sc*q; a block above zero uses 0.
      const min = Math.min(r.min, 0);
      return { scale: (r.max - min) / levels, min: -min };
    });
    const d = putHalf(b, o, Math.max(...subs.map((s) => s.scale)) / 63);
    const dmin = putHalf(b, o + 2, Math.max(...subs.map((s) => s.min)) / 63);
    const sc = subs.map((s) => (d === 0 ? 0 : clamp(Math.round(s.scale / d), 0, 63)));
    const mn = subs.map((s) => (dmin === 0 ? 0 : clamp(Math.round(s.min / dmin), 0, 63)));
    packScalesK4(b, o + 4, sc, mn);
    const qs = o + (five ? 48 : 16);
    for (let e = 0; e < QK_K; e++) {
      const sub = e >> 5;
      const ds = fr(d * sc[sub]!);
      const dm = fr(dmin * mn[sub]!);
      const q = ds === 0 ? 0 : clamp(Math.round((x[i * QK_K + e]! + dm) / ds), 0, levels);
      const at = qs + (sub >> 1) * 32 + (e & 31);
      b[at] = b[at]! | ((q & 0x0f) << (sub & 1 ? 4 : 0));
      if (five && q > 15) b[o + 16 + (e & 31)] = b[o + 16 + (e & 31)]! | (1 << sub);
    }
  }
}

/** Packs eight 6-bit scales and mins into 12 bytes, the inverse of ggml's get_scale_min_k4. */
export function packScalesK4(b: Uint8Array, o: number, sc: readonly number[], mn: readonly number[]): void {
  b.fill(0, o, o + 12);
  for (let j = 0; j < 8; j++) {
    const s = sc[j]!;
    const m = mn[j]!;
    if (j < 4) {
      b[o + j] = b[o + j]! | s;
      b[o + j + 4] = b[o + j + 4]! | m;
    } else {
      b[o + j + 4] = (s & 0x0f) | ((m & 0x0f) << 4);
      b[o + j - 4] = b[o + j - 4]! | ((s >> 4) << 6);
      b[o + j] = b[o + j]! | ((m >> 4) << 6);
    }
  }
}

/** Quantizes f32 values to `type`; the count must be a whole number of the type's blocks. */
export function quantize(type: QuantType, values: ArrayLike<number>): Uint8Array {
  const info = quantTypeInfo(type);
  if (values.length % info.blockSize !== 0) {
    throw new InvalidInput('', `${values.length} values is not a whole number of ${type} blocks of ${info.blockSize}`);
  }
  const nBlocks = values.length / info.blockSize;
  const b = new Uint8Array(nBlocks * info.typeSize);
  ENCODERS[type](values, info.blockSize === 1 ? values.length : nBlocks, b);
  return b;
}
