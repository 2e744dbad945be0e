/** The architecture descriptors as the loader reads them: each one's config and options from a GGUF, and the typed refusals. */
import { expect } from 'chai';
import { InvalidInput } from '../../../src/errors/index.js';
import { ARCHITECTURE_NAMES } from '../../../src/model/arch/index.js';
import { readGguf } from '../../../src/model/gguf/reader.js';
import { quantize } from '../../../src/model/gguf/quantize.js';
import { gv, type GgufValue } from '../../../src/model/gguf/types.js';
import { writeGguf } from '../../../src/model/gguf/writer.js';
import { configFromGguf, configFromJson } from '../../../src/model/qwen3/config.js';
import { expectedShapes, ggufWeights } from '../../../src/model/qwen3/weights.js';
import { llama3FreqFactors, tinyQwen3Gguf, tinyQwen3Metadata, tinyQwen3Tensors, type TinyQwen3Options } from '../../../src/model/qwen3/tiny.js';
import { llama3RopeFromFactors } from '../../../src/model/arch/hf.js';

const SHAPE: TinyQwen3Options = { layers: 1, hidden: 64, intermediate: 128, heads: 2, kvHeads: 1, headDim: 32, vocab: 320, type: 'F32' };

/** A tiny GGUF of `o` with metadata edited by `edit` (and tensors by `tensors`). */
function file(o: TinyQwen3Options, edit: (m: Map<string, GgufValue>) => void = () => {}, keep: (name: string) => boolean = () => true) {
  const m = tinyQwen3Metadata({ ...SHAPE, ...o });
  edit(m);
  const tensors = tinyQwen3Tensors({ ...SHAPE, ...o }).filter((t) => keep(t.name)).map((t) => ({ name: t.name, dims: t.dims, type: t.type, data: quantize(t.type, t.values) }));
  return readGguf(writeGguf({ version: 3, metadata: m, tensors }));
}

