/**
 * matmul_wq, the q8-activations class (docs/HOST.md, "q8 activations"): every quantized weight type
 * against two references built here from the independent dequantizer (reference.ts): the exact
 * product (held to the published bound) and the product of the quantized activations (held to the
 * accumulation bound alone, which a wrongly rounded code breaks); batch invariance (a row alone and
 * inside batches of 1..64 other rows, on 1 and 2 threads, is the same bits, on every SIMD path and
 * across them); negative controls: a dropped block, codes rounded one step wrong, and the exact class's
 * matmul_w, whose order changes with T, failing the invariance check.
 */
import { expect } from 'chai';
import type { HostWeightType } from '../../../src/compiler/host/kernelList.js';
import type { HostKernels } from '../../../src/devices/host/native.js';
import { gamma } from '../../../src/targets/host/contracts.js';
import { Arena, Rng, eachIsa, useHost } from './helpers.js';
import { dropBlock, exactValues, randomWeight, type TestWeight } from './reference.js';

const QTYPES = ['q4_0', 'q4_1', 'q8_0', 'q4_k', 'q6_k', 'q4nx_q41'] as const;
type QType = (typeof QTYPES)[number];

const SHAPES: Record<QType, [number, number][]> = {
  q4_0: [[32, 1], [96, 7], [160, 37], [512, 66]],
  q4_1: [[32, 3], [64, 13], [224, 41]],
  q8_0: [[32, 5], [128, 21], [416, 35]],
  q4_k: [[256, 1], [256, 9], [768, 37]],
  q6_k: [[256, 3], [512, 19], [768, 33]],
  q4nx_q41: [[256, 32], [100, 7], [300, 45], [33, 1]],
};
const TS = [1, 3, 13, 70];

/** The activation codes and scales as docs/HOST.md defines them: d = fl(amax/127), q = the nearest integer to fl(x/d). */
function quantize(x: Float32Array, k: number): { xq: Float64Array; d: Float64Array } {
  const rows = x.length / k;
  const kb = Math.ceil(k / 32);
  const xq = new Float64Array(x.length);
  const d = new Float64Array(rows * kb);
  for (let t = 0; t < rows; t++) {
    for (let b = 0; b < kb; b++) {
      let amax = 0;
      for (let i = b * 32; i < Math.min(k, b * 32 + 32); i++) amax = Math.max(amax, Math.abs(x[t * k + i]!));
      const db = Math.fround(amax / 127);
      d[t * kb + b] = db;
      for (let i = b * 32; i < Math.min(k, b * 32 + 32); i++) {
        if (db === 0) continue;
        const v = Math.fround(x[t * k + i]! / db);
        let q = Math.round(v);
        if (q - v === 0.5 && q % 2 !== 0) q -= 1; // ties to even
        q = Math.max(-127, Math.min(127, q));
        xq[t * k + i] = q * db;
      }
    }
  }
  return { xq, d };
}

/** The weight with every code zero: what remains is each element's offset (q4_1's m, q4_k's -dmin*m, q4nx's zero). */
function offsets(w: TestWeight): Float64Array | null {
  const b = w.bytes.slice();
  if (w.type === 'q4_1') { for (let p = 0; p < b.length; p += 20) b.fill(0, p + 4, p + 20); }
  else if (w.type === 'q4_k') { for (let p = 0; p < b.length; p += 144) b.fill(0, p + 16, p + 144); }
  else if (w.type === 'q4nx_q41') { for (let p = 0; p < b.length; p += 5120) b.fill(0, p + 1024, p + 5120); }
  else return null;
  return exactValues(w.type, b, w.k, w.n);
}

interface Refs { exact: Float64Array; full: Float64Array; quant: Float64Array; tight: Float64Array }

/**
 * Per output: the exact product and its bound (docs/HOST.md: Σ_b e_b·Σ|w| + γ(m+2)·Σ|terms| + m·2^-120,
 * e_b = (1/2 + 2^-16)·d_b + 2^-140), and the product of the quantized activations with the
 * accumulation bound alone.
 */
