import { expect } from 'chai';
import { Q4nxError } from '../../../src/errors/index.js';
import { quantLayout } from '../../../src/model/q4nx/chunks.js';
import { decodeQ41Tile, decodeQ4kTile, decodeQ8Tile, decodeTensor, decodeTile } from '../../../src/model/q4nx/decode.js';
import { BF16_FIELDS, randomChunk, refQ41, refQ4k, refQ8, rng, type RefTile } from './reference.js';

function expectSame(got: Float32Array, want: RefTile, what: string): void {
  for (let r = 0; r < 32; r++) {
    for (let k = 0; k < 256; k++) {
      const g = got[r * 256 + k]!;
      const w = want[r]![k]!;
      if (!Object.is(g, w)) expect.fail(`${what}: (${r}, ${k}) decoded ${g}, the reference says ${w}`);
    }
  }
}

describe('q4nx decoders against the independent reference', () => {
  const rand = rng(0x51ed);

  it('decodes random q4_1 chunks bit for bit', () => {
    for (let i = 0; i < 20; i++) {
      const c = randomChunk(5120, BF16_FIELDS.q4_1, rand);
      expectSame(decodeQ41Tile(c), refQ41(c), `q4_1 chunk ${i}`);
    }
  });

  it('decodes random Q4_K-like chunks bit for bit', () => {
    for (let i = 0; i < 20; i++) {
      const c = randomChunk(4736, BF16_FIELDS.q4k, rand);
      expectSame(decodeQ4kTile(c), refQ4k(c), `q4k chunk ${i}`);
    }
  });

  for (const layout of ['a', 'b'] as const) {
    it(`decodes random Q8 chunks in layout ${layout} bit for bit`, () => {
      for (let i = 0; i < 20; i++) {
        const c = randomChunk(8704, BF16_FIELDS.q8, rand);
        expectSame(decodeQ8Tile(c, layout), refQ8(c, layout), `q8 ${layout} chunk ${i}`);
      }
    });
  }

  it('the two Q8 layouts decode the same bytes differently', () => {
    const c = randomChunk(8704, BF16_FIELDS.q8, rand);
    const a = decodeQ8Tile(c, 'a');
    const b = decodeQ8Tile(c, 'b');
    let differ = 0;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) differ++;
    expect(differ).to.be.greaterThan(7000);
    // Both orders put the code of (0, 0) at byte 512.
    expect(a[0]).to.equal(b[0]);
  });

  it('refuses a Q8 tile without its layout, and a short chunk', () => {
    const c = randomChunk(8704, BF16_FIELDS.q8, rand);
    expect(() => decodeTile('q8', c)).to.throw(Q4nxError, /code layout/);
    expect(() => decodeQ41Tile(new Uint8Array(5119))).to.throw(Q4nxError, /5120 bytes/);
  });

  it('decodes a whole 2-D tensor to its logical shape, dropping padding', () => {
    const rows = 40;
    const cols = 300;
    const chunks = [0, 1, 2, 3].map(() => randomChunk(5120, BF16_FIELDS.q4_1, rand));
    const data = new Uint8Array(4 * 5120);
    chunks.forEach((c, i) => data.set(c, i * 5120));
    const layout = quantLayout({ name: 'w', dtype: 'I8', shape: [4, 5120], begin: 0, end: data.length }, [rows, cols]);
    expect(layout.grid).to.deep.equal([2, 2]);
    const out = decodeTensor(data, layout);
    expect(out.length).to.equal(rows * cols);
    const refs = chunks.map(refQ41);
    for (let r = 0; r < rows; r++) {
      for (let k = 0; k < cols; k++) {
        const tile = refs[Math.floor(r / 32) * 2 + Math.floor(k / 256)]!;
        expect(out[r * cols + k]).to.equal(tile[r % 32]![k % 256]);
      }
    }
  });

  it('decodes a 3-D [tile rows, tile cols, chunk] tensor over its whole grid', () => {
    const chunks = [0, 1, 2].map(() => randomChunk(8704, BF16_FIELDS.q8, rand));
    const data = new Uint8Array(3 * 8704);
    chunks.forEach((c, i) => data.set(c, i * 8704));
    const layout = quantLayout({ name: 'w', dtype: 'I8', shape: [1, 3, 8704], begin: 0, end: data.length });
    expect(layout.logical).to.deep.equal([32, 768]);
    const out = decodeTensor(data, layout, 'b');
    const refs = chunks.map((c) => refQ8(c, 'b'));
    for (let r = 0; r < 32; r += 7) for (let k = 0; k < 768; k += 13) expect(out[r * 768 + k]).to.equal(refs[Math.floor(k / 256)]![r]![k % 256]);
  });

  it('refuses to decode a 2-D tensor whose logical shape is unknown', () => {
    const layout = quantLayout({ name: 'w', dtype: 'I8', shape: [2, 5120], begin: 0, end: 10240 });
    expect(() => decodeTensor(new Uint8Array(10240), layout)).to.throw(Q4nxError, /logical/);
  });
});
