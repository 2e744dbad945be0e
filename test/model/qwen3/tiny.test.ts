import { expect } from 'chai';
import { InvalidInput } from '../../../src/errors/index.js';
import { QUANT_TYPES } from '../../../src/model/gguf/ggmlTypes.js';
import { dequantize } from '../../../src/model/gguf/dequant.js';
import { quantize } from '../../../src/model/gguf/quantize.js';
import { readGguf } from '../../../src/model/gguf/reader.js';
import { plainValue } from '../../../src/model/gguf/types.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyQwen3Gguf, tinyQwen3Tensors, writeTinyQwen3 } from '../../../src/model/qwen3/tiny.js';
import { loadTokenizer } from '../../../src/model/tokenizer/load.js';
import { sameFloats } from '../gguf/helpers.js';

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let ab = 0; let aa = 0; let bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i]! * b[i]!; aa += a[i]! ** 2; bb += b[i]! ** 2; }
  return ab / Math.sqrt(aa * bb);
}

describe('tiny qwen3 gguf', function () {
  this.timeout(30_000);

  for (const type of QUANT_TYPES) {
    it(`${type}: round-trips: names, shapes, metadata, weights close to their f32 source`, () => {
      const opts = { type, layers: 2, seed: 7 } as const;
      const f = readGguf(tinyQwen3Gguf(opts), { packed: true });
      const src = tinyQwen3Tensors(opts);
      expect(f.tensors.map((t) => t.name)).to.deep.equal(src.map((t) => t.name));
      expect(f.tensor('output.weight')).to.equal(undefined);
      expect(plainValue(f.metadata.get('general.architecture')!)).to.equal('qwen3');
      expect(plainValue(f.metadata.get('qwen3.block_count')!)).to.equal(2);
      expect(plainValue(f.metadata.get('qwen3.attention.head_count_kv')!)).to.equal(2);
      expect(plainValue(f.metadata.get('tokenizer.ggml.eos_token_id')!)).to.equal(319);
      expect(f.tensor('blk.1.attn_q.weight')!.dims).to.deep.equal([256, 256]);
      expect(f.tensor('blk.0.attn_k.weight')!.dims).to.deep.equal([256, 128]);
      expect(f.tensor('blk.0.ffn_down.weight')!.dims).to.deep.equal([512, 256]);
      expect(f.tensor('token_embd.weight')!.dims).to.deep.equal([256, 320]);
      expect(f.tensor('blk.0.attn_q_norm.weight')!.typeName).to.equal('F32');
      for (const t of src) {
        const info = f.tensor(t.name)!;
        expect(info.typeName, t.name).to.equal(t.type);
        const got = f.tensorFloats(info);
        // Exactly what quantizing the source gives, and close to the source itself.
        expect(sameFloats(got, dequantize(t.type, quantize(t.type, t.values), t.values.length)), t.name).to.equal(true);
        expect(cosine(got, t.values), t.name).to.be.above(type.startsWith('Q4') ? 0.99 : 0.999);
      }
    });
  }

  it('untied embeddings add output.weight; the seed decides the weights', () => {
    const f = readGguf(tinyQwen3Gguf({ type: 'Q6_K', tiedEmbeddings: false, layers: 1 }));
    expect(f.tensor('output.weight')!.dims).to.deep.equal([256, 320]);
    const a = tinyQwen3Tensors({ seed: 1, layers: 1 })[1]!.values;
    expect(tinyQwen3Tensors({ seed: 1, layers: 1 })[1]!.values).to.deep.equal(a);
    expect(tinyQwen3Tensors({ seed: 2, layers: 1 })[1]!.values).to.not.deep.equal(a);
  });

  it('refuses shapes a K-quant cannot hold', () => {
    expect(() => tinyQwen3Gguf({ type: 'Q4_K', hidden: 128 })).to.throw(InvalidInput, /hidden = 128 is not a multiple of the Q4_K block size 256/);
    expect(() => tinyQwen3Gguf({ type: 'Q8_0', hidden: 128, intermediate: 256 })).to.not.throw();
  });

  it('per-tensor types make a mixed file; a type whose blocks do not fit a tensor is refused', () => {
    const f = readGguf(tinyQwen3Gguf({ type: 'Q4_K', layers: 1, types: { 'token_embd.weight': 'Q6_K', 'blk.0.ffn_down.weight': 'Q8_0' } }));
    expect(f.tensor('token_embd.weight')!.typeName).to.equal('Q6_K');
    expect(f.tensor('blk.0.ffn_down.weight')!.typeName).to.equal('Q8_0');
    expect(f.tensor('blk.0.ffn_up.weight')!.typeName).to.equal('Q4_K');
    expect(() => tinyQwen3Gguf({ type: 'Q8_0', hidden: 96, intermediate: 128, heads: 2, headDim: 48, kvHeads: 1, types: { 'blk.0.attn_q.weight': 'Q4_K' } }))
      .to.throw(InvalidInput, /attn_q.weight cannot be Q4_K/);
  });

  it('its vocabulary is byte-level: text encodes and decodes back, the specials stay whole, the eos is last', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tiny-tok-'));
    try {
      const p = join(dir, 'm.gguf');
      writeTinyQwen3(p, { layers: 1 });
      const tok = loadTokenizer(p);
      const text = 'hello, wörld <|im_start|>x';
      const ids = tok.encode(text);
      expect(tok.decode(ids)).to.equal(text);
      expect(ids).to.include(317);
      expect(ids.length).to.be.below(new TextEncoder().encode(text).length);
      expect(tok.eosIds).to.include(319);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writeTinyQwen3 streams the same file as tinyQwen3Gguf', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tiny-stream-'));
    try {
      const o = { type: 'Q4_0', layers: 2, seed: 5, tiedEmbeddings: false } as const;
      writeTinyQwen3(join(dir, 'm.gguf'), o);
      expect(Buffer.compare(readFileSync(join(dir, 'm.gguf')), Buffer.from(tinyQwen3Gguf(o)))).to.equal(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
