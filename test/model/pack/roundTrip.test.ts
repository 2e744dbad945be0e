/**
 * The must-hold round trips: a tiny random Qwen3 in each of the nine GGUF types, packed and verified.
 * Exact types (Q4_0, Q4_1, Q4_K) must have no weight over the bf16 rounding bound; the requantized
 * ones must stay within the encoder's bound and reach cosine 0.99 (measured on this model: about
 * 0.998, relative RMS error about 0.061).
 */
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { QUANT_TYPES } from '../../../src/model/gguf/ggmlTypes.js';
import { openGguf } from '../../../src/model/gguf/reader.js';
import { logicalShapeFromMetadata, quantLayout } from '../../../src/model/q4nx/chunks.js';
import { readQ4nx, tensorData, tensorInfo } from '../../../src/model/q4nx/container.js';
import { decodeTensor } from '../../../src/model/q4nx/decode.js';
import { packGguf } from '../../../src/model/pack/pack.js';
import { verifyPack } from '../../../src/model/pack/verify.js';
import { Workspace } from './helpers.js';

const EXACT = ['Q4_0', 'Q4_1', 'Q4_K'];

function cosine(a: Float32Array, b: Float32Array): number {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i]! * b[i]!; aa += a[i]! ** 2; bb += b[i]! ** 2; }
  return ab / Math.sqrt(aa * bb);
}

/** A q4_1 tensor of a packed directory, decoded to its logical [rows, cols]. */
function decoded(dir: string, name: string): Float32Array {
  const file = readQ4nx(join(dir, 'model.q4nx'));
  const layout = quantLayout(tensorInfo(file.header, name), logicalShapeFromMetadata(file.header.metadata, name));
  return decodeTensor(tensorData(file, name), layout);
}

