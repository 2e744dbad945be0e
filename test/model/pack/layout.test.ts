/** What `gguf pack` writes: the files, the tensor names and shapes, and config.json's values. */
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gv } from '../../../src/model/gguf/types.js';
import { readQ4nxHeader } from '../../../src/model/q4nx/container.js';
import { readGguf } from '../../../src/model/gguf/reader.js';
import { writeGguf, quantizedTensor } from '../../../src/model/gguf/writer.js';
import { tinyQwen3Gguf, tinyQwen3Metadata, tinyQwen3Tensors } from '../../../src/model/qwen3/tiny.js';
import { packGguf } from '../../../src/model/pack/pack.js';
import { writeGgufStream } from '../../../src/model/pack/ggufStream.js';
import { Workspace } from './helpers.js';

describe('gguf pack output', () => {
  let ws: Workspace;
  beforeEach(() => { ws = new Workspace(); });
  afterEach(() => ws.remove());

  it('writes model.q4nx with Hugging Face names and shapes, config.json and tokenizer.json', () => {
    const g = ws.tinyWith('m.gguf', { 'tokenizer.ggml.bos_token_id': gv.u32(5) }, 'Q8_0');
    const dir = ws.path('out');
    packGguf(g, dir, { tokenizer: ws.tokenizer });
    expect(readFileSync(join(dir, 'tokenizer.json'), 'utf8')).to.equal(readFileSync(join(ws.tokenizer, 'tokenizer.json'), 'utf8'));
    const h = readQ4nxHeader(join(dir, 'model.q4nx'));
    const shapes = Object.fromEntries(h.tensors.map((t) => [t.name, `${t.dtype}[${t.shape.join(',')}]`]));
    expect(shapes).to.deep.equal({
      'model.embed_tokens.weight': 'BF16[320,256]',
      'model.layers.0.input_layernorm.weight': 'BF16[256]',
      'model.layers.0.self_attn.q_proj.weight': 'I8[8,5120]',
      'model.layers.0.self_attn.k_proj.weight': 'I8[4,5120]',
      'model.layers.0.self_attn.v_proj.weight': 'I8[4,5120]',
      'model.layers.0.self_attn.o_proj.weight': 'I8[8,5120]',
      'model.layers.0.self_attn.q_norm.weight': 'BF16[64]',
      'model.layers.0.self_attn.k_norm.weight': 'BF16[64]',
      'model.layers.0.post_attention_layernorm.weight': 'BF16[256]',
      'model.layers.0.mlp.gate_proj.weight': 'I8[16,5120]',
      'model.layers.0.mlp.up_proj.weight': 'I8[16,5120]',
      'model.layers.0.mlp.down_proj.weight': 'I8[16,5120]',
      'model.norm.weight': 'BF16[256]',
      'lm_head.weight': 'I8[10,5120]',
    });
    expect(h.tensors.map((t) => t.name)[0]).to.equal('model.embed_tokens.weight');
    expect(h.metadata?.['q4nx.logical_shape.model.layers.0.mlp.down_proj.weight']).to.equal('256,512');
    expect(h.metadata?.['q4nx.logical_shape.lm_head.weight']).to.equal('320,256');
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    const { q4nx_source: source, ...rest } = config;
    expect(rest).to.deep.equal({
      architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', hidden_size: 256, intermediate_size: 512,
      num_hidden_layers: 1, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 64, vocab_size: 320,
      max_position_embeddings: 4096, rope_theta: 1000000, rms_norm_eps: 1e-6, hidden_act: 'silu', attention_bias: false,
      tie_word_embeddings: true, torch_dtype: 'bfloat16', bos_token_id: 5, eos_token_id: 319,
    });
    expect(source).to.deep.include({ gguf: 'm.gguf' });
    expect((source as { converter: string }).converter).to.match(/^npu-offload@\d+\.\d+\.\d+ pack\/1$/);
  });

  it('refuses a GGUF of an architecture it does not convert, a missing tokenizer.json and a non-empty output dir, writing nothing', () => {
    const llama = ws.tinyWith('llama.gguf', { 'general.architecture': gv.str('gpt2') });
    expect(() => packGguf(llama, ws.path('a'), { tokenizer: ws.tokenizer })).to.throw(/architecture "gpt2" cannot be packed: gguf pack converts qwen3, llama, qwen2, phi3, minicpm, gemma3 only/);
    const g = ws.tiny('q.gguf');
    expect(() => packGguf(g, ws.path('b'), { tokenizer: ws.dir })).to.throw(/no tokenizer\.json/);
    packGguf(g, ws.path('c'), { tokenizer: ws.tokenizer });
    expect(() => packGguf(g, ws.path('c'), { tokenizer: ws.tokenizer })).to.throw(/exists and is not empty/);
    packGguf(g, ws.path('c'), { tokenizer: join(ws.tokenizer, 'tokenizer.json'), force: true });
    expect(ws.list()).to.deep.equal(['c', 'llama.gguf', 'q.gguf', 'tokenizer']);
  });

  it('refuses a tensor whose dims disagree with the metadata', () => {
    const metadata = tinyQwen3Metadata({ layers: 1 });
    metadata.set('qwen3.feed_forward_length', gv.u32(256));
    const tensors = tinyQwen3Tensors({ layers: 1 }).map((t) => quantizedTensor(t.name, t.type, t.dims, t.values));
    const p = ws.path('bad.gguf');
    writeFileSync(p, writeGguf({ metadata, tensors }));
    expect(() => packGguf(p, ws.path('x'), { tokenizer: ws.tokenizer })).to.throw(/blk\.0\.ffn_gate\.weight.*do not match the metadata/);
    expect(ws.list()).to.not.include('x');
  });

  it('writeGgufStream writes the bytes writeGguf writes', () => {
    const opts = { layers: 1, type: 'Q4_K' as const };
    const tensors = tinyQwen3Tensors(opts);
    const p = ws.path('s.gguf');
    writeGgufStream(p, tinyQwen3Metadata(opts), tensors.map((t) => ({
      name: t.name, dims: t.dims, type: t.type,
      // In two pieces, to exercise the streaming.
      fill: (emit) => { const half = t.values.length / 2; emit(t.values.subarray(0, half)); emit(t.values.subarray(half)); },
    })));
    const want = tinyQwen3Gguf(opts);
    expect(Buffer.compare(readFileSync(p), Buffer.from(want))).to.equal(0);
    expect(readGguf(readFileSync(p)).tensors).to.have.length(13);
  });
});

