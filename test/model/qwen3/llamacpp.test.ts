/**
 * The same tiny GGUFs run by llama.cpp (node-llama-cpp 3.21.1, whose package ships its binaries) and by
 * the host target as models run there by default (the q8-activations matmul class; the cpu target is checked against the fp64 reference in programs.test.ts). llama.cpp gives probabilities, so its logits are their logs, compared after taking
 * each vector's mean off (a softmax does not see a shift). Greedy tokens must agree wherever
 * llama.cpp's top-two margin exceeds QUANT_MARGIN: llama.cpp rounds activations to 8 bits before a
 * quantized matmul and keeps its KV cache in f16, which moves its logits by up to 0.09 on these models
 * (0.002 with F16 weights), so a margin over twice that cannot flip. QWEN_DEBUG=1 prints the figures.
 */
import { expect } from 'chai';
import type { QuantType } from '../../../src/model/gguf/ggmlTypes.js';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { q8Matmuls } from '../../../src/model/qwen3/gate.js';
import { cosine, modelFixture, SMALL } from './helpers.js';
import { loadLlamaCpp, type Llama, centered } from '../../llamaCpp.js';

/** The least top-two margin (in logits) at which llama.cpp's token must be ours. */
const QUANT_MARGIN = 0.2;



describe('qwen3 against llama.cpp (node-llama-cpp 3.21.1)', function () {
  this.timeout(180_000);
  const fx = modelFixture();
  // The models' default class on host (loadModel without an engine takes it too).
  let q8: Engine | undefined;
  after(async () => { await q8?.close(); });
  let llama: Llama | undefined;

  before(async function () {
    llama = await loadLlamaCpp(this);
  });

  for (const type of ['Q4_0', 'Q4_1', 'Q8_0', 'Q4_K', 'Q6_K', 'F16'] as const satisfies readonly QuantType[]) {
    it(`${type}: logits at cosine >= 0.999 and the same greedy tokens where llama.cpp's margin is clear`, async () => {
      const path = fx.gguf(`${type}.gguf`, { ...SMALL, type });
      q8 ??= createEngine({ cacheDir: join(fx.dir(), 'q8'), devices: { host: { matmul: 'q8' } } });
      const model = await loadModel(path, { engine: q8, ctx: 32, target: 'host' });
      // The engine's class: q4_0, q4_1 and q8_0 weights run in it, the others keep the exact kernel (HOST_Q8_WEIGHTS).
      expect(q8Matmuls(model), 'the q8 class').to.equal(true);
      const prompt = [104, 101, 108, 108, 111, 32, 119];
      const ours = await model.complete({ promptIds: prompt, maxTokens: 12, logits: true, repetitionPenalty: 1, ignoreEos: true });
      await model.close();

      const m = await llama!.loadModel({ modelPath: path });
      const ctx = await m.createContext({ contextSize: 64, threads: 2 });
      // Teacher-forced with our tokens: llama.cpp's distribution after the prompt and after each of them.
      const feed = [...prompt, ...ours.ids.slice(0, -1)];
      const out = await ctx.getSequence().controlledEvaluate(feed.map((t, i) => (i >= prompt.length - 1 ? [t, { generateNext: { probabilities: true } }] : t)));
      await ctx.dispose();
      await m.dispose();
      let decisive = 0;
      ours.ids.forEach((id, k) => {
        const probs = out[prompt.length - 1 + k]!.next.probabilities!;
        const logp = Float64Array.from({ length: model.config.vocab }, (_, i) => Math.log(probs.get(i) ?? 0));
        const cos = cosine(centered(logp), centered(ours.logits![k]!.data));
        expect(cos, `step ${k}`).to.be.at.least(0.999);
        // The map is sorted by probability, highest first.
        const [first, second] = [...probs.entries()];
        const margin = Math.log(first![1]) - Math.log(second![1]);
        if (process.env['QWEN_DEBUG']) console.log(type, k, cos, margin, Math.max(...centered(logp).map((x, i) => Math.abs(x - centered(ours.logits![k]!.data)[i]!))));
        if (margin > QUANT_MARGIN) {
          decisive++;
          expect(id, `step ${k}: llama.cpp's margin ${margin.toFixed(4)}`).to.equal(first![0]);
        }
      });
      expect(decisive, 'steps with a clear margin').to.be.at.least(3);
    });
  }
});