function references(w: TestWeight, x: Float32Array, t: number): Refs {
  const { k, n } = w;
  const { xq, d } = quantize(x, k);
  const off = offsets(w);
  const kb = Math.ceil(k / 32);
  const m = (w.type === 'q4_0' || w.type === 'q8_0' ? 1 : 2) * kb;
  const r: Refs = { exact: new Float64Array(t * n), full: new Float64Array(t * n), quant: new Float64Array(t * n), tight: new Float64Array(t * n) };
  for (let a = 0; a < t; a++) {
    for (let j = 0; j < n; j++) {
      let s = 0, sq = 0, terms = 0, quantErr = 0;
      for (let b = 0; b < kb; b++) {
        let wabs = 0;
        for (let i = b * 32; i < Math.min(k, b * 32 + 32); i++) {
          const wv = w.exact[j * k + i]!;
          const o = off === null ? 0 : off[j * k + i]!;
          s += x[a * k + i]! * wv;
          sq += xq[a * k + i]! * wv;
          terms += Math.abs(xq[a * k + i]!) * (Math.abs(wv - o) + Math.abs(o));
          wabs += Math.abs(wv);
        }
        quantErr += ((0.5 + 2 ** -16) * d[a * kb + b]! + 2 ** -140) * wabs;
      }
      const acc = gamma(m + 2) * terms + m * 2 ** -120;
      r.exact[a * n + j] = s;
      r.quant[a * n + j] = sq;
      r.tight[a * n + j] = acc;
      r.full[a * n + j] = quantErr + acc;
    }
  }
  return r;
}

function run(h: HostKernels, op: 'matmul_w' | 'matmul_wq', w: TestWeight, x: Float32Array, t: number, bytes = w.bytes): Float32Array {
  const arena = new Arena(t * (w.k + w.n) * 4 + 256);
  const xo = arena.putF32(x);
  const y = arena.alloc(t * w.n * 4);
  h.run(arena.bytes, [{ op, x: xo, y, T: t, w: 0 }], [h.weightFromBytes(bytes, w.type, w.k, w.n)]);
  return arena.f32(y, t * w.n).slice();
}

/** Outputs farther than `bound` from `want`. */
function outside(got: Float32Array, want: Float64Array, bound: Float64Array): number {
  let bad = 0;
  for (let i = 0; i < got.length; i++) if (!(Math.abs(got[i]! - want[i]!) <= bound[i]!)) bad++;
  return bad;
}

const sameBits = (a: Float32Array, b: Float32Array): boolean =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

const randomX = (rng: Rng, len: number) => Float32Array.from({ length: len }, () => rng.f32(rng.u() < 0.2 ? 100 : 1));

