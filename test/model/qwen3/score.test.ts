/**
 * model.score against llama.cpp (node-llama-cpp 3.21.1) on the same tiny Qwen3 GGUFs: every position's
 * logits, teacher-forced, against llama.cpp's distribution after the same prefix (its probabilities'
 * logs, compared centered, as llamacpp.test.ts does), and the perplexity each implies.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { loadLlamaCpp, type Llama, centered } from '../../llamaCpp.js';
import { cosine, modelFixture, SMALL } from './helpers.js';



describe('qwen3: score against llama.cpp (node-llama-cpp 3.21.1)', function () {
  this.timeout(180_000);
  const fx = modelFixture();
  let engine: Engine | undefined;
  let llama: Llama | undefined;
  before(async function () {
    llama = await loadLlamaCpp(this);
  });
  after(async () => { await engine?.close(); });

  for (const [type, least] of [['F16', 0.999], ['Q8_0', 0.99]] as const) {
    it(`${type}: every position's logits at cosine >= ${least} of llama.cpp's, and the perplexities within 2%`, async () => {
      const path = fx.gguf(`${type}.gguf`, { ...SMALL, type });
      engine ??= createEngine({ cacheDir: join(fx.dir(), 'q8'), devices: { host: { matmul: 'q8' } } });
      const model = await loadModel(path, { engine, ctx: 32, target: 'host' });
      const ids = [104, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100, 33, 32, 116, 104, 101];
      const ours = await model.score(ids);
      await model.close();

      const m = await llama!.loadModel({ modelPath: path });
      const ctx = await m.createContext({ contextSize: 64, threads: 2 });
      const out = await ctx.getSequence().controlledEvaluate(ids.map((t) => [t, { generateNext: { probabilities: true } }]));
      await ctx.dispose();
      await m.dispose();
      let theirLogprob = 0;
      let worst = 1;
      ids.forEach((_, t) => {
        const probs = out[t]!.next.probabilities!;
        const logp = Array.from({ length: ours.logits[t]!.length }, (_, i) => Math.log(probs.get(i) ?? 0));
        const cos = cosine(centered(logp), centered(ours.logits[t]!));
        worst = Math.min(worst, cos);
        expect(cos, `position ${t}`).to.be.at.least(least);
        if (t + 1 < ids.length) theirLogprob += logp[ids[t + 1]!]!;
      });
      const theirs = Math.exp(-theirLogprob / (ids.length - 1));
      if (process.env['QWEN_DEBUG']) console.log(type, 'least cosine', worst, 'perplexity', ours.perplexity, theirs);
      expect(Math.abs(ours.perplexity / theirs - 1), `ours ${ours.perplexity}, llama.cpp's ${theirs}`).to.be.at.most(0.02);
      // Negative control: the rows one position off are not llama.cpp's.
      const off = cosine(centered(Array.from({ length: ours.logits[1]!.length }, (_, i) => Math.log(out[0]!.next.probabilities!.get(i) ?? 0))), centered(ours.logits[1]!));
      expect(off).to.be.below(least);
    });
  }
});
