/**
 * An independent reading of every weight layout the host kernels take, written for these tests from
 * ggml-common.h's block structs and dequantize_row_* loops and from docs/Q4NX.md (not from
 * src/model/gguf or src/model/q4nx): each element's exact value, in f64. Also random weights in each
 * layout (every code drawn, scales of moderate size so nothing overflows) and a weight with one block
 * of every row zeroed, for the negative control.
 */
import type { HostWeightType } from '../../../src/compiler/host/kernelList.js';
import type { Rng } from './helpers.js';

/** A weight's bytes and each element's exact value, row n (of K) at n*K. */
export interface TestWeight {
  readonly type: HostWeightType;
  readonly k: number;
  readonly n: number;
  readonly bytes: Uint8Array;
  readonly exact: Float64Array;
}

const halfValue = (bits: number): number => {
  const e = (bits >> 10) & 31;
  const m = bits & 1023;
  const s = bits & 0x8000 ? -1 : 1;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1024 + m) * 2 ** (e - 25);
};
const bf16Value = (bits: number): number => new DataView(Uint32Array.of(bits << 16).buffer).getFloat32(0, true);
const u16 = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8);
const s8 = (v: number): number => (v << 24) >> 24;

/** Elements per block and bytes per block (a q4nx "block" is a tile: 32 rows x 256 columns). */
const GEOMETRY: Record<HostWeightType, [number, number]> = {
  f32: [1, 4], f16: [1, 2], bf16: [1, 2], q4_0: [32, 18], q4_1: [32, 20], q8_0: [32, 34],
  q4_k: [256, 144], q6_k: [256, 210], q4nx_q41: [256, 5120],
};

/** The bytes of a weight of `type` with N rows of K. */
function weightSize(type: HostWeightType, k: number, n: number): number {
  const [elems, bytes] = GEOMETRY[type];
  if (type === 'q4nx_q41') return Math.ceil(k / 256) * Math.ceil(n / 32) * bytes;
  return (k / elems) * bytes * n;
}

