import { expect } from 'chai';
import { detectQ8Layout, detectQ8LayoutAgainst, sampleTiles } from '../../../src/model/q4nx/detectQ8.js';
import { encodeTensor } from '../../../src/model/q4nx/encode.js';
import { BF16_FIELDS, randomChunk, refQ8CodeByte, rng } from './reference.js';

const ROWS = 64;
const COLS = 512;

/** A smooth rank-3 matrix, as structured as a real weight matrix is at its most structured. */
function smooth(): Float64Array {
  const m = new Float64Array(ROWS * COLS);
  for (let i = 0; i < ROWS; i++) {
    for (let j = 0; j < COLS; j++) {
      m[i * COLS + j] = Math.sin(i / 9 + j / 41) + 0.5 * Math.cos(i / 5) * Math.sin(j / 23) + 0.2 * Math.cos(j / 13 - i / 17);
    }
  }
  return m;
}

function chunksOf(bytes: Uint8Array, size: number): Uint8Array[] {
  return Array.from({ length: bytes.length / size }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
}

/** Shrinks every code by 4/5, so no group holds a full-range code: only smoothness is left to decide. */
function withoutFullRange(chunks: Uint8Array[]): Uint8Array[] {
  return chunks.map((c) => {
    const d = c.slice();
    for (let i = 512; i < d.length; i++) { const v = d[i]! >= 128 ? d[i]! - 256 : d[i]!; d[i] = Math.round(v * 0.8) & 0xff; }
    return d;
  });
}

describe('detect-q8: deciding the Q8 code order from the data', () => {
  for (const layout of ['a', 'b'] as const) {
    it(`decides layout ${layout} on a smooth matrix with high confidence`, () => {
      const chunks = chunksOf(encodeTensor('q8', smooth(), ROWS, COLS, layout).chunks, 8704);
      const d = detectQ8Layout(chunks);
      expect(d.verdict).to.equal(`layout-${layout}`);
      expect(Math.abs(d.score)).to.be.at.least(0.9);
      expect(d.fullRange![layout]).to.equal(1);
    });

    it(`decides layout ${layout} from smoothness alone when the quantizer leaves no full-range codes`, () => {
      const chunks = withoutFullRange(chunksOf(encodeTensor('q8', smooth(), ROWS, COLS, layout).chunks, 8704));
      const d = detectQ8Layout(chunks);
      expect(d.fullRange).to.deep.equal({ a: 0, b: 0 });
      expect(d.verdict).to.equal(`layout-${layout}`);
      expect(Math.abs(d.score)).to.be.at.least(0.4);
      const right = d.roughness![layout];
      const wrong = d.roughness![layout === 'a' ? 'b' : 'a'];
      expect(wrong / right).to.be.above(4);
    });
  }

  it('says undecided on white noise (random codes and scales)', () => {
    const rand = rng(7);
    for (let trial = 0; trial < 5; trial++) {
      const chunks = Array.from({ length: 8 }, () => randomChunk(8704, BF16_FIELDS.q8, rand));
      const d = detectQ8Layout(chunks);
      expect(d.verdict, `trial ${trial}, score ${d.score}`).to.equal('undecided');
      expect(Math.abs(d.score)).to.be.below(0.2);
    }
  });

  it('a white-noise matrix carries no smoothness; an absmax quantizer still marks its groups', () => {
    const rand = rng(11);
    const noise = Float64Array.from({ length: ROWS * COLS }, () => rand() - 0.5);
    for (const layout of ['a', 'b'] as const) {
      const d = detectQ8Layout(chunksOf(encodeTensor('q8', noise, ROWS, COLS, layout).chunks, 8704));
      expect(d.roughness!.a).to.be.within(0.85, 1.15);
      expect(d.roughness!.b).to.be.within(0.85, 1.15);
      // The full-range signal alone decides: the right order keeps a full-range code in every group.
      expect(d.fullRange![layout]).to.equal(1);
      expect(d.verdict).to.equal(`layout-${layout}`);
      expect(Math.abs(d.score)).to.be.at.least(0.6);
    }
    // Without full-range codes, noise leaves nothing to decide by.
    const bare = detectQ8Layout(withoutFullRange(chunksOf(encodeTensor('q8', noise, ROWS, COLS, 'a').chunks, 8704)));
    expect(bare.verdict).to.equal('undecided');
  });

  it('a reversed group order in one layout reads as a mixed group in the other', () => {
    // A sanity check of the premise: group (r, g) read in layout a gathers bytes from two layout-b groups.
    const owners = new Set<string>();
    for (let j = 0; j < 32; j++) {
      const byte = refQ8CodeByte('a', 5, 3 * 32 + j);
      for (let r = 0; r < 32; r++) for (let k = 0; k < 256; k++) if (refQ8CodeByte('b', r, k) === byte) owners.add(`${r},${Math.floor(k / 32)}`);
    }
    expect(owners.size).to.equal(2);
  });

  it('samples tiles evenly, first and last included', () => {
    expect(sampleTiles(3)).to.deep.equal([0, 1, 2]);
    expect(sampleTiles(100, 5)).to.deep.equal([0, 24, 49, 74, 99]);
  });
});

describe('detect-q8 against a reference of the same weights', () => {
  for (const layout of ['a', 'b'] as const) {
    it(`correlates near 1 in the right order (${layout}) and near 0 in the wrong one`, () => {
      const rand = rng(3);
      // A trained-like matrix: noise with per-column magnitudes, no smoothness to lean on.
      const colScale = Array.from({ length: 256 }, () => 0.2 + rand() * 2);
      const m = Float64Array.from({ length: 32 * 256 }, (_, i) => (rand() - 0.5) * colScale[i % 256]!);
      const chunk = encodeTensor('q8', m, 32, 256, layout).chunks;
      const d = detectQ8LayoutAgainst(chunk, (r, k) => m[r * 256 + k]!);
      expect(d.verdict).to.equal(`layout-${layout}`);
      expect(d.correlation![layout]).to.be.above(0.999);
      expect(Math.abs(d.correlation![layout === 'a' ? 'b' : 'a'])).to.be.below(0.1);
    });
  }

  it('is undecided when the reference is a different matrix', () => {
    const rand = rng(5);
    const m = Float64Array.from({ length: 32 * 256 }, () => rand() - 0.5);
    const other = Float64Array.from({ length: 32 * 256 }, () => rand() - 0.5);
    const d = detectQ8LayoutAgainst(encodeTensor('q8', m, 32, 256, 'a').chunks, (r, k) => other[r * 256 + k]!);
    expect(d.verdict).to.equal('undecided');
  });
});