describe('model/arch: descriptors read from a GGUF', () => {
  it('each architecture gives its graph options; qwen3 keeps its own', () => {
    const opts = (arch: string, o: TinyQwen3Options = {}) => configFromGguf(readGguf(tinyQwen3Gguf({ ...SHAPE, arch, ...o }))).options;
    expect(opts('qwen3')).to.include({ rope: 'neox', qkNorm: true, qkvBias: false, fusedQkv: false, fusedGateUp: false, ropeDims: 32, ropeFreqScale: 1, ropeFreqs: false });
    expect(opts('llama')).to.include({ rope: 'normal', qkNorm: false, qkvBias: false, ropeFreqs: false });
    expect(opts('llama', { ropeFreqs: true })).to.include({ ropeFreqs: true });
    expect(opts('qwen2')).to.include({ rope: 'neox', qkvBias: true, qkNorm: false });
    expect(opts('phi3', { ropeDims: 16 })).to.include({ rope: 'neox', fusedQkv: true, fusedGateUp: true, ropeDims: 16 });
    const c = configFromGguf(readGguf(tinyQwen3Gguf({ ...SHAPE, arch: 'phi3' })));
    expect(expectedShapes(c, false).get('blk.0.ffn_up')).to.deep.equal([256, 64]);
    expect(expectedShapes(c, false).get('blk.0.attn_qkv')).to.deep.equal([128, 64]);
  });

  it('refuses an architecture that does not run, listing those that do', () => {
    const f = file({}, (m) => m.set('general.architecture', gv.str('falcon')));
    expect(() => configFromGguf(f)).to.throw(InvalidInput, /general\.architecture: architecture "falcon" does not run: the architectures that do are qwen3, qwen3moe, llama, qwen2, phi3, minicpm, gemma3/);
    expect(ARCHITECTURE_NAMES).to.deep.equal(['qwen3', 'qwen3moe', 'llama', 'qwen2', 'phi3', 'minicpm', 'gemma3']);
  });

  it('qwen3moe reads its experts from its keys, each refused by name when missing or wrong; its tensors are [E, ...]', () => {
    const moe = { arch: 'qwen3moe', experts: 4, expertsUsed: 2, expertFf: 96 };
    const c = configFromGguf(file(moe));
    expect(c.options).to.include({ rope: 'neox', qkNorm: true });
    expect(c.options.moe).to.deep.equal({ experts: 4, used: 2, ff: 96, normalize: true });
    expect(expectedShapes(c, false).get('blk.0.ffn_gate_inp')).to.deep.equal([4, 64]);
    expect(expectedShapes(c, false).get('blk.0.ffn_up_exps')).to.deep.equal([4, 96, 64]);
    expect(expectedShapes(c, false).get('blk.0.ffn_down_exps')).to.deep.equal([4, 64, 96]);
    const f = file(moe);
    expect(ggufWeights(f, '/m.gguf', configFromGguf(f)).get('blk.0.ffn_gate_exps')).to.include({ dtype: 'f32' });
    for (const key of ['expert_count', 'expert_used_count', 'expert_feed_forward_length']) {
      expect(() => configFromGguf(file(moe, (m) => m.delete(`qwen3moe.${key}`))), key).to.throw(InvalidInput, new RegExp(`qwen3moe\\.${key}: the qwen3moe GGUF does not declare it`));
      expect(() => configFromGguf(file(moe, (m) => m.set(`qwen3moe.${key}`, gv.u32(0)))), key).to.throw(InvalidInput, new RegExp(`qwen3moe\\.${key}: 0 is not a positive integer`));
    }
    expect(() => configFromGguf(file(moe, (m) => m.set('qwen3moe.expert_used_count', gv.u32(5))))).to.throw(InvalidInput, /qwen3moe\.expert_used_count: 5 experts used of 4/);
    // A dense FFN tensor in a qwen3moe file is not read: refused at it.
    const dense = readGguf(writeGguf({ version: 3, metadata: tinyQwen3Metadata({ ...SHAPE, ...moe }), tensors: [
      ...tinyQwen3Tensors({ ...SHAPE, ...moe }).map((t) => ({ name: t.name, dims: t.dims, type: t.type, data: quantize(t.type, t.values) })),
      { name: 'blk.0.ffn_up.weight', dims: [64, 128], type: 'F32', data: quantize('F32', new Float32Array(64 * 128)) },
    ] }));
    expect(() => ggufWeights(dense, '/m.gguf', configFromGguf(dense))).to.throw(InvalidInput, /blk\.0\.ffn_up\.weight: the qwen3moe graph does not read this tensor/);
  });

  it('refuses a declared scale the graph does not honour (a neutral one passes), naming the key', () => {
    expect(() => configFromGguf(file({ arch: 'llama' }, (m) => m.set('llama.logit_scale', gv.f32(0.25))))).to.throw(InvalidInput, /llama\.logit_scale.*does not honour/);
    expect(() => configFromGguf(file({ arch: 'llama' }, (m) => m.set('llama.logit_scale', gv.f32(1))))).not.to.throw();
  });

  it('linear rope scaling and YaRN are read as llama.cpp reads them; another type or a yarn_* key is refused at its key; a bad number names its key', () => {
    const lin = configFromGguf(file({ arch: 'llama' }, (m) => { m.set('llama.rope.scaling.type', gv.str('linear')); m.set('llama.rope.scaling.factor', gv.f32(4)); }));
    expect(lin.options.ropeFreqScale).to.equal(0.25);
    // No type: linear, as llama.cpp defaults it.
    expect(configFromGguf(file({ arch: 'llama' }, (m) => m.set('llama.rope.scaling.factor', gv.f32(2)))).options.ropeFreqScale).to.equal(0.5);
    expect(() => configFromGguf(file({ arch: 'llama' }, (m) => m.set('llama.rope.scaling.attn_factor', gv.f32(-1))))).to.throw(InvalidInput, /llama\.rope\.scaling\.attn_factor: a positive number/);
    // YaRN: the factor, the original context (default the context length) and llama.cpp's defaults.
    const yarn = configFromGguf(file({ arch: 'qwen2', contextLength: 4096 }, (m) => { m.set('qwen2.rope.scaling.type', gv.str('yarn')); m.set('qwen2.rope.scaling.factor', gv.f32(4)); }));
    expect(yarn.options.ropeFreqScale).to.equal(0.25);
    expect(yarn.options.ropeYarn).to.deep.equal({ origContext: 4096, betaFast: 32, betaSlow: 1, extFactor: 1 });
    const orig = configFromGguf(file({ arch: 'qwen3' }, (m) => { m.set('qwen3.rope.scaling.type', gv.str('yarn')); m.set('qwen3.rope.scaling.factor', gv.f32(4)); m.set('qwen3.rope.scaling.original_context_length', gv.u32(32768)); }));
    expect(orig.options.ropeYarn?.origContext).to.equal(32768);
    // A linear file has no YaRN; "none" turns a declared factor off, as llama.cpp does.
    expect(lin.options.ropeYarn).to.equal(undefined);
    expect(configFromGguf(file({ arch: 'llama' }, (m) => { m.set('llama.rope.scaling.type', gv.str('none')); m.set('llama.rope.scaling.factor', gv.f32(4)); })).options.ropeFreqScale).to.equal(1);
    expect(() => configFromGguf(file({ arch: 'qwen2' }, (m) => m.set('qwen2.rope.scaling.type', gv.str('longrope'))))).to.throw(InvalidInput, /qwen2\.rope\.scaling\.type: rope scaling "longrope"/);
    expect(() => configFromGguf(file({ arch: 'qwen3' }, (m) => { m.set('qwen3.rope.scaling.type', gv.str('yarn')); m.set('qwen3.rope.scaling.yarn_beta_fast', gv.f32(16)); }))).to.throw(InvalidInput, /qwen3\.rope\.scaling\.yarn_beta_fast: llama\.cpp does not read/);
    expect(() => configFromGguf(file({ arch: 'qwen3' }, (m) => { m.set('qwen3.rope.scaling.type', gv.str('yarn')); m.set('qwen3.rope.scaling.yarn_beta_fast', gv.f32(32)); }))).not.to.throw();
    expect(() => configFromGguf(file({ arch: 'llama' }, (m) => m.set('llama.rope.freq_base', gv.str('x'))))).to.throw(InvalidInput, /llama\.rope\.freq_base: is a string/);
    expect(() => configFromGguf(file({ arch: 'llama' }, (m) => m.delete('llama.embedding_length')))).to.throw(InvalidInput, /llama\.embedding_length: the llama GGUF does not declare it/);
  });

  it('a missing bias, or a layer tensor the graph would not read, is refused at the tensor', () => {
    const noBias = file({ arch: 'qwen2' }, undefined, (n) => n !== 'blk.0.attn_k.bias');
    expect(() => ggufWeights(noBias, '/m.gguf', configFromGguf(noBias))).to.throw(InvalidInput, /blk\.0\.attn_k\.bias: the qwen2 GGUF has no such tensor/);
    // A llama file is a qwen2 file without biases: read as llama, the biases would be dropped.
    const asLlama = file({ arch: 'qwen2' }, (m) => {
      for (const [k, v] of [...m]) if (k.startsWith('qwen2.')) { m.delete(k); m.set(`llama.${k.slice(6)}`, v); }
      m.set('general.architecture', gv.str('llama'));
    });
    expect(() => ggufWeights(asLlama, '/m.gguf', configFromGguf(asLlama))).to.throw(InvalidInput, /blk\.0\.attn_q\.bias: the llama graph does not read this tensor/);
  });
});

