/**
 * `gguf pack` of each dense architecture besides qwen3: a tiny random Q4_0 GGUF packed to a model
 * directory runs from it with the GGUF's own logits (cosine as q4nx.test.ts measures qwen3's: the
 * q4_1 codes are the GGUF's, only scales, zeros, norms and the embedding are rounded to bf16), and
 * a config.json with a setting wrong (rope base, MiniCPM's scale, Gemma's window) disagrees.
 * Both run on the host target, on one engine (the property is the packing's, not a target's: cpu against host
 * is checked by the model tests). PACK_DEBUG=1 prints the figures (not by default: stdout is the reporter's, which --reporter json reads).
 */
import { expect } from 'chai';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidInput } from '../../../src/errors/index.js';
import { openGguf } from '../../../src/model/gguf/reader.js';
import { packCached } from '../../../src/model/pack/cache.js';
import { packGguf } from '../../../src/model/pack/pack.js';
import { logicalShapeFromMetadata, quantLayout } from '../../../src/model/q4nx/chunks.js';
import { readQ4nx, readQ4nxHeader, tensorData, tensorInfo } from '../../../src/model/q4nx/container.js';
import { decodeTensor } from '../../../src/model/q4nx/decode.js';
import { verifyPack } from '../../../src/model/pack/verify.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { openModelSource } from '../../../src/model/qwen3/source.js';
import { tinyQwen3Metadata, tinyQwen3Tensors, type TinyQwen3Options } from '../../../src/model/qwen3/tiny.js';
import { quantize } from '../../../src/model/gguf/quantize.js';
import { gv, type GgufValue } from '../../../src/model/gguf/types.js';
import { writeGguf } from '../../../src/model/gguf/writer.js';
import { cosine, modelFixture } from '../qwen3/helpers.js';

type Json = Record<string, unknown>;

/** Each architecture, its tiny model's options, the config.json keys its family carries, and a wrong setting. */
const CASES: readonly { arch: string; name?: string; opts: TinyQwen3Options; keys: Json; wrong: (c: Json) => Json }[] = [
  { arch: 'llama', opts: { ropeScaleLinear: 2, tiedEmbeddings: false }, keys: { model_type: 'llama', rope_scaling: { rope_type: 'linear', type: 'linear', factor: 2 }, tie_word_embeddings: false }, wrong: (c) => ({ ...c, rope_scaling: null }) },
  { arch: 'qwen2', opts: {}, keys: { model_type: 'qwen2', use_sliding_window: false }, wrong: (c) => ({ ...c, rope_theta: 10_000 }) },
  { arch: 'phi3', opts: { ropeDims: 48 }, keys: { model_type: 'phi3', partial_rotary_factor: 0.75 }, wrong: (c) => ({ ...c, partial_rotary_factor: 1 }) },
  { arch: 'minicpm', opts: {}, keys: { model_type: 'minicpm', scale_emb: 12 }, wrong: (c) => ({ ...c, scale_emb: 1 }) },
  // llama3 rope frequency factors (rope_freqs.weight) carried as HF's llama3 rope_scaling, recovered from the factors.
  {
    arch: 'llama', name: 'llama-freqs', opts: { ropeFreqs: true, ropeFreqsContext: 32, ropeTheta: 500_000, tiedEmbeddings: false },
    keys: { rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 32 } }, wrong: (c) => ({ ...c, rope_scaling: null }),
  },
  // LongRoPE (rope_factors_long/short, attn factor 1.19) as HF's longrope rope_scaling; the long factors apply (context 32 past 16).
  {
    arch: 'phi3', name: 'phi3-long', opts: { ropeDims: 48, longRope: 16 }, keys: { original_max_position_embeddings: 16 },
    wrong: (c) => ({ ...c, rope_scaling: { ...(c['rope_scaling'] as Json), long_factor: (c['rope_scaling'] as Json)['short_factor'] } }),
  },
  // YaRN, by a factor of 4 over an original context of 8; the wrong config scales linearly (no ramp, no attention factor).
  {
    arch: 'llama', name: 'llama-yarn', opts: { yarn: 4, yarnContext: 8, contextLength: 32 },
    keys: { rope_scaling: { rope_type: 'yarn', type: 'yarn', factor: 4, original_max_position_embeddings: 8 } }, wrong: (c) => ({ ...c, rope_scaling: { rope_type: 'linear', factor: 4 } }),
  },
  // Qwen3's own config.json (pack/config.ts) has carried rope_scaling; its directory now reads it back.
  {
    arch: 'qwen3', name: 'qwen3-yarn', opts: { yarn: 4, yarnContext: 8, contextLength: 32 },
    keys: { rope_scaling: { rope_type: 'yarn', type: 'yarn', factor: 4, original_max_position_embeddings: 8 } }, wrong: (c) => ({ ...c, rope_scaling: null }),
  },
  { arch: 'gemma3', opts: { slidingWindow: 3 }, keys: { model_type: 'gemma3_text', sliding_window: 3, sliding_window_pattern: 2, hidden_activation: 'gelu_pytorch_tanh', q4nx_norm_weights: '1+w' }, wrong: (c) => ({ ...c, sliding_window: null }) },
];

