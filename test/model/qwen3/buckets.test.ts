/**
 * Prompt chunks run in a few bucketed prefill programs (prefillTokens), padded by stepActivations: a
 * padded prefill gives the unpadded one's logits and cache rows, and prompts of different lengths share
 * one compiled program.
 */
import { expect } from 'chai';
import { cacheShapes } from '../../../src/model/qwen3/program.js';
import { prefillTokens } from '../../../src/model/qwen3/generate.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { EngineRunner } from '../../../src/model/qwen3/runner.js';
import { zeros } from '../../../src/ir/tensor.js';
import { cosine, modelFixture, SMALL, TINY } from './helpers.js';
import { buildProgram } from '../../../src/model/qwen3/program.js';
import { resolveLimits } from '../../../src/ir/limits.js';
import { ResourceLimit } from '../../../src/errors/index.js';

describe('qwen3: bucketed prefill programs', function () {
  this.timeout(120_000);
  const fx = modelFixture();

  it('picks 16, 32, 64, then the next multiple of 64, within the chunk and the room left; one token is a decode step', () => {
    expect(prefillTokens(1, 100, 512)).to.equal(1);
    expect(prefillTokens(2, 100, 512)).to.equal(16);
    expect(prefillTokens(16, 100, 512)).to.equal(16);
    expect(prefillTokens(17, 100, 512)).to.equal(32);
    expect(prefillTokens(17, 20, 512)).to.equal(20);
    expect(prefillTokens(17, 100, 24)).to.equal(24);
    expect(prefillTokens(65, 1000, 512)).to.equal(128);
    expect(prefillTokens(300, 1000, 512)).to.equal(320);
    expect(prefillTokens(500, 1000, 512)).to.equal(512);
    expect(prefillTokens(512, 512, 512)).to.equal(512);
  });

  it('a padded prefill on host gives the unpadded one\'s logits and cache rows; the padding rows are masked later', async () => {
    const path = fx.gguf('b.gguf', { ...SMALL, type: 'Q8_0' });
    const model = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'host' });
    const runner = new EngineRunner(fx.engine(), 'host', model.source.weights);
    const zero = Object.fromEntries([...cacheShapes(model.config, 32)].map(([k, s]) => [k, zeros('f32', s)]));
    const ids = [5, 9, 200, 31, 7];
    const positions = ids.map((_, i) => i);
    const exact = await runner.step(model.program(5), { ids, positions, state: zero });
    const padded = await runner.step(model.program(16), { ids, positions, state: zero });
    expect(cosine(padded.logits.data, exact.logits.data)).to.be.at.least(0.99999);
    // The cache's rows of the real tokens agree; the padding wrote rows 5..15, which no later step reads unwritten.
    const k = exact.state['cache.v.0']!;
    const rows = k.shape[1]!;
    const width = k.shape[2]!;
    for (let h = 0; h < k.shape[0]!; h++) {
      const at = (t: { data: ArrayLike<number> }, r: number) => Array.from(t.data).slice((h * rows + r) * width, (h * rows + r + 1) * width);
      for (let r = 0; r < 5; r++) expect(cosine(at(padded.state['cache.v.0']!, r), at(k, r)), `head ${h} row ${r}`).to.be.at.least(0.99999);
    }
    // Greedy decoding after a padded prefill gives the fp64 reference's tokens (which pads the same way).
    const request = { promptIds: ids, maxTokens: 6, repetitionPenalty: 1, ignoreEos: true };
    expect((await model.complete(request)).ids).to.deep.equal((await model.reference().complete(request)).ids);
    await model.close();
  });

  it('prompts of 5, 9 and 13 tokens share one compiled prefill program', async () => {
    const path = fx.gguf('s.gguf', { ...SMALL, type: 'Q8_0' });
    const model = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'host' });
    const entries = () => fx.engine().status().then((s) => s.cache?.entries ?? -1);
    await model.complete({ promptIds: [1, 2, 3, 4, 5], maxTokens: 2, ignoreEos: true });
    const after = await entries();
    expect(after).to.be.greaterThan(0);
    await model.complete({ promptIds: [1, 2, 3, 4, 5, 6, 7, 8, 9], maxTokens: 2, ignoreEos: true });
    await model.complete({ promptIds: [9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5], maxTokens: 2, ignoreEos: true });
    expect(await entries()).to.equal(after);
    await model.close();
  });

  it('halves the prefill chunk while its program is past program-bytes, so a long prompt runs in smaller steps; refused below 16', async () => {
    const path = fx.gguf('chunk.gguf', TINY);
    const plain = await loadModel(path, { engine: fx.engine(), ctx: 256, target: 'host', prefillChunk: 256 });
    expect(plain.fittingChunk()).to.equal(256);
    // The least programBytes under which the program of `tokens` tokens builds (its live peak).
    const peak = (tokens: number): number => {
      let lo = 1, hi = 2 ** 33;
      while (lo < hi) {
        const mid = Math.floor((lo + hi) / 2);
        try { buildProgram(plain.config, plain.source.weights, { tokens, ctx: 256, limits: resolveLimits({ programBytes: mid }) }); hi = mid; } catch { lo = mid + 1; }
      }
      return lo;
    };
    const at64 = peak(64);
    expect(at64).to.be.below(peak(128));
    const small = await loadModel(path, { engine: fx.engine(), ctx: 256, target: 'host', prefillChunk: 256, limits: { programBytes: at64 } });
    expect(small.fittingChunk()).to.equal(64);
    const ids = Array.from({ length: 150 }, (_, i) => 1 + (i % 300));
    const out = await small.complete({ promptIds: ids, maxTokens: 2, ignoreEos: true });
    expect(out.promptTokens).to.equal(150);
    expect(out.ids).to.have.length(2);
    // Negative control: under the peak of a 16-token chunk nothing fits, and the generation is refused typed.
    const none = await loadModel(path, { engine: fx.engine(), ctx: 256, target: 'host', prefillChunk: 256, limits: { programBytes: peak(16) - 1 } });
    let caught: unknown;
    try { await none.complete({ promptIds: ids, maxTokens: 2 }); } catch (e) { caught = e; }
    expect(caught).to.be.instanceOf(ResourceLimit);
    expect((caught as ResourceLimit).what).to.equal('program-bytes');
    for (const m of [plain, small, none]) await m.close();
  });
});
