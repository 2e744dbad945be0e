/**
 * `gguf pack` of each dense architecture besides qwen3: a tiny random Q4_0 GGUF packed to a model
 * directory runs from it with the GGUF's own logits (cosine as q4nx.test.ts measures qwen3's: the
 * q4_1 codes are the GGUF's, only scales, zeros, norms and the embedding are rounded to bf16), and
 * a config.json with a setting wrong (rope base, MiniCPM's scale, Gemma's window) disagrees.
 */
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidInput } from '../../../src/errors/index.js';
import { openGguf } from '../../../src/model/gguf/reader.js';
import { packCached } from '../../../src/model/pack/cache.js';
import { packGguf } from '../../../src/model/pack/pack.js';
import { logicalShapeFromMetadata, quantLayout } from '../../../src/model/q4nx/chunks.js';
import { readQ4nx, tensorData, tensorInfo } from '../../../src/model/q4nx/container.js';
import { decodeTensor } from '../../../src/model/q4nx/decode.js';
import { verifyPack } from '../../../src/model/pack/verify.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import type { TinyQwen3Options } from '../../../src/model/qwen3/tiny.js';
import { cosine, modelFixture } from '../qwen3/helpers.js';

type Json = Record<string, unknown>;

/** Each architecture, its tiny model's options, the config.json keys its family carries, and a wrong setting. */
const CASES: readonly { arch: string; opts: TinyQwen3Options; keys: Json; wrong: (c: Json) => Json }[] = [
  { arch: 'llama', opts: { ropeScaleLinear: 2, tiedEmbeddings: false }, keys: { model_type: 'llama', rope_scaling: { rope_type: 'linear', type: 'linear', factor: 2 }, tie_word_embeddings: false }, wrong: (c) => ({ ...c, rope_scaling: null }) },
  { arch: 'qwen2', opts: {}, keys: { model_type: 'qwen2', use_sliding_window: false }, wrong: (c) => ({ ...c, rope_theta: 10_000 }) },
  { arch: 'phi3', opts: { ropeDims: 48 }, keys: { model_type: 'phi3', partial_rotary_factor: 0.75 }, wrong: (c) => ({ ...c, partial_rotary_factor: 1 }) },
  { arch: 'minicpm', opts: {}, keys: { model_type: 'minicpm', scale_emb: 12 }, wrong: (c) => ({ ...c, scale_emb: 1 }) },
  { arch: 'gemma3', opts: { slidingWindow: 3 }, keys: { model_type: 'gemma3_text', sliding_window: 3, sliding_window_pattern: 2, hidden_activation: 'gelu_pytorch_tanh', q4nx_norm_weights: '1+w' }, wrong: (c) => ({ ...c, sliding_window: null }) },
];