/** One ggml row of K elements at byte `o`, exactly. */
function ggmlRow(type: HostWeightType, b: Uint8Array, o: number, k: number, y: Float64Array, at: number): void {
  const dv = new DataView(b.buffer, b.byteOffset);
  const blocks = k / GEOMETRY[type][0];
  for (let i = 0; i < blocks; i++) {
    switch (type) {
      case 'f32': y[at + i] = dv.getFloat32(o + 4 * i, true); break;
      case 'f16': y[at + i] = halfValue(u16(b, o + 2 * i)); break;
      case 'bf16': y[at + i] = bf16Value(u16(b, o + 2 * i)); break;
      case 'q4_0': {
        // block_q4_0 { half d; uint8 qs[16] }: x[j] = (lo(qs[j]) - 8)*d, x[j+16] = (hi(qs[j]) - 8)*d
        const p = o + 18 * i;
        const d = halfValue(u16(b, p));
        for (let j = 0; j < 16; j++) {
          y[at + 32 * i + j] = ((b[p + 2 + j]! & 15) - 8) * d;
          y[at + 32 * i + j + 16] = ((b[p + 2 + j]! >> 4) - 8) * d;
        }
        break;
      }
      case 'q4_1': {
        // block_q4_1 { half d, m; uint8 qs[16] }: x = q*d + m
        const p = o + 20 * i;
        const d = halfValue(u16(b, p));
        const m = halfValue(u16(b, p + 2));
        for (let j = 0; j < 16; j++) {
          y[at + 32 * i + j] = (b[p + 4 + j]! & 15) * d + m;
          y[at + 32 * i + j + 16] = (b[p + 4 + j]! >> 4) * d + m;
        }
        break;
      }
      case 'q8_0': {
        const p = o + 34 * i;
        const d = halfValue(u16(b, p));
        for (let j = 0; j < 32; j++) y[at + 32 * i + j] = s8(b[p + 2 + j]!) * d;
        break;
      }
      case 'q4_k': {
        // block_q4_K { half d, dmin; uint8 scales[12]; uint8 qs[128] }: for each 64 elements, two
        // sub-blocks share 32 bytes of qs (low nibbles, then high), each with its 6-bit scale and min.
        const p = o + 144 * i;
        const d = halfValue(u16(b, p));
        const dmin = halfValue(u16(b, p + 2));
        const sc = (j: number): [number, number] => {
          const q = p + 4;
          if (j < 4) return [b[q + j]! & 63, b[q + j + 4]! & 63];
          return [(b[q + j + 4]! & 0xf) | ((b[q + j - 4]! >> 6) << 4), (b[q + j + 4]! >> 4) | ((b[q + j]! >> 6) << 4)];
        };
        for (let g = 0; g < 4; g++) {
          const [s1, m1] = sc(2 * g);
          const [s2, m2] = sc(2 * g + 1);
          for (let l = 0; l < 32; l++) {
            const q = b[p + 16 + 32 * g + l]!;
            y[at + 256 * i + 64 * g + l] = d * s1 * (q & 15) - dmin * m1;
            y[at + 256 * i + 64 * g + 32 + l] = d * s2 * (q >> 4) - dmin * m2;
          }
        }
        break;
      }
      case 'q6_k': {
        // block_q6_K { uint8 ql[128], qh[64]; int8 scales[16]; half d }, two halves of 128 elements,
        // each 32 lanes l giving four values from ql[l], ql[l+32] and the 2-bit fields of qh[l].
        const p = o + 210 * i;
        const d = halfValue(u16(b, p + 208));
        for (let h = 0; h < 2; h++) {
          const ql = p + 64 * h;
          const qh = p + 128 + 32 * h;
          const sc = p + 192 + 8 * h;
          const out = at + 256 * i + 128 * h;
          for (let l = 0; l < 32; l++) {
            const is = l >> 4;
            const q1 = ((b[ql + l]! & 15) | (((b[qh + l]! >> 0) & 3) << 4)) - 32;
            const q2 = ((b[ql + l + 32]! & 15) | (((b[qh + l]! >> 2) & 3) << 4)) - 32;
            const q3 = ((b[ql + l]! >> 4) | (((b[qh + l]! >> 4) & 3) << 4)) - 32;
            const q4 = ((b[ql + l + 32]! >> 4) | (((b[qh + l]! >> 6) & 3) << 4)) - 32;
            y[out + l] = d * s8(b[sc + is]!) * q1;
            y[out + l + 32] = d * s8(b[sc + is + 2]!) * q2;
            y[out + l + 64] = d * s8(b[sc + is + 4]!) * q3;
            y[out + l + 96] = d * s8(b[sc + is + 6]!) * q4;
          }
        }
        break;
      }
      case 'q4nx_q41': throw new Error('not a ggml type');
    }
  }
}

/**
 * A q4nx weight: tile (i, j) is chunk i*ceil(K/256) + j; in a chunk, scale and zero are bf16 planes
 * indexed group*32 + row, and the code of (row r, column c) is the low (even r) or high (odd r)
 * nibble of byte 1024 + (r/16)*2048 + c*8 + (r%16)/2; value = code*scale + zero.
 */
function q4nx(b: Uint8Array, k: number, n: number, y: Float64Array): void {
  const kt = Math.ceil(k / 256);
  for (let row = 0; row < n; row++) {
    const i = Math.floor(row / 32);
    const r = row % 32;
    for (let col = 0; col < k; col++) {
      const chunk = (i * kt + Math.floor(col / 256)) * 5120;
      const c = col % 256;
      const plane = Math.floor(c / 32) * 32 + r;
      const byte = b[chunk + 1024 + Math.floor(r / 16) * 2048 + c * 8 + Math.floor((r % 16) / 2)]!;
      const code = r % 2 === 0 ? byte & 15 : byte >> 4;
      y[row * k + col] = code * bf16Value(u16(b, chunk + 2 * plane)) + bf16Value(u16(b, chunk + 512 + 2 * plane));
    }
  }
}

