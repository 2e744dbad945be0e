import { expect } from 'chai';
import { InvalidInput } from '../../../src/errors/index.js';
import { QUANT_TYPES } from '../../../src/model/gguf/ggmlTypes.js';
import { dequantize } from '../../../src/model/gguf/dequant.js';
import { quantize } from '../../../src/model/gguf/quantize.js';
import { readGguf } from '../../../src/model/gguf/reader.js';
import { plainValue } from '../../../src/model/gguf/types.js';
import { tinyQwen3Gguf, tinyQwen3Tensors } from '../../../src/model/qwen3/tiny.js';
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
});
