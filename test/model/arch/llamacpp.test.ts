/**
 * Each architecture besides qwen3 (src/model/arch), as tiny random GGUFs written with llama.cpp's
 * tensor names and keys, run by llama.cpp (node-llama-cpp 3.21.1) and by the host target in its
 * default class (q8 activations for q8_0 and q4_0 weights), teacher-forced over the same ids: every
 * position's centered logits (llama.cpp gives probabilities; their logs, centered, are its logits) at
 * cosine >= 0.999 in f32 and f16 (0.99 quantized), their scale within 1% (5% quantized), and the same
 * argmax wherever llama.cpp's top-two margin is clear. Each architecture's negative control runs the
 * same file with one graph option flipped (the rope type, the q/k/v biases or a declared scale dropped)
 * and must fail the comparison. ARCH_DEBUG=1 prints the figures.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import type { GraphOptions } from '../../../src/model/arch/types.js';
import type { QuantType } from '../../../src/model/gguf/ggmlTypes.js';
import { zeroCache } from '../../../src/model/qwen3/generate.js';
import { Qwen3Model } from '../../../src/model/qwen3/model.js';
import { openModelSource } from '../../../src/model/qwen3/source.js';
import type { TinyQwen3Options } from '../../../src/model/qwen3/tiny.js';
import { tinyGgufBytes } from '../qwen3/helpers.js';
import { loadLlamaCpp, type Llama, centered } from '../../llamaCpp.js';
import { figures, llamaCppLogits, type Figures, type TheirLogits } from './compare.js';


/** The ids fed, each position's next-token logits compared. */
const IDS = [104, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100, 33];

/** Each architecture's tiny file, and the flip its negative control makes. */
const CASES: readonly { arch: string; name?: string; file: TinyQwen3Options; types?: readonly QuantType[]; controls: readonly { what: string; flip: Partial<GraphOptions> }[] }[] = [
  // Separate output, llama3 rope frequency factors (against an original context of 32, so that they
  // reach the frequencies 12 positions turn by much), Llama 3's rope base.
  {
    arch: 'llama', file: { tiedEmbeddings: false, ropeFreqs: true, ropeFreqsContext: 32, ropeTheta: 500_000 },
    controls: [{ what: 'neox rope for normal', flip: { rope: 'neox' } }, { what: 'the rope_freqs factors dropped', flip: { ropeFreqs: false } }],
  },
  // Linear rope scaling (llama.rope.scaling.type = linear, factor 4).
  { arch: 'llama', name: 'llama-linear', file: { ropeScaleLinear: 4 }, controls: [{ what: 'the linear rope scaling dropped', flip: { ropeFreqScale: 1 } }] },
  { arch: 'qwen2', file: {}, controls: [{ what: 'the q/k/v biases dropped', flip: { qkvBias: false } }] },
  // Partial rotary, as Phi-4-mini's: rope on half of each head; LongRoPE factors and attention factor,
  // the short factors at these contexts (the original context is 4096).
  {
    arch: 'phi3', file: { ropeDims: 32, longRope: 4096 },
    controls: [{ what: 'normal rope for neox', flip: { rope: 'normal' } }, { what: 'the LongRoPE attention factor dropped', flip: { ropeAttnFactor: 1 } }],
  },
  // The long factors: an original context of 16, which both contexts here (32 ours, 64 llama.cpp's) pass.
  {
    arch: 'phi3', name: 'phi3-long', file: { ropeDims: 32, longRope: 16 }, types: ['F32', 'Q4_0'],
    controls: [{ what: 'the short factors for the long', flip: { longRopeContext: 1_000_000 } }],
  },
  // The three declared scales; the logit scale alone leaves the cosine be, so the scale check must catch it.
  {
    arch: 'minicpm', file: { tiedEmbeddings: false },
    controls: [
      { what: 'the embedding and residual scales dropped', flip: { embeddingScale: 1, residualScale: 1 } },
      { what: 'the logit scale dropped', flip: { logitScale: 1 } },
    ],
  },
  // Qwen3 itself, in the types its own llama.cpp test (test/model/qwen3/llamacpp.test.ts) does not take, and
  // the negative controls of its thresholds: a rope bug, a norm dropped, a mask bug (layer 0 sees only
  // the last 2 positions; the rope base unchanged, so the mask alone differs).
  {
    arch: 'qwen3', file: {}, types: ['F32', 'Q4_0'],
    controls: [
      { what: 'normal rope for neox', flip: { rope: 'normal' } },
      { what: 'the q/k norms dropped', flip: { qkNorm: false } },
      { what: 'a causal mask of 2 positions in layer 0', flip: { slidingWindow: { window: 2, period: 2, ropeBase: 1_000_000 } } },
    ],
  },
  // Qwen3-MoE: 4 experts of width 128, 2 used per token; the router F32, as llama.cpp keeps it.
  {
    arch: 'qwen3moe', file: { routerStd: 0.05 },
    controls: [
      { what: 'the top-k weights unnormalised', flip: { moe: { experts: 4, used: 2, ff: 128, normalize: false } } },
      { what: 'top-1 for top-2', flip: { moe: { experts: 4, used: 1, ff: 128, normalize: true } } },
    ],
  },
  // A sliding window of 6 over the 12 positions, layer 0 local and layer 1 global (tiny.ts).
  {
    arch: 'gemma3', file: {},
    controls: [
      { what: 'the sliding window dropped (one rope base, no window)', flip: { slidingWindow: undefined } },
      { what: 'the window\'s mask dropped (local rope base kept)', flip: { slidingWindow: { window: 1000, period: 2, ropeBase: 10_000 } } },
      { what: 'SwiGLU for GeGLU', flip: { activation: 'silu' } },
    ],
  },
];

