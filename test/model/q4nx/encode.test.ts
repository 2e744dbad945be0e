import { expect } from 'chai';
import { Q4nxError } from '../../../src/errors/index.js';
import { encodeQ41Tile, encodeQ4kTile, encodeQ8Tile, encodeTensor } from '../../../src/model/q4nx/encode.js';
import { decodeQ41Tile, decodeQ4kTile, decodeQ8Tile } from '../../../src/model/q4nx/decode.js';
import { q4kChunkToQ41, q4kTensorToQ41 } from '../../../src/model/q4nx/repack.js';
import { BF16_FIELDS, randomChunk, refBf16, refQ41, refQ4k, refQ8, refQ8CodeByte, rng } from './reference.js';

/** Half a bf16 ulp of |v| (the most round-to-nearest can move v), with an f32-scale floor. */
function halfUlpBf16(v: number): number {
  const a = Math.abs(v);
  if (a === 0) return 0;
  return 2 ** (Math.floor(Math.log2(a)) - 8) * 1.0000001;
}

function randomTile(rand: () => number, kind: 'gauss' | 'mixed'): Float64Array {
  const t = new Float64Array(8192);
  for (let i = 0; i < 8192; i++) {
    const u = rand() - 0.5;
    t[i] = kind === 'gauss' ? u * 0.2 : u * 10 ** Math.floor(rand() * 6 - 3);
  }
  return t;
}

describe('q4nx encoders', () => {
  const rand = rng(0xc0de);

  it('q4_1: every decoded weight is within scale/2 plus the bf16 rounding of scale and zero', () => {
    for (let n = 0; n < 6; n++) {
      const x = randomTile(rand, n % 2 === 0 ? 'gauss' : 'mixed');
      const c = encodeQ41Tile(x);
      const ref = refQ41(c);
      for (let r = 0; r < 32; r++) {
        for (let g = 0; g < 8; g++) {
          const vals = Array.from({ length: 32 }, (_, j) => x[r * 256 + g * 32 + j]!);
          const lo = Math.min(...vals);
          const hi = Math.max(...vals);
          const scale = refBf16(c, 2 * (g * 32 + r));
          const zero = refBf16(c, 512 + 2 * (g * 32 + r));
          expect(Math.abs(zero - lo)).to.be.at.most(halfUlpBf16(lo));
          expect(Math.abs(scale - (hi - lo) / 15)).to.be.at.most(halfUlpBf16((hi - lo) / 15));
          const bound = scale / 2 + 15 * Math.abs(scale - (hi - lo) / 15) + Math.abs(zero - lo);
          for (let j = 0; j < 32; j++) {
            const k = g * 32 + j;
            const w = ref[r]![k]!;
            const slack = Math.abs(w) * 2 ** -23;
            expect(Math.abs(w - x[r * 256 + k]!)).to.be.at.most(bound + slack);
            // The documented rounding: clamp(floor((x - zero)/scale + 0.5), 0, 15).
            const want = scale === 0 ? 0 : Math.min(15, Math.max(0, Math.floor((x[r * 256 + k]! - zero) / scale + 0.5)));
            expect(Math.fround(want * scale + zero)).to.equal(w);
          }
        }
      }
    }
  });

  it('q4_1: a constant group decodes to its bf16 value with scale 0', () => {
    const x = new Float64Array(8192).fill(0.3);
    const c = encodeQ41Tile(x);
    expect(refBf16(c, 0)).to.equal(0);
    expect(decodeQ41Tile(c)[77]).to.equal(Math.fround(refBf16(c, 512)));
  });

  it('Q8: within d/2 in both layouts, codes at the layout addresses', () => {
    for (const layout of ['a', 'b'] as const) {
      const x = randomTile(rand, 'gauss');
      const c = encodeQ8Tile(x, layout);
      const ref = refQ8(c, layout);
      const got = decodeQ8Tile(c, layout);
      for (let r = 0; r < 32; r++) {
        for (let k = 0; k < 256; k++) {
          const d = refBf16(c, 2 * (Math.floor(k / 32) * 32 + r));
          const amax = Math.max(...Array.from({ length: 32 }, (_, j) => Math.abs(x[r * 256 + Math.floor(k / 32) * 32 + j]!)));
          const err = Math.abs(ref[r]![k]! - x[r * 256 + k]!);
          // d rounded below amax/127 can clamp the largest code: allow 127*|d - amax/127| on top of d/2.
          expect(err).to.be.at.most(d / 2 + 127 * Math.abs(d - amax / 127) + 1e-7);
          expect(got[r * 256 + k]).to.equal(ref[r]![k]);
        }
      }
      // Every group holds a full-range code, as an absmax quantizer must.
      for (let r = 0; r < 32; r++) {
        for (let g = 0; g < 8; g++) {
          let max = 0;
          for (let j = 0; j < 32; j++) { const b = c[refQ8CodeByte(layout, r, g * 32 + j)]!; max = Math.max(max, b >= 128 ? 256 - b : b); }
          expect(max).to.be.at.least(126);
        }
      }
    }
  });

  it('Q4_K-like: decodes within one step plus rounding of the group range, and as the reference does', () => {
    const x = randomTile(rand, 'gauss');
    const c = encodeQ4kTile(x);
    const ref = refQ4k(c);
    const got = decodeQ4kTile(c);
    let worst = 0;
    for (let r = 0; r < 32; r++) {
      for (let k = 0; k < 256; k++) {
        expect(got[r * 256 + k]).to.equal(ref[r]![k]);
        worst = Math.max(worst, Math.abs(ref[r]![k]! - x[r * 256 + k]!));
      }
    }
    // The values span [-0.1, 0.1]: a 4-bit grid with u8 sub-scales lands within a step of 0.2/15.
    expect(worst).to.be.below(0.2 / 15);
  });

  it('encodeTensor pads to whole tiles with zeros and refuses a wrong value count', () => {
    const values = Float64Array.from({ length: 33 * 257 }, (_, i) => Math.sin(i));
    const t = encodeTensor('q4_1', values, 33, 257);
    expect(t.grid).to.deep.equal([2, 2]);
    expect(t.chunks.length).to.equal(4 * 5120);
    const last = refQ41(t.chunks.subarray(3 * 5120));
    expect(last[5]![5]).to.equal(0);
    expect(() => encodeTensor('q4_1', values, 33, 256)).to.throw(Q4nxError);
    expect(() => encodeQ41Tile(new Float64Array(8192).fill(NaN))).to.throw(Q4nxError, /not finite/);
  });
});

