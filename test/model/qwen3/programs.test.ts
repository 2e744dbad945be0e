import { expect } from 'chai';
import { InvalidInput, ResourceLimit } from '../../../src/errors/index.js';
import type { QuantType } from '../../../src/model/gguf/ggmlTypes.js';
import { openGguf } from '../../../src/model/gguf/reader.js';
import { configFromGguf, configFromJson, QWEN3_SHAPES, type Qwen3Config } from '../../../src/model/qwen3/config.js';
import { loadModel, type Qwen3Model } from '../../../src/model/qwen3/model.js';
import { buildProgram } from '../../../src/model/qwen3/program.js';
import { expectedShapes, ggufWeights, type BoundWeight } from '../../../src/model/qwen3/weights.js';
import { checkProgram } from '../../../src/ops/validate.js';
import { cosine, modelFixture, SMALL } from './helpers.js';

/** Every type a GGUF weight binds as (Q5_K does not: it is refused below). */
const TYPES: readonly QuantType[] = ['Q4_0', 'Q4_1', 'Q8_0', 'Q4_K', 'Q6_K', 'F32', 'F16', 'BF16'];

describe('qwen3 programs on the cpu and host targets against the fp64 reference', function () {
  this.timeout(120_000);
  const fx = modelFixture();
  // The cpu and host tests of a type share its file and its fp64 reference, computed once: the same
  // file and request give the same reference whatever the target (reference() runs on the oracle).
  const files = new Map<string, string>();
  const fileOf = (name: string, o: Parameters<typeof fx.gguf>[1]): string => {
    if (!files.has(name)) files.set(name, fx.gguf(name, o));
    return files.get(name)!;
  };
  type Completion = Awaited<ReturnType<Qwen3Model['complete']>>;
  const references = new Map<string, Promise<Completion>>();
  const referenceOf = (path: string, model: Qwen3Model, request: Parameters<Qwen3Model['complete']>[0]): Promise<Completion> => {
    if (!references.has(path)) references.set(path, model.reference().complete(request));
    return references.get(path)!;
  };

  for (const target of ['cpu', 'host'] as const) {

  for (const type of TYPES) {
    it(`${target}, ${type}: logits at cosine >= 0.9999 at every position, the same greedy tokens`, async () => {
      const path = fileOf(`${type}.gguf`, { ...SMALL, type });
      const model = await loadModel(path, { engine: fx.engine(), ctx: 32, target });
      const request = { promptIds: [3, 1, 4, 1, 5], maxTokens: 6, logits: true, repetitionPenalty: 1, ignoreEos: true };
      const got = await model.complete(request);
      const want = await referenceOf(path, model, request);
      expect(got.ids).to.deep.equal(want.ids);
      expect(got.ids).to.have.length(6);
      got.logits!.forEach((l, k) => {
        expect(l.shape).to.deep.equal([320]);
        expect(cosine(l.data, want.logits![k]!.data), `position ${5 + k}`).to.be.at.least(0.9999);
      });
      // The targets round to f32 and the reference does not: they are close, not the same values.
      expect(got.logits![0]!.data).to.not.deep.equal(want.logits![0]!.data);
      await model.close();
    });
  }

  it(`${target}: a mixed file (Q6_K embedding, Q4_K projections, Q8_0 ffn_down) and an untied lm head run too`, async () => {
    const types = { 'token_embd.weight': 'Q6_K', 'output.weight': 'Q8_0', 'blk.0.ffn_down.weight': 'Q8_0', 'blk.1.ffn_down.weight': 'Q8_0' } as const;
    const path = fileOf('mixed.gguf', { ...SMALL, type: 'Q4_K', tiedEmbeddings: false, types });
    const model = await loadModel(path, { engine: fx.engine(), ctx: 16, target });
    expect(model.config.tied).to.equal(false);
    expect(model.source.weights.get('token_embd')!.dtype).to.equal('q6_k');
    expect(model.source.weights.get('output')!.dtype).to.equal('q8_0');
    const request = { promptIds: [7, 8, 9], maxTokens: 4, logits: true, repetitionPenalty: 1, ignoreEos: true };
    const got = await model.complete(request);
    const want = await referenceOf(path, model, request);
    expect(got.ids).to.deep.equal(want.ids);
    for (const [k, l] of got.logits!.entries()) expect(cosine(l.data, want.logits![k]!.data)).to.be.at.least(0.9999);
  });
  }


  it('prefill in chunks equals prefill in one step', async () => {
    const path = fx.gguf('chunks.gguf', { ...SMALL, type: 'Q8_0' });
    const one = await loadModel(path, { engine: fx.engine(), ctx: 32 });
    const chunked = await loadModel(path, { engine: fx.engine(), ctx: 32, prefillChunk: 3 });
    const request = { promptIds: [10, 11, 12, 13, 14, 15, 16], maxTokens: 3, logits: true, repetitionPenalty: 1 };
    const a = await one.complete(request);
    const b = await chunked.complete(request);
    expect(b.ids).to.deep.equal(a.ids);
    expect(cosine(a.logits![0]!.data, b.logits![0]!.data)).to.be.at.least(0.99999);
  });

  it('a Q5_K weight is refused at its tensor, naming the types that bind', async () => {
    const path = fx.gguf('q5k.gguf', { ...SMALL, type: 'Q5_K' });
    let err: unknown;
    try { await loadModel(path, { engine: fx.engine() }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(InvalidInput);
    expect((err as InvalidInput).path).to.equal('/tensors/token_embd.weight');
    expect((err as InvalidInput).reason).to.match(/Q5_K cannot be bound.*Q4_K/);
  });

  it('binds each GGUF tensor at its byte range: shape = dims reversed, dtype = the ggml type', () => {
    const path = fx.gguf('bind.gguf', { ...SMALL, type: 'Q4_0' });
    const f = openGguf(path);
    const w = ggufWeights(f, path, configFromGguf(f));
    const t = f.tensor('blk.1.ffn_down.weight')!;
    expect(w.get('blk.1.ffn_down')).to.deep.equal({ dtype: 'q4_0', shape: [256, 512], file: path, offset: f.dataOffset + t.offset, length: t.byteSize });
    expect(w.get('blk.0.attn_norm')).to.include({ dtype: 'f32' });
    expect(w.has('output')).to.equal(false);
    f.close();
  });

  it('reads the shape from the metadata: heads, GQA groups, tied head, rope theta, eps', () => {
    const path = fx.gguf('shape.gguf', { ...SMALL, heads: 8, kvHeads: 2, headDim: 32, ropeTheta: 10000, rmsEps: 1e-5 });
    const f = openGguf(path);
    const c = configFromGguf(f);
    f.close();
    expect(c).to.include({ layers: 2, hidden: 256, heads: 8, kvHeads: 2, headDim: 32, vocab: 320, ropeTheta: 10000, rmsEps: 1e-5, tied: true });
    expect(c.eosIds).to.deep.equal([319]);
  });
});

describe('qwen3 programs: the shapes of Qwen3-0.6B, 1.7B and 4B', function () {
  this.timeout(60_000);
  const configOf = (s: (typeof QWEN3_SHAPES)[keyof typeof QWEN3_SHAPES]): Qwen3Config => configFromJson({
    model_type: 'qwen3', num_hidden_layers: s.layers, hidden_size: s.hidden, intermediate_size: s.intermediate,
    num_attention_heads: s.heads, num_key_value_heads: s.kvHeads, head_dim: s.headDim, vocab_size: s.vocab,
    tie_word_embeddings: s.tied, max_position_embeddings: 40960,
  }, 'config.json');
  // Weights as a Q4_K GGUF would bind them (the file is never read to build or check a program).
  const weightsOf = (c: Qwen3Config) => {
    const weights = new Map<string, BoundWeight>();
    for (const [k, shape] of expectedShapes(c, false)) weights.set(k, { dtype: shape.length === 1 ? 'f32' : 'q4_k', shape, file: '/m.gguf', offset: 0, length: 0 });
    return weights;
  };
  for (const [name, s] of Object.entries(QWEN3_SHAPES)) {
    it(`${name}: the decode and a prefill program check, with the cache and weights of that shape`, () => {
      const c = configOf(s);
      const weights = weightsOf(c);
      for (const tokens of [1, 16]) {
        const checked = checkProgram(buildProgram(c, weights, { tokens, ctx: 2048 }));
        const p = checked.program;
        expect(p.args.filter((a) => a.role === 'state')).to.have.length(2 * s.layers);
        expect(p.args.find((a) => a.name === 'cache.k.0')!.shape).to.deep.equal([s.kvHeads, 2048, s.headDim]);
        expect(p.args.find((a) => a.name === 'blk.0.attn_q')!.shape).to.deep.equal([s.heads * s.headDim, s.hidden]);
        expect(checked.types.get('logits')!.shape).to.deep.equal([s.vocab]);
        expect(p.args.some((a) => a.name === 'output')).to.equal(false);
      }
    });
  }

  it('4B at a context of 8192 is past the default program-bytes limit (a typed ResourceLimit, not an allocation)', () => {
    const c = configOf(QWEN3_SHAPES['4b']);
    expect(() => buildProgram(c, weightsOf(c), { tokens: 1, ctx: 8192 })).to.throw(ResourceLimit, /program-bytes/);
  });

  it('refuses a config.json of another model type, naming the key', () => {
    expect(() => configFromJson({ model_type: 'gpt2' }, 'c.json')).to.throw(InvalidInput, /c\.json\/model_type: model_type "gpt2" is not one a model directory runs \(qwen3, llama/);
    expect(() => configFromJson({ model_type: 'qwen3', num_attention_heads: 6, num_key_value_heads: 4, hidden_size: 96 }, 'c.json'))
      .to.throw(InvalidInput, /6 heads do not split into 4/);
  });
});