const TYPES = ['F32', 'F16', 'Q8_0', 'Q4_0'] as const satisfies readonly QuantType[];



describe('architectures against llama.cpp (node-llama-cpp 3.21.1)', function () {
  this.timeout(300_000);
  let dir = '';
  let engine: Engine | undefined;
  let llama: Llama | undefined;
  // llama.cpp's centered logits per file, shared by a case and its negative control.
  const theirs = new Map<string, TheirLogits>();

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'arch-'));
    llama = await loadLlamaCpp(this);
  });
  after(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const file = (name: string, arch: string, type: QuantType, o: TinyQwen3Options): string => {
    const path = join(dir, `${name}-${type}.gguf`);
    writeFileSync(path, tinyGgufBytes({ arch, type, layers: 2, std: 0.05, seed: 3, ...o }));
    return path;
  };

  async function llamaCpp(path: string, vocab: number): Promise<TheirLogits> {
    const hit = theirs.get(path);
    if (hit !== undefined) return hit;
    const r = await llamaCppLogits(llama!, path, IDS, vocab, 64);
    theirs.set(path, r);
    return r;
  }

  /** Our all-logits step over IDS on host, with `flip` over the file's graph options. */
  async function ours(path: string, flip: Partial<GraphOptions> = {}): Promise<{ logits: number[][]; vocab: number }> {
    const source = openModelSource(path);
    const options = { ...source.config.options, ...flip };
    // A graph without biases (or rope_freqs) takes none as args.
    const weights = new Map([...source.weights].filter(([n]) => (options.qkvBias || !n.endsWith('.bias')) && (options.ropeFreqs || n !== 'rope_freqs')));
    engine ??= createEngine({ cacheDir: join(dir, 'cache'), devices: { host: { matmul: 'q8' } } });
    const model = Qwen3Model.create({ ...source, weights, config: { ...source.config, options } }, { engine, target: 'host', ctx: 32 });
    try {
      const r = await model.runner.step(model.program(IDS.length, true), { ids: IDS, positions: IDS.map((_, i) => i), state: zeroCache(model.config, 32) });
      const v = model.config.vocab;
      return { vocab: v, logits: IDS.map((_, k) => centered(r.logits.data.slice(k * v, (k + 1) * v))) };
    } finally {
      await model.close();
    }
  }

  async function compare(path: string, flip: Partial<GraphOptions> = {}): Promise<Figures> {
    const mine = await ours(path, flip);
    const ref = await llamaCpp(path, mine.vocab);
    const f = figures(mine.logits, ref);
    if (process.env['ARCH_DEBUG']) console.log(path, JSON.stringify(flip), f);
    return f;
  }

  for (const c of CASES) {
    for (const type of c.types ?? TYPES) {
      const quantized = type === 'Q8_0' || type === 'Q4_0';
      it(`${c.name ?? c.arch} ${type}: every position's logits at cosine >= ${quantized ? 0.99 : 0.999}, scale within ${quantized ? 5 : 1}%, llama.cpp's clear argmax`, async () => {
        const f = await compare(file(c.name ?? c.arch, c.arch, type, c.file));
        expect(f.minCos, 'least cosine').to.be.at.least(quantized ? 0.99 : 0.999);
        expect(Math.abs(f.worstScale - 1), `scale ${f.worstScale}`).to.be.at.most(quantized ? 0.05 : 0.01);
        expect(f.decisive, 'positions with a clear margin').to.be.at.least(3);
        expect(f.argmaxMisses, 'argmax where llama.cpp is clear').to.equal(0);
      });
    }
    for (const control of c.controls) {
      it(`${c.name ?? c.arch} negative control: ${control.what} fails the same comparison`, async () => {
        const f = await compare(join(dir, `${c.name ?? c.arch}-F32.gguf`), control.flip);
        // Failing is what the positive cases assert, negated: a cosine or a scale out of bounds (by the quantized bounds, even).
        expect(f.minCos < 0.99 || Math.abs(f.worstScale - 1) > 0.05, `cosine ${f.minCos}, scale ${f.worstScale}`).to.equal(true);
      });
    }
  }
});