describe('model/arch: rope scaling read from a Hugging Face config.json', () => {
  const base = { hidden_size: 64, intermediate_size: 128, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, head_dim: 32, vocab_size: 320, max_position_embeddings: 131072 };
  it('YaRN in a llama and a qwen3 config.json gives the options its GGUF gives (original context, defaults, attention factor)', () => {
    for (const model_type of ['llama', 'qwen3']) {
      const c = configFromJson({ ...base, model_type, rope_scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 32768 } }, '/config.json');
      expect(c.options.ropeFreqScale).to.equal(0.25);
      expect(c.options.ropeYarn).to.deep.equal({ origContext: 32768, betaFast: 32, betaSlow: 1, extFactor: 1 });
      // transformers' default attention factor is ggml's own 1 + 0.1 ln(factor): nothing besides.
      expect(c.options.ropeAttnFactor).to.equal(1);
    }
    // The older `type`, a given attention factor (the whole mscale), betas, and the original context defaulting to max_position_embeddings.
    const c = configFromJson({ ...base, model_type: 'qwen2', rope_scaling: { type: 'yarn', factor: 4, attention_factor: 1.5, beta_fast: 16, beta_slow: 2 } }, '/config.json');
    expect(c.options.ropeYarn).to.deep.equal({ origContext: 131072, betaFast: 16, betaSlow: 2, extFactor: 1 });
    expect(c.options.ropeAttnFactor).to.be.closeTo(1.5 / (1 + 0.1 * Math.log(4)), 1e-12);
  });
  it('refuses what the graph does not do, naming the key', () => {
    expect(() => configFromJson({ ...base, model_type: 'llama', rope_scaling: { rope_type: 'yarn', factor: 4, mscale: 0.7 } }, '/c')).to.throw(InvalidInput, /\/c\/rope_scaling\/mscale/);
    expect(() => configFromJson({ ...base, model_type: 'qwen3', rope_scaling: { rope_type: 'dynamic', factor: 4 } }, '/c')).to.throw(InvalidInput, /\/c\/rope_scaling\/rope_type: rope scaling "dynamic"/);
    expect(() => configFromJson({ ...base, model_type: 'qwen3', rope_scaling: { rope_type: 'yarn' } }, '/c')).to.throw(InvalidInput, /\/c\/rope_scaling\/factor/);
  });
});

