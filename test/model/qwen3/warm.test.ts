/**
 * Qwen3Model.warm: what a server calls while it loads. It readies the decode program and the prefill
 * program the first prompt runs in, so that the first generation compiles nothing and opens no session.
 */
import { expect } from 'chai';
import { InvalidOptions } from '../../../src/errors/index.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { modelFixture, TINY } from './helpers.js';

describe('qwen3: warm readies the first prompt\'s programs', function () {
  this.timeout(120_000);
  const fx = modelFixture();
  const request = { promptIds: [5, 6, 7, 8, 9], maxTokens: 3, repetitionPenalty: 1, ignoreEos: true };
  const entries = () => fx.engine().status().then((s) => s.cache?.entries ?? -1);
  const sessions = async () => (await fx.engine().status()).devices.find((d) => d.kind === 'host')?.sessions ?? 0;

  it('after warm({ promptTokens }), a prompt of that length compiles nothing and opens no session; a prompt of another bucket does (the control)', async () => {
    const model = await loadModel(fx.gguf('warm.gguf', TINY), { engine: fx.engine(), target: 'host', ctx: 64 });
    const cold = await model.reference().complete(request);
    await model.warm({ promptTokens: request.promptIds.length });
    // The decode session and the prefill (16-token bucket) session, both open and kept for the generation.
    expect(await sessions()).to.equal(2);
    const compiled = await entries();
    expect(compiled).to.be.greaterThan(0);
    const r = await model.complete(request);
    expect(r.ids).to.deep.equal(cold.ids);
    expect(await entries()).to.equal(compiled);
    // A 20-token prompt runs in the 32-token program, which warm did not make: it is compiled now.
    await model.complete({ ...request, promptIds: Array.from({ length: 20 }, (_, i) => 3 + i) });
    expect(await entries()).to.be.greaterThan(compiled);
    await model.close();
  });

  it('warm() readies a full chunk\'s prefill program; promptTokens that is not a whole number of at least 1 is InvalidOptions', async () => {
    const model = await loadModel(fx.gguf('warm2.gguf', { ...TINY, seed: 9 }), { engine: fx.engine(), target: 'host', ctx: 48, prefillChunk: 32 });
    await model.warm();
    const compiled = await entries();
    await model.complete({ ...request, promptIds: Array.from({ length: 30 }, (_, i) => 3 + i) });
    expect(await entries()).to.equal(compiled);
    for (const bad of [0, 1.5, -3]) {
      let e: unknown;
      try { await model.warm({ promptTokens: bad }); } catch (x) { e = x; }
      expect(e).to.be.instanceOf(InvalidOptions);
      expect((e as InvalidOptions).field).to.equal('promptTokens');
    }
    await model.close();
  });
});