describe('gguf pack: llama, qwen2, phi3, minicpm and gemma3 run from their model directories', function () {
  this.timeout(300_000);
  const fx = modelFixture();
  const request = { promptIds: [104, 101, 108, 108, 111, 32, 119, 111, 114, 108], maxTokens: 4, logits: true, repetitionPenalty: 1, ignoreEos: true };
  // One engine for the file, each model closed after use (which frees its contexts).
  const logitsOf = async (path: string) => {
    const m = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'host' });
    try { return (await m.complete(request)).logits!.map((l) => l.data); } finally { await m.close(); }
  };
  // What a model loads from (its kind and config), read without starting one.
  const configOf = async (path: string) => {
    const s = openModelSource(path);
    return { kind: s.kind, config: s.config };
  };
  const worst = (a: ArrayLike<number>[], b: ArrayLike<number>[]) => Math.min(...a.map((l, k) => cosine(l, b[k]!)));

  for (const { arch, name = arch, opts, keys, wrong } of CASES) {
    it(`${name}: the packed directory gives the GGUF's logits, and a wrong config.json does not`, async () => {
      const gguf = fx.gguf(`${name}.gguf`, { arch, type: 'Q4_0', layers: 2, std: 0.05, seed: 3, ...opts });
      const dir = join(fx.dir(), name);
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
      if (process.env['PACK_DEBUG']) console.log(`      ${name}: worst cosine of ${a.length} steps ${good.toFixed(6)}`);
      expect(good).to.be.at.least(0.999);

      writeFileSync(join(dir, 'config.json'), JSON.stringify(wrong(config)));
      const bad = worst(a, await logitsOf(dir));
      if (process.env['PACK_DEBUG']) console.log(`      ${name}: with the wrong config ${bad.toFixed(6)}`);
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

  /** A tiny GGUF of `o` (F32 unless it says) with its metadata and tensor values edited. */
  const write = (name: string, o: TinyQwen3Options, edit: (m: Map<string, GgufValue>, t: { name: string; values: Float32Array }[]) => void): string => {
    const opts: TinyQwen3Options = { layers: 1, type: 'F32', ...o };
    const m = tinyQwen3Metadata(opts);
    const tensors = tinyQwen3Tensors(opts);
    edit(m, tensors);
    const path = join(fx.dir(), name);
    writeFileSync(path, writeGguf({ version: 3, metadata: m, tensors: tensors.map((t) => ({ name: t.name, dims: t.dims, type: t.type, data: quantize(t.type, t.values) })) }));
    return path;
  };

  it('qwen3 with YaRN and an attention factor: config.json carries it as attention_factor, and the directory gives the GGUF\'s logits (without it, not)', async () => {
    const gguf = write('qwen3-yarn-attn.gguf', { arch: 'qwen3', type: 'Q4_0', layers: 2, std: 0.05, seed: 3, yarn: 4, yarnContext: 8, contextLength: 32 }, (m) => m.set('qwen3.rope.scaling.attn_factor', gv.f32(1.3)));
    const dir = join(fx.dir(), 'qwen3-yarn-attn');
    packGguf(gguf, dir);
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Json;
    const rs = config['rope_scaling'] as Json;
    expect(rs['attention_factor']).to.be.closeTo(Math.fround(1.3) * (1 + 0.1 * Math.log(4)), 1e-9);
    const a = await logitsOf(gguf);
    const good = worst(a, await logitsOf(dir));
    if (process.env['PACK_DEBUG']) console.log(`      qwen3 YaRN + attn_factor: worst cosine ${good.toFixed(6)}`);
    expect(good).to.be.at.least(0.999);
    delete rs['attention_factor'];
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    const bad = worst(a, await logitsOf(dir));
    if (process.env['PACK_DEBUG']) console.log(`      qwen3 YaRN without its attention_factor: worst cosine ${bad.toFixed(6)}`);
    expect(bad).to.be.below(0.99);
  });

  it('refuses rope factors config.json cannot say, naming the tensor or key (rope_freqs that are no llama3 scaling, an attention factor alone)', () => {
    // Factors rising and falling: no llama3 parameters give them.
    const zigzag = write('zigzag.gguf', { arch: 'llama', ropeFreqs: true }, (_m, t) => { t.find((x) => x.name === 'rope_freqs.weight')!.values.forEach((_v, i, a) => { a[i] = 1 + (i % 3); }); });
    const attn = write('attn.gguf', { arch: 'llama' }, (m) => m.set('llama.rope.scaling.attn_factor', gv.f32(1.2)));
    const qwen3Attn = write('attn-qwen3.gguf', { arch: 'qwen3' }, (m) => m.set('qwen3.rope.scaling.attn_factor', gv.f32(1.2)));
    for (const [path, what] of [[zigzag, 'rope_freqs.weight'], [attn, 'attn_factor'], [qwen3Attn, 'qwen3.rope.scaling.attn_factor']] as const) {
      let err: unknown;
      try { packGguf(path, join(fx.dir(), `${what}-out`)); } catch (e) { err = e; }
      expect(err, what).to.be.instanceOf(InvalidInput);
      expect((err as Error).message, what).to.contain(what);
    }
  });

  it('a Gemma 3 directory in Hugging Face\'s layout (norms stored as w, no q4nx_norm_weights) gives the packed directory\'s logits; the same norms read as 1 + w do not', async () => {
    const gguf = fx.gguf('g.gguf', { arch: 'gemma3', type: 'Q4_0', layers: 2, std: 0.05, seed: 3, slidingWindow: 3 });
    const packed = join(fx.dir(), 'g');
    packGguf(gguf, packed);
    const want = await logitsOf(packed);
    // The HF layout: every norm weight (1 + w in the packed directory, bf16) rewritten as w, in place (exact in bf16).
    const hf = join(fx.dir(), 'g-hf');
    mkdirSync(hf);
    const bytes = readFileSync(join(packed, 'model.q4nx'));
    const header = readQ4nxHeader(join(packed, 'model.q4nx'));
    let norms = 0;
    for (const t of header.tensors) {
      if (!/norm\.weight$/.test(t.name)) continue;
      expect(t.dtype, t.name).to.equal('BF16');
      const v = new DataView(bytes.buffer, bytes.byteOffset + header.dataStart + t.begin, t.end - t.begin);
      const f = new Float32Array(1);
      const u = new Uint32Array(f.buffer);
      for (let i = 0; i < v.byteLength; i += 2) {
        u[0] = v.getUint16(i, true) << 16;
        f[0] = f[0]! - 1;
        expect(u[0] & 0xffff, `${t.name}[${i / 2}] - 1 is exact in bf16`).to.equal(0);
        v.setUint16(i, u[0] >>> 16, true);
      }
      norms++;
    }
    expect(norms).to.equal(2 * 6 + 1);
    writeFileSync(join(hf, 'model.q4nx'), bytes);
    const config = JSON.parse(readFileSync(join(packed, 'config.json'), 'utf8')) as Json;
    delete config['q4nx_norm_weights'];
    writeFileSync(join(hf, 'config.json'), JSON.stringify(config));
    expect((await configOf(hf)).config.normWeightsPlusOne).to.equal(true);
    const got = worst(want, await logitsOf(hf));
    if (process.env['PACK_DEBUG']) console.log(`      gemma3 HF layout: worst cosine ${got.toFixed(7)}`);
    expect(got).to.be.at.least(0.99999);
    // The explicit marker says the same.
    writeFileSync(join(hf, 'config.json'), JSON.stringify({ ...config, q4nx_norm_weights: 'w' }));
    expect(worst(want, await logitsOf(hf))).to.be.at.least(0.99999);
    // Negative control: the same w read as 1 + w (the marker gguf pack writes).
    writeFileSync(join(hf, 'config.json'), JSON.stringify({ ...config, q4nx_norm_weights: '1+w' }));
    const bad = worst(want, await logitsOf(hf));
    if (process.env['PACK_DEBUG']) console.log(`      gemma3 HF layout read as 1 + w: worst cosine ${bad.toFixed(4)}`);
    expect(bad).to.be.below(0.99);
    // Another marker is refused, naming the key.
    writeFileSync(join(hf, 'config.json'), JSON.stringify({ ...config, q4nx_norm_weights: 'w+1' }));
    let err: unknown;
    try { await loadModel(hf, { engine: fx.engine() }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(InvalidInput);
    expect((err as InvalidInput).message).to.contain('q4nx_norm_weights');
  });
});