/** Every element of a weight, exactly (products of a code and a scale are exact in f64). */
export function exactValues(type: HostWeightType, b: Uint8Array, k: number, n: number): Float64Array {
  const y = new Float64Array(k * n);
  if (type === 'q4nx_q41') {
    q4nx(b, k, n, y);
  } else {
    const rowBytes = weightSize(type, k, 1);
    for (let r = 0; r < n; r++) ggmlRow(type, b, r * rowBytes, k, y, r * k);
  }
  return y;
}

function putHalf(b: Uint8Array, o: number, rng: Rng, emin: number, emax: number): void {
  const bits = (rng.u() < 0.5 ? 0x8000 : 0) | ((rng.int(emin, emax) + 15) << 10) | rng.int(0, 1023);
  b[o] = bits & 255;
  b[o + 1] = bits >> 8;
}

function putBf16(b: Uint8Array, o: number, rng: Rng, emin: number, emax: number): void {
  const bits = (rng.u() < 0.5 ? 0x8000 : 0) | ((rng.int(emin, emax) + 127) << 7) | rng.int(0, 127);
  b[o] = bits & 255;
  b[o + 1] = bits >> 8;
}

/** A random weight: every byte random, then every scale field a moderate finite value. */
export function randomWeight(rng: Rng, type: HostWeightType, k: number, n: number): TestWeight {
  const bytes = new Uint8Array(weightSize(type, k, n));
  for (let i = 0; i < bytes.length; i++) bytes[i] = rng.byte();
  const dv = new DataView(bytes.buffer);
  const [elems, size] = GEOMETRY[type];
  const blocks = type === 'q4nx_q41' ? bytes.length / size : (k / elems) * n;
  for (let i = 0; i < blocks; i++) {
    const p = i * size;
    switch (type) {
      case 'f32': dv.setFloat32(p, rng.f32(2), true); break;
      case 'f16': putHalf(bytes, p, rng, -10, 1); break;
      case 'bf16': putBf16(bytes, p, rng, -10, 1); break;
      case 'q4_0': case 'q8_0': putHalf(bytes, p, rng, -9, -3); break;
      case 'q4_1': putHalf(bytes, p, rng, -9, -4); putHalf(bytes, p + 2, rng, -6, -1); break;
      case 'q4_k': putHalf(bytes, p, rng, -12, -8); putHalf(bytes, p + 2, rng, -12, -8); break;
      case 'q6_k': putHalf(bytes, p + 208, rng, -14, -10); break;
      case 'q4nx_q41':
        for (let j = 0; j < 256; j++) {
          putBf16(bytes, p + 2 * j, rng, -9, -4);
          putBf16(bytes, p + 512 + 2 * j, rng, -6, -1);
        }
        break;
    }
  }
  return { type, k, n, bytes, exact: exactValues(type, bytes, k, n) };
}

/**
 * The weight with block `block` (32 elements along K for the float types and q4nx groups, a whole
 * block otherwise) of every row made exactly zero: what a matmul that skipped that block computes.
 */
export function dropBlock(w: TestWeight, block: number): Uint8Array {
  const b = w.bytes.slice();
  const size = GEOMETRY[w.type][1];
  const rowBytes = weightSize(w.type, w.k, 1);
  for (let r = 0; r < w.n; r++) {
    const row = r * rowBytes;
    switch (w.type) {
      case 'f32': case 'f16': case 'bf16': b.fill(0, row + block * 32 * size, row + (block + 1) * 32 * size); break;
      case 'q4_0': case 'q8_0': b.fill(0, row + block * size, row + block * size + 2); break;
      case 'q4_1': case 'q4_k': b.fill(0, row + block * size, row + block * size + 4); break;
      case 'q6_k': b.fill(0, row + block * size + 208, row + block * size + 210); break;
      case 'q4nx_q41': {
        const kt = Math.ceil(w.k / 256);
        const chunk = (Math.floor(r / 32) * kt + Math.floor(block / 8)) * size;
        const plane = (block % 8) * 32 + (r % 32);
        b.fill(0, chunk + 2 * plane, chunk + 2 * plane + 2);
        b.fill(0, chunk + 512 + 2 * plane, chunk + 512 + 2 * plane + 2);
        break;
      }
    }
  }
  return b;
}