describe('q4kChunkToQ41', () => {
  const rand = rng(0x4b);

  function checkRepack(c: Uint8Array): void {
    const q41 = q4kChunkToQ41(c);
    const want = refQ4k(c);
    const got = refQ41(q41);
    for (let r = 0; r < 32; r++) {
      const S = refBf16(c, 4608 + 2 * r);
      const M = refBf16(c, 4672 + 2 * r);
      for (let k = 0; k < 256; k++) {
        const g = Math.floor(k / 32);
        const ss = S * c[g * 32 + r]!;
        const mm = M * c[256 + g * 32 + r]!;
        // Exact apart from rounding S*scale and M*min to bf16 (and each decode's own f32 rounding).
        const bound = 15 * halfUlpBf16(ss) + halfUlpBf16(mm) + (Math.abs(want[r]![k]!) + Math.abs(got[r]![k]!)) * 2 ** -24;
        expect(Math.abs(got[r]![k]! - want[r]![k]!)).to.be.at.most(bound);
      }
    }
  }

  it('keeps every weight within its bf16 rounding bound on random chunks', () => {
    for (let i = 0; i < 12; i++) checkRepack(randomChunk(4736, BF16_FIELDS.q4k, rand));
  });

  it('keeps every weight within its bound on encoded chunks, with codes unchanged', () => {
    const c = encodeQ4kTile(randomTile(rand, 'mixed'));
    checkRepack(c);
    const q41 = q4kChunkToQ41(c);
    for (let r = 0; r < 32; r++) {
      for (let k = 0; k < 256; k += 5) {
        const a = c[512 + k * 16 + Math.floor(r / 2)]!;
        const b = q41[1024 + Math.floor(r / 16) * 2048 + k * 8 + Math.floor((r % 16) / 2)]!;
        expect(r % 2 === 0 ? b & 15 : b >> 4).to.equal(r % 2 === 0 ? a & 15 : a >> 4);
      }
    }
  });

  it('repacks whole tensors chunk by chunk and refuses partial chunks', () => {
    const a = randomChunk(4736, BF16_FIELDS.q4k, rand);
    const b = randomChunk(4736, BF16_FIELDS.q4k, rand);
    const both = new Uint8Array(2 * 4736);
    both.set(a);
    both.set(b, 4736);
    const out = q4kTensorToQ41(both);
    expect(Array.from(out.subarray(5120))).to.deep.equal(Array.from(q4kChunkToQ41(b)));
    expect(() => q4kTensorToQ41(new Uint8Array(4737))).to.throw(Q4nxError);
  });
});