describe('host kernels: matmul_wq (q8 activations)', function () {
  let h: HostKernels;
  before(function () { h = useHost(this); });
  afterEach(() => { h.setDropBlockFault(false); h.setQ8RoundFault(false); h.setThreads(2); });

  for (const type of QTYPES) {
    it(`${type}: within the published bound of the exact product and the accumulation bound of the quantized one, the same bits on every SIMD path`, () => {
      const rng = new Rng(0x9a8 + type.length * 131);
      for (const [k, n] of SHAPES[type]) {
        const w = randomWeight(rng, type, k, n);
        for (const t of TS) {
          const x = randomX(rng, t * k);
          const ref = references(w, x, t);
          const byIsa: Float32Array[] = [];
          eachIsa(h, (isa) => {
            const got = run(h, 'matmul_wq', w, x, t);
            expect(outside(got, ref.quant, ref.tight), `${type} [K=${k}, N=${n}] T=${t} on ${isa}: vs the quantized product`).to.equal(0);
            expect(outside(got, ref.exact, ref.full), `${type} [K=${k}, N=${n}] T=${t} on ${isa}: vs the exact product`).to.equal(0);
            byIsa.push(got);
          });
          for (const g of byIsa) expect(sameBits(g, byIsa[0]!), `${type} T=${t}: the SIMD paths agree bit for bit`).to.equal(true);
        }
      }
    });
  }

  it('a row is the same bits alone and in any batch of 1..64 rows (and 129..134), on 1 and 2 threads, on every SIMD path', () => {
    const rng = new Rng(4242);
    for (const type of QTYPES) {
      const [k, n] = type === 'q4_k' || type === 'q6_k' || type === 'q4nx_q41' ? [512, 37] : [320, 37];
      const w = randomWeight(rng, type, k, n);
      const row = randomX(rng, k);
      eachIsa(h, (isa) => {
        h.setThreads(1);
        const alone = run(h, 'matmul_wq', w, row, 1);
        // 1..64, and past the 128 rows one tile call takes (kernels.h Q8_ROWS), so a row lands in a
        // second call's group of four or in its remainder.
        for (const t of [...Array.from({ length: 64 }, (_, i) => i + 1), 129, 131, 134]) {
          h.setThreads(t % 2 === 0 ? 2 : 1);
          const x = randomX(rng, t * k);
          const at = rng.int(0, t - 1);
          x.set(row, at * k);
          const got = run(h, 'matmul_wq', w, x, t).subarray(at * n, (at + 1) * n);
          expect(sameBits(got, alone), `${type} on ${isa}: row ${at} of ${t}`).to.equal(true);
        }
      });
    }
  });

  it('one row against whole 16-row tiles at the codes\' extremes (every product 15 * 127 or 255 * 127) is the exact integer sum, and a batch\'s bits', () => {
    // Scale 1.0 (f16 0x3c00) and activations of one magnitude (codes +-127, d = 127/127 = 1): every
    // value is an integer and each output is an exact f32 integer, whatever a kernel adds first.
    const k = 256;
    const n = 48;
    for (const type of ['q4_0', 'q8_0'] as const) {
      const bb = type === 'q4_0' ? 18 : 34;
      const bytes = new Uint8Array((k / 32) * bb * n);
      for (let p = 0; p < bytes.length; p += bb) {
        bytes[p] = 0x00;
        bytes[p + 1] = 0x3c;
        // q4_0: nibbles 15 (weight 15 - 8 = 7); q8_0: -128 and 127 alternating by block row.
        bytes.fill(type === 'q4_0' ? 0xff : (p / bb) % 2 === 0 ? 0x80 : 0x7f, p + 2, p + bb);
      }
      const w: TestWeight = { type, k, n, bytes, exact: new Float64Array(0) };
      for (const sign of [1, -1]) {
        const x = new Float32Array(k).fill(sign * 127);
        const want = Array.from({ length: n }, (_, j) => {
          let acc = 0;
          for (let b = 0; b < k / 32; b++) {
            const q = type === 'q4_0' ? 7 : (j * (k / 32) + b) % 2 === 0 ? -128 : 127;
            acc += 32 * q * sign * 127;
          }
          return acc;
        });
        eachIsa(h, (isa) => {
          const alone = run(h, 'matmul_wq', w, x, 1);
          expect(Array.from(alone), `${type} on ${isa}, x = ${sign * 127}`).to.deep.equal(want);
          const batch = new Float32Array(3 * k);
          batch.set(x, k);
          expect(sameBits(run(h, 'matmul_wq', w, batch, 3).subarray(n, 2 * n), alone), `${type} on ${isa}: in a batch`).to.equal(true);
        });
      }
    }
  });

  it('negative control for invariance: matmul_w (the exact class) changes a row\'s bits with the batch, and the check sees it', () => {
    const rng = new Rng(99);
    for (const type of ['q4_0', 'q8_0'] as const) {
      const w = randomWeight(rng, type, 512, 40);
      const row = randomX(rng, 512);
      const alone = run(h, 'matmul_w', w, row, 1);
      let differs = 0;
      for (const t of [12, 16, 33, 64]) {
        const x = randomX(rng, t * 512);
        x.set(row, 0);
        if (!sameBits(run(h, 'matmul_w', w, x, t).subarray(0, 40), alone)) differs++;
      }
      expect(differs, `${type}: batches where matmul_w's row 0 differs from the row alone`).to.be.above(0);
    }
  });

  it('negative controls: a dropped block and codes rounded one step up break the bounds, for every type', () => {
    const rng = new Rng(1234);
    for (const type of QTYPES) {
      const [k, n] = type === 'q4_k' || type === 'q6_k' ? [512, 24] : [256, 40];
      const w = randomWeight(rng, type, k, n);
      for (const t of [1, 5]) {
        const x = randomX(rng, t * k);
        const ref = references(w, x, t);
        expect(outside(run(h, 'matmul_wq', w, x, t), ref.exact, ref.full), `${type} intact`).to.equal(0);
        expect(outside(run(h, 'matmul_wq', w, x, t), ref.quant, ref.tight), `${type} intact, quantized`).to.equal(0);
        // The fault switch and a weight with a block zeroed both drop a block; each must fail.
        h.setDropBlockFault(true);
        expect(outside(run(h, 'matmul_wq', w, x, t), ref.quant, ref.tight), `${type} T=${t}: first block dropped`).to.be.above(n * t / 2);
        h.setDropBlockFault(false);
        expect(outside(run(h, 'matmul_wq', w, x, t, dropBlock(w, 1)), ref.quant, ref.tight), `${type} T=${t}: block 1 zeroed`).to.be.above(n * t / 2);
        h.setQ8RoundFault(true);
        expect(outside(run(h, 'matmul_wq', w, x, t), ref.quant, ref.tight), `${type} T=${t}: codes one step up`).to.be.above(n * t / 2);
        h.setQ8RoundFault(false);
      }
    }
  });

  it('f32, f16 and bf16 weights compute as matmul_w, bit for bit', () => {
    const rng = new Rng(5);
    for (const type of ['f32', 'f16', 'bf16'] as HostWeightType[]) {
      const w = randomWeight(rng, type, 100, 19);
      for (const t of [1, 20]) {
        const x = randomX(rng, t * 100);
        expect(sameBits(run(h, 'matmul_wq', w, x, t), run(h, 'matmul_w', w, x, t)), `${type} T=${t}`).to.equal(true);
      }
    }
  });

  it('activations at the quantizer\'s edges (ties, subnormal and near-overflow scales, the clamp, ±0) give the same bits on every SIMD path; a code one step off on one path is seen', () => {
    // Each row one kind of block, in every position of a 12-block row: the AVX-512 path quantizes a
    // whole block with vector steps, the others element by element, and the outputs of a q8_0 weight
    // (codes up to 127) carry every code's value.
    const k = 384;
    const rng = new Rng(77);
    const w = randomWeight(rng, 'q8_0', k, 33);
    const blocks: ((i: number) => number)[] = [
      (i) => (i === 0 ? 127 : (i % 64) - 31.5), // d = 1: every other code a tie, to even
      (i) => (i === 5 ? -254 : i + 0.5), // d = 2: ties of x/d at the halves
      (i) => (i % 3) * 1e-39, // a subnormal amax and scale
      (i) => (i % 2 === 0 ? 3e38 : -1.7e38 + i * 1e36), // near the largest f32
      (i) => (i % 2 === 0 ? 0 : -0), // ±0: d = 0, every code 0
      (i) => (i === 7 ? -1 : 1e-30), // one value far above the rest
      () => rng.f32(50),
    ];
    const t = blocks.length;
    const x = new Float32Array(t * k);
    for (let r = 0; r < t; r++) for (let i = 0; i < k; i++) x[r * k + i] = blocks[(r + Math.floor(i / 32)) % t]!(i % 32);
    const outs: [string, Float32Array][] = [];
    eachIsa(h, (isa) => outs.push([isa, run(h, 'matmul_wq', w, x, t)]));
    for (const [isa, got] of outs.slice(1)) expect(sameBits(got, outs[0]![1]), `${isa} against ${outs[0]![0]}`).to.equal(true);
    // Control: the fault (every code one step up) on the default path alone differs from the others.
    h.setQ8RoundFault(true);
    try {
      expect(sameBits(run(h, 'matmul_wq', w, x, t), outs[0]![1])).to.equal(false);
    } finally {
      h.setQ8RoundFault(false);
    }
  });

  it('non-finite activations make the row NaN; a zero block contributes nothing', () => {
    const rng = new Rng(6);
    const w = randomWeight(rng, 'q4_0', 64, 5);
    const x = new Float32Array(128);
    x[3] = Infinity;
    for (let i = 64; i < 96; i++) x[i] = rng.f32();
    const got = run(h, 'matmul_wq', w, x, 2);
    for (let j = 0; j < 5; j++) expect(got[j]).to.be.NaN;
    const ref = references(w, x.subarray(64), 1);
    expect(outside(got.subarray(5), ref.exact, ref.full)).to.equal(0);
  });
});
