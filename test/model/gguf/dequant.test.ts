/**
 * Dequantizers against an independent reference: plain loops written from ggml's block layouts in the
 * shape of ggml's own dequantize_row_* (not of src's), over random blocks; then quantizers, checked by
 * decoding their output with that same reference.
 */
import { expect } from 'chai';
import { dequantize } from '../../../src/model/gguf/dequant.js';
import { QUANT_TYPES, type QuantType } from '../../../src/model/gguf/ggmlTypes.js';
import { packScalesK4, quantize } from '../../../src/model/gguf/quantize.js';
import { scaleMinK4 } from '../../../src/model/gguf/dequant.js';
import { seeded } from './helpers.js';

const f = Math.fround;

function half(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 31;
  const m = bits & 1023;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m === 0 ? sign * Infinity : NaN;
  return sign * 2 ** (e - 15) * (1 + m / 1024);
}
const h16 = (b: Uint8Array, o: number) => half(b[o]! + 256 * b[o + 1]!);
const i8 = (v: number) => (v > 127 ? v - 256 : v);

function getScaleMinK4(j: number, q: Uint8Array, o: number): [number, number] {
  if (j < 4) return [q[o + j]! & 63, q[o + j + 4]! & 63];
  return [(q[o + j + 4]! & 0xf) | ((q[o + j - 4]! >> 6) << 4), (q[o + j + 4]! >> 4) | ((q[o + j]! >> 6) << 4)];
}