describe('gguf pack: llama, qwen2, phi3, minicpm and gemma3 run from their model directories', function () {
  this.timeout(300_000);
  const fx = modelFixture();
  const request = { promptIds: [104, 101, 108, 108, 111, 32, 119, 111, 114, 108], maxTokens: 4, logits: true, repetitionPenalty: 1, ignoreEos: true };
  // Each model on its own engine, closed after: one engine holding every model runs out of hardware contexts.
  const logitsOf = async (path: string) => {
    const m = await loadModel(path, { ctx: 32, target: 'cpu' });
    try { return (await m.complete(request)).logits!.map((l) => l.data); } finally { await m.close(); }
  };
  const configOf = async (path: string) => {
    const m = await loadModel(path, { ctx: 32, target: 'cpu' });
    try { return { kind: m.source.kind, config: m.config }; } finally { await m.close(); }
  };
  const worst = (a: ArrayLike<number>[], b: ArrayLike<number>[]) => Math.min(...a.map((l, k) => cosine(l, b[k]!)));

  for (const { arch, opts, keys, wrong } of CASES) {
    it(`${arch}: the packed directory gives the GGUF's logits, and a wrong config.json does not`, async () => {
      const gguf = fx.gguf(`${arch}.gguf`, { arch, type: 'Q4_0', layers: 2, std: 0.05, seed: 3, ...opts });
      const dir = join(fx.dir(), arch);
      const packed = packGguf(gguf, dir);
      // The tiny Phi-3 declares rope.scaling.original_context_length with no scaling: the guard's warning, not an error.
      expect(packed.warnings.filter((w) => !w.startsWith('phi3.rope.scaling.original_context_length'))).to.deep.equal([]);
      const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Json;
      expect(config).to.deep.include(keys);
      const v = verifyPack(gguf, dir);
      expect(v.problems).to.deep.equal([]);
      expect(v.tensors.filter((t) => !t.pass).map((t) => t.name)).to.deep.equal([]);
      expect(v.ok).to.equal(true);
      const fromDir = await configOf(dir);
      expect(fromDir.kind).to.equal('q4nx');
      expect(fromDir.config.arch).to.equal(arch);
      const a = await logitsOf(gguf);
      const b = await logitsOf(dir);
      const good = worst(a, b);
      console.log(`      ${arch}: worst cosine of ${a.length} steps ${good.toFixed(6)}`);
      expect(good).to.be.at.least(0.999);

      writeFileSync(join(dir, 'config.json'), JSON.stringify(wrong(config)));
      const bad = worst(a, await logitsOf(dir));
      console.log(`      ${arch}: with the wrong config ${bad.toFixed(6)}`);
      expect(bad).to.be.below(0.99);
    });
  }

  it('llama: q and k rows are stored in HF order (un-permuted from llama.cpp\'s), v rows as they are', async () => {
    const gguf = fx.gguf('llama-perm.gguf', { arch: 'llama', type: 'Q4_0', layers: 1, std: 0.05, seed: 3 });
    const dir = join(fx.dir(), 'llama-perm');
    packGguf(gguf, dir);
    const q = readQ4nx(join(dir, 'model.q4nx'));
    const packed = (name: string) => decodeTensor(tensorData(q, name), quantLayout(tensorInfo(q.header, name), logicalShapeFromMetadata(q.header.metadata, name)));
    const f = openGguf(gguf);
    try {
      const hidden = 256;
      const headDim = 64;
      const reorder = (x: Float32Array, rowOf: (r: number) => number) => {
        const out = new Float32Array(x.length);
        for (let r = 0; r < x.length / hidden; r++) out.set(x.subarray(rowOf(r) * hidden, (rowOf(r) + 1) * hidden), r * hidden);
        return out;
      };
      const half = headDim / 2;
      const unpermute = (r: number) => Math.floor(r / headDim) * headDim + 2 * ((r % headDim) % half) + ((r % headDim) >= half ? 1 : 0);
      for (const [g, h] of [['attn_q', 'q_proj'], ['attn_k', 'k_proj']]) {
        const src = f.tensorFloats(`blk.0.${g}.weight`);
        const got = packed(`model.layers.0.self_attn.${h}.weight`);
        expect(cosine(got, reorder(src, unpermute)), g).to.be.above(0.9999);
        // The negative control: the rows in GGUF order are not what the directory holds.
        expect(Math.abs(cosine(got, src)), g).to.be.below(0.2);
      }
      expect(cosine(packed('model.layers.0.self_attn.v_proj.weight'), f.tensorFloats('blk.0.attn_v.weight'))).to.be.above(0.9999);
    } finally { f.close(); }
    expect((await configOf(dir)).config.options.rope).to.equal('neox');
    expect((await configOf(gguf)).config.options.rope).to.equal('normal');
  });

  it('the repack cache packs a llama and a gemma3 GGUF once, then hits (its stamp and guard pass on the derived config)', () => {
    for (const arch of ['llama', 'gemma3']) {
      const gguf = fx.gguf(`cache-${arch}.gguf`, { arch, type: 'Q4_0', layers: 1 });
      const first = packCached(gguf, { cacheRoot: join(fx.dir(), 'q4nx-cache') });
      const again = packCached(gguf, { cacheRoot: join(fx.dir(), 'q4nx-cache') });
      expect([first.hit, again.hit], arch).to.deep.equal([false, true]);
      expect(again.dir).to.equal(first.dir);
    }
  });

  it('refuses to pack what it does not carry yet, naming it (llama3 rope_freqs, LongRoPE factors)', () => {
    for (const [name, opts, what] of [['freqs', { arch: 'llama', ropeFreqs: true }, 'rope_freqs'], ['long', { arch: 'phi3', longRope: 1 }, 'LongRoPE']] as const) {
      const gguf = fx.gguf(`${name}.gguf`, { ...opts, type: 'Q4_0', layers: 1 });
      let err: unknown;
      try { packGguf(gguf, join(fx.dir(), name)); } catch (e) { err = e; }
      expect(err, name).to.be.instanceOf(InvalidInput);
      expect((err as Error).message, name).to.contain(what);
    }
  });

  it('a Gemma 3 config.json without the 1+w norm marker (a published checkpoint) is refused, naming the key', async () => {
    const gguf = fx.gguf('g.gguf', { arch: 'gemma3', type: 'Q4_0', layers: 1 });
    const dir = join(fx.dir(), 'g');
    packGguf(gguf, dir);
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Json;
    delete config['q4nx_norm_weights'];
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    let err: unknown;
    try { await loadModel(dir, { engine: fx.engine() }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(InvalidInput);
    expect((err as InvalidInput).message).to.contain('q4nx_norm_weights');
  });
});