describe('gguf pack + verify round trips', () => {
  let ws: Workspace;
  before(() => { ws = new Workspace(); });
  after(() => ws.remove());

  for (const type of QUANT_TYPES) {
    it(`${type}: every tensor within its bound${EXACT.includes(type) ? ' (bf16 rounding only)' : ', requantized at cosine >= 0.99'}`, () => {
      const g = ws.tiny(`${type}.gguf`, { type, layers: 2 });
      const dir = ws.path(type);
      const packed = packGguf(g, dir, { tokenizer: ws.tokenizer });
      expect(packed.tensors).to.equal(1 + 2 * 11 + 2);
      const r = verifyPack(g, dir);
      expect(r.problems).to.deep.equal([]);
      expect(r.ok).to.equal(true);
      expect(r.tensors).to.have.length(25);
      for (const t of r.tensors) {
        expect(t.overBound, t.name).to.equal(0);
        expect(t.worstRatio, t.name).to.be.at.most(1);
      }
      const quant = r.tensors.filter((t) => t.name.endsWith('_proj.weight') || t.name === 'lm_head.weight');
      expect(quant).to.have.length(15);
      for (const t of quant) {
        expect(t.method, t.name).to.equal(EXACT.includes(type) ? 'repack' : 'requant');
        if (EXACT.includes(type)) {
          // Only bf16 rounding of scale and zero: far closer than any requantization.
          expect(t.cosine, t.name).to.be.above(0.9999);
          expect(t.maxError, t.name).to.be.above(0);
        } else {
          expect(t.cosine, t.name).to.be.within(0.99, 0.9995);
          expect(t.relRms, t.name).to.be.within(0.03, 0.08);
        }
      }
      for (const t of r.tensors.filter((x) => x.method === 'bf16')) expect(t.cosine, t.name).to.be.above(0.99999);
    });
  }

  it('widths and row counts that are not whole tiles are padded with zero tiles and still verify', () => {
    for (const type of ['Q4_0', 'Q8_0'] as const) {
      // hidden 288 = 1 tile + 32 columns; vocab 300 = 9 tile rows + 12 rows.
      const g = ws.tiny(`odd-${type}.gguf`, { type, hidden: 288, heads: 4, kvHeads: 2, headDim: 72, intermediate: 544, vocab: 300 });
      packGguf(g, ws.path(`odd-${type}`), { tokenizer: ws.tokenizer });
      const r = verifyPack(g, ws.path(`odd-${type}`));
      expect(r.problems, type).to.deep.equal([]);
      expect(r.tensors.filter((t) => !t.pass).map((t) => t.name), type).to.deep.equal([]);
      expect(decoded(ws.path(`odd-${type}`), 'lm_head.weight').length).to.equal(300 * 288);
    }
  });

  it('verify fails a tensor whose padding rows or padding columns decode to anything but 0', () => {
    // hidden 288 = 1 tile + 32 columns; vocab 300 = 9 tile rows + 12 rows: lm_head is [300, 288], so tile
    // row 9 holds rows 300..319 past the tensor, and tile column 1 columns 288..511 past its width.
    const g = ws.tiny('pad.gguf', { type: 'Q4_0', hidden: 288, heads: 4, kvHeads: 2, headDim: 72, intermediate: 544, vocab: 300 });
    const CHUNK = 5120;
    const ZEROS = 512; // the zero plane of a q4_1 tile: bf16 at 512 + 2 * (group * 32 + row)
    const corrupt = (name: string, tileRow: number, tileCol: number, group: number, row: number) => {
      const dir = ws.path(name);
      packGguf(g, dir, { tokenizer: ws.tokenizer });
      const file = join(dir, 'model.q4nx');
      const bytes = readFileSync(file);
      const q = readQ4nx(new Uint8Array(bytes));
      const info = tensorInfo(q.header, 'lm_head.weight');
      const tilesPerRow = 2;
      const at = q.header.dataStart + info.begin + (tileRow * tilesPerRow + tileCol) * CHUNK + ZEROS + 2 * (group * 32 + row);
      bytes.writeUInt16LE(0x3f80, at); // bf16 1.0
      writeFileSync(file, bytes);
      return verifyPack(g, dir);
    };
    const failing = (r: ReturnType<typeof verifyPack>) => r.tensors.filter((t) => !t.pass).map((t) => t.name);
    // A padding row: row 20 of tile row 9 is row 308 of a 300-row tensor.
    expect(failing(corrupt('pad-row', 9, 0, 0, 20))).to.deep.equal(['lm_head.weight']);
    // A padding column: group 2 of tile column 1 is columns 320..351 of a 288-column tensor, in row 0.
    expect(failing(corrupt('pad-col', 0, 1, 2, 0))).to.deep.equal(['lm_head.weight']);
    // The same byte in a real group of a real row is within the tensor and judged by its own bound.
    expect(failing(corrupt('pad-none', 0, 1, 0, 0))).to.deep.equal(['lm_head.weight']);
  });

  it('a tied lm_head is made from token_embd; an untied one from output.weight', () => {
    const tied = ws.tiny('tied.gguf', { type: 'Q4_K', seed: 7 });
    packGguf(tied, ws.path('tied'), { tokenizer: ws.tokenizer });
    const f = openGguf(tied);
    try {
      expect(f.tensor('output.weight')).to.equal(undefined);
      const lm = decoded(ws.path('tied'), 'lm_head.weight');
      const embd = f.tensorFloats('token_embd.weight');
      expect(lm.length).to.equal(embd.length);
      expect(cosine(lm, embd)).to.be.above(0.9999);
    } finally { f.close(); }

    const untied = ws.tiny('untied.gguf', { type: 'Q4_K', seed: 7, tiedEmbeddings: false });
    packGguf(untied, ws.path('untied'), { tokenizer: ws.tokenizer });
    const u = openGguf(untied);
    try {
      const lm = decoded(ws.path('untied'), 'lm_head.weight');
      expect(cosine(lm, u.tensorFloats('output.weight'))).to.be.above(0.9999);
      expect(Math.abs(cosine(lm, u.tensorFloats('token_embd.weight')))).to.be.below(0.05);
    } finally { u.close(); }
    const config = JSON.parse(readFileSync(ws.path('untied/config.json'), 'utf8')) as { tie_word_embeddings: boolean };
    expect(config.tie_word_embeddings).to.equal(false);
    expect(verifyPack(untied, ws.path('untied')).ok).to.equal(true);
  });
});