/** The reference decoders, block by block. */
const REF: Record<QuantType, { block: number; bytes: number; decode: (b: Uint8Array, o: number, y: number[]) => void; halves: number[] }> = {
  F32: { block: 1, bytes: 4, halves: [], decode: (b, o, y) => { y.push(new DataView(b.buffer, b.byteOffset).getFloat32(o, true)); } },
  F16: { block: 1, bytes: 2, halves: [0], decode: (b, o, y) => { y.push(h16(b, o)); } },
  BF16: { block: 1, bytes: 2, halves: [], decode: (b, o, y) => { y.push(new DataView(Uint8Array.of(0, 0, b[o]!, b[o + 1]!).buffer).getFloat32(0, true)); } },
  Q4_0: { block: 32, bytes: 18, halves: [0], decode: (b, o, y) => {
    const d = h16(b, o); const lo: number[] = []; const hi: number[] = [];
    for (let j = 0; j < 16; j++) { lo.push(f(((b[o + 2 + j]! & 15) - 8) * d)); hi.push(f(((b[o + 2 + j]! >> 4) - 8) * d)); }
    y.push(...lo, ...hi);
  } },
  Q4_1: { block: 32, bytes: 20, halves: [0, 2], decode: (b, o, y) => {
    const d = h16(b, o); const m = h16(b, o + 2); const lo: number[] = []; const hi: number[] = [];
    for (let j = 0; j < 16; j++) { lo.push(f(f((b[o + 4 + j]! & 15) * d) + m)); hi.push(f(f((b[o + 4 + j]! >> 4) * d) + m)); }
    y.push(...lo, ...hi);
  } },
  Q8_0: { block: 32, bytes: 34, halves: [0], decode: (b, o, y) => { const d = h16(b, o); for (let j = 0; j < 32; j++) y.push(f(i8(b[o + 2 + j]!) * d)); } },
  Q4_K: { block: 256, bytes: 144, halves: [0, 2], decode: (b, o, y) => {
    const d = h16(b, o); const min = h16(b, o + 2);
    let q = o + 16; let is = 0;
    for (let j = 0; j < 256; j += 64) {
      const [sc1, m1] = getScaleMinK4(is, b, o + 4); const [sc2, m2] = getScaleMinK4(is + 1, b, o + 4);
      const d1 = f(d * sc1); const mm1 = f(min * m1); const d2 = f(d * sc2); const mm2 = f(min * m2);
      for (let l = 0; l < 32; l++) y.push(f(f(d1 * (b[q + l]! & 0xf)) - mm1));
      for (let l = 0; l < 32; l++) y.push(f(f(d2 * (b[q + l]! >> 4)) - mm2));
      q += 32; is += 2;
    }
  } },
  Q5_K: { block: 256, bytes: 176, halves: [0, 2], decode: (b, o, y) => {
    const d = h16(b, o); const min = h16(b, o + 2);
    const qh = o + 16; let ql = o + 48; let is = 0; let u1 = 1; let u2 = 2;
    for (let j = 0; j < 256; j += 64) {
      const [sc1, m1] = getScaleMinK4(is, b, o + 4); const [sc2, m2] = getScaleMinK4(is + 1, b, o + 4);
      const d1 = f(d * sc1); const mm1 = f(min * m1); const d2 = f(d * sc2); const mm2 = f(min * m2);
      for (let l = 0; l < 32; l++) y.push(f(f(d1 * ((b[ql + l]! & 0xf) + (b[qh + l]! & u1 ? 16 : 0))) - mm1));
      for (let l = 0; l < 32; l++) y.push(f(f(d2 * ((b[ql + l]! >> 4) + (b[qh + l]! & u2 ? 16 : 0))) - mm2));
      ql += 32; is += 2; u1 <<= 2; u2 <<= 2;
    }
  } },
  Q6_K: { block: 256, bytes: 210, halves: [208], decode: (b, o, y) => {
    const d = h16(b, o + 208);
    const out = new Array<number>(256);
    let ql = o; let qh = o + 128; let sc = o + 192;
    for (let n = 0; n < 256; n += 128) {
      for (let l = 0; l < 32; l++) {
        const is = Math.floor(l / 16);
        const q1 = ((b[ql + l]! & 0xf) | (((b[qh + l]! >> 0) & 3) << 4)) - 32;
        const q2 = ((b[ql + l + 32]! & 0xf) | (((b[qh + l]! >> 2) & 3) << 4)) - 32;
        const q3 = ((b[ql + l]! >> 4) | (((b[qh + l]! >> 4) & 3) << 4)) - 32;
        const q4 = ((b[ql + l + 32]! >> 4) | (((b[qh + l]! >> 6) & 3) << 4)) - 32;
        out[n + l] = f(f(d * i8(b[sc + is]!)) * q1);
        out[n + l + 32] = f(f(d * i8(b[sc + is + 2]!)) * q2);
        out[n + l + 64] = f(f(d * i8(b[sc + is + 4]!)) * q3);
        out[n + l + 96] = f(f(d * i8(b[sc + is + 6]!)) * q4);
      }
      ql += 64; qh += 32; sc += 8;
    }
    y.push(...out);
  } },
};

function refDecode(t: QuantType, b: Uint8Array, n: number): number[] {
  const r = REF[t];
  const y: number[] = [];
  for (let i = 0; i < n / r.block; i++) r.decode(b, i * r.bytes, y);
  return y;
}

/** Random blocks whose half-float fields are random finite halves (random bytes elsewhere). */
function randomBlocks(t: QuantType, nBlocks: number, rand: () => number): Uint8Array {
  const r = REF[t];
  const b = Uint8Array.from({ length: nBlocks * r.bytes }, () => Math.floor(rand() * 256));
  for (let i = 0; i < nBlocks; i++) {
    for (const o of r.halves) {
      const bits = ((rand() < 0.5 ? 0x8000 : 0) | (Math.floor(rand() * 31) << 10) | Math.floor(rand() * 1024)) & 0xffff;
      b[i * r.bytes + o] = bits & 0xff;
      b[i * r.bytes + o + 1] = bits >> 8;
    }
  }
  if (t === 'F32') {
    const v = new DataView(b.buffer);
    for (let i = 0; i < nBlocks; i++) v.setFloat32(i * 4, (rand() - 0.5) * 1e6, true);
  }
  if (t === 'BF16') for (let i = 0; i < nBlocks; i++) b[i * 2 + 1] = b[i * 2 + 1]! & 0xbf; // exponent < 255: finite
  return b;
}