describe('model/arch: llama3 and LongRoPE rope_scaling', () => {
  const base = { hidden_size: 64, intermediate_size: 128, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, head_dim: 32, vocab_size: 320, max_position_embeddings: 131072, rope_theta: 500_000 };
  it('llama3 parameters are recovered from the factors llama.cpp\'s converter writes (Llama 3.1\'s), and give them back', () => {
    const f = llama3FreqFactors(128, 500_000, 8192);
    expect(llama3RopeFromFactors(f, 128, 500_000)).to.deep.equal({ factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalContext: 8192 });
    const c = configFromJson({ ...base, model_type: 'llama', rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 32 } }, '/c');
    const want = llama3FreqFactors(32, 500_000, 32);
    c.options.ropeFactorValues!.short.forEach((v, i) => expect(v).to.be.closeTo(want[i]!, 1e-6 * want[i]!));
    // Negative control: factors of no llama3 scaling (rising and falling) are not recovered.
    expect(llama3RopeFromFactors(Float32Array.from({ length: 64 }, (_, i) => 1 + (i % 3)), 128, 500_000)).to.equal(null);
  });
  it('longrope: both factor lists, the original context, transformers\' default attention factor; a list of the wrong length is refused', () => {
    const long = Array.from({ length: 16 }, (_, i) => 1 + i / 4);
    const short = Array.from({ length: 16 }, () => 1.1);
    const c = configFromJson({ ...base, model_type: 'phi3', original_max_position_embeddings: 4096, rope_scaling: { type: 'longrope', long_factor: long, short_factor: short } }, '/c');
    expect(c.options.longRopeContext).to.equal(4096);
    expect(c.options.ropeFactorValues).to.deep.equal({ long, short });
    expect(c.options.ropeAttnFactor).to.be.closeTo(Math.sqrt(1 + Math.log(32) / Math.log(4096)), 1e-12);
    expect(() => configFromJson({ ...base, model_type: 'phi3', original_max_position_embeddings: 4096, rope_scaling: { type: 'longrope', long_factor: long.slice(1), short_factor: short } }, '/c')).to.throw(InvalidInput, /\/c\/rope_scaling\/long_factor: 16 positive numbers/);
  });
});