function gaussian(rand: () => number, n: number, scale = 1): Float32Array {
  return Float32Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand()) * scale);
}

function relRms(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let num = 0; let den = 0;
  for (let i = 0; i < a.length; i++) { num += (a[i]! - b[i]!) ** 2; den += a[i]! ** 2; }
  return Math.sqrt(num / den);
}

describe('gguf dequantization', () => {
  for (const t of QUANT_TYPES) {
    it(`${t}: matches the reference bit for bit on random blocks`, () => {
      const rand = seeded(0x5eed + t.length * 7 + t.charCodeAt(1));
      const r = REF[t];
      const nBlocks = r.block === 1 ? 4096 : 64;
      const b = randomBlocks(t, nBlocks, rand);
      const got = dequantize(t, b, nBlocks * r.block);
      expect(got).to.be.instanceOf(Float32Array);
      const want = refDecode(t, b, nBlocks * r.block);
      let diff = 0;
      for (let i = 0; i < want.length; i++) if (!Object.is(got[i], f(want[i]!))) diff++;
      expect(diff, `${diff} of ${want.length} values differ`).to.equal(0);
    });
  }

  it('a short buffer is a GgufError, not a read past the end', () => {
    expect(() => dequantize('Q4_K', new Uint8Array(143), 256)).to.throw(/shorter than the 144/);
    expect(() => dequantize('Q8_0', new Uint8Array(34), 33)).to.throw(/not a whole number of Q8_0 blocks/);
  });

  it('the 6-bit K-quant scales pack and unpack for every value', () => {
    const b = new Uint8Array(12);
    for (let v = 0; v < 64; v++) {
      const sc = [v, 63 - v, v ^ 21, 7, v, (v * 5) % 64, 63, v >> 1];
      const mn = [63 - v, v, 0, v ^ 42, (v * 3) % 64, v, 1, 63];
      packScalesK4(b, 0, sc, mn);
      for (let j = 0; j < 8; j++) {
        expect(scaleMinK4(b, 0, j)).to.deep.equal([sc[j], mn[j]]);
        expect(getScaleMinK4(j, b, 0)).to.deep.equal([sc[j], mn[j]]);
      }
    }
  });
});

describe('gguf quantization', () => {
  // Plain min/max rounding: these bounds hold with room for N(0, 1) weights.
  const BOUND: Record<QuantType, number> = { F32: 0, F16: 4e-4, BF16: 3e-3, Q8_0: 0.008, Q6_K: 0.03, Q5_K: 0.055, Q4_K: 0.11, Q4_1: 0.11, Q4_0: 0.12 };
  for (const t of QUANT_TYPES) {
    it(`${t}: quantized values decode (by the reference) within ${BOUND[t]} relative RMS`, () => {
      const rand = seeded(99 + t.charCodeAt(1));
      const x = gaussian(rand, 256 * 16, 0.05);
      const b = quantize(t, x);
      expect(b.length).to.equal((x.length / REF[t].block) * REF[t].bytes);
      const y = refDecode(t, b, x.length);
      expect(relRms(x, y)).to.be.at.most(BOUND[t]);
      if (t === 'F32') expect(y).to.deep.equal([...x]);
      expect([...dequantize(t, b, x.length)]).to.deep.equal(y.map(f));
    });
  }

  it('zero, one-signed and constant blocks quantize without NaN', () => {
    for (const t of QUANT_TYPES) {
      for (const fill of [0, 0.25, -0.25]) {
        const x = new Float32Array(256).fill(fill);
        x[3] = fill * 2;
        const y = dequantize(t, quantize(t, x), 256);
        expect(y.every(Number.isFinite), `${t} fill ${fill}`).to.equal(true);
        expect(Math.abs(y[0]! - fill), `${t} fill ${fill}`).to.be.below(0.1);
      }
    }
  });

  it('a count that is not whole blocks is refused', () => {
    expect(() => quantize('Q4_K', new Float32Array(255))).to.throw(/not a whole number of Q4_K blocks/);
  });
});
