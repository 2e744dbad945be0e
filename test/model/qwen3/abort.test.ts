import { expect } from 'chai';
import { Aborted } from '../../../src/errors/index.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { modelFixture, TINY } from './helpers.js';

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try { await p; } catch (e) { return e; }
  throw new Error('expected a rejection');
}

describe('qwen3: generate and complete take { signal }', function () {
  this.timeout(120_000);
  const fx = modelFixture();
  const request = { promptIds: [5, 6, 7], maxTokens: 8, repetitionPenalty: 1, ignoreEos: true };

  it('an abort between tokens ends generate with Aborted, and the model is free: the next generation gives the same ids', async () => {
    const model = await loadModel(fx.gguf('abort.gguf', TINY), { engine: fx.engine(), target: 'host', ctx: 64 });
    const before = await model.complete(request);
    expect(before.ids).to.have.length(8);
    const host = async () => (await fx.engine().status()).devices.find((d) => d.kind === 'host')!.sessions;
    const held = await host();
    const ac = new AbortController();
    const seen: number[] = [];
    const e = await rejection((async () => {
      for await (const t of model.generate({ ...request, maxTokens: 60 }, { signal: ac.signal })) {
        seen.push(t.id);
        if (seen.length === 2) ac.abort('the reader left');
      }
    })());
    expect(e).to.be.instanceOf(Aborted);
    expect((e as Aborted).reason).to.equal('the reader left');
    expect(seen).to.deep.equal(before.ids.slice(0, 2));
    // Its sessions went back to the model, none left open beside them.
    expect(await host()).to.equal(held);
    const after = await model.complete(request);
    expect(after.ids).to.deep.equal(before.ids);
    await model.close();
  });

  it('complete with an already-aborted signal rejects at once with Aborted; a signal that is not one is InvalidOptions', async () => {
    const model = await loadModel(fx.gguf('aborted.gguf', TINY), { engine: fx.engine(), target: 'host', ctx: 64 });
    const e = await rejection(model.complete(request, { signal: AbortSignal.abort('no need') }));
    expect(e).to.be.instanceOf(Aborted);
    expect((e as Aborted).message).to.equal('aborted: no need');
    const bad = await rejection(model.complete(request, { signal: {} as AbortSignal }));
    expect(bad).to.have.property('code', 'InvalidOptions');
    expect(bad).to.have.property('field', 'signal');
    expect((await model.complete(request)).ids).to.have.length(8);
    await model.close();
  });

  it('opens the decode program\'s session while the prompt is prefilled, not at the first decode step', async () => {
    const engine = fx.engine();
    const model = await loadModel(fx.gguf('ahead.gguf', TINY), { engine, target: 'host', ctx: 64 });
    const opened: string[] = [];
    const open = engine.openSession.bind(engine);
    engine.openSession = (spec) => { opened.push((spec.program as { name: string }).name); return open(spec); };
    try {
      // One token comes from the prefill alone: no decode session is asked for (the control).
      await model.complete({ ...request, maxTokens: 1 });
      expect(opened).to.deep.equal(['qwen3-prefill-16-ctx64']);
      // More than one: the decode session is asked for first, before the prefill's step runs.
      const fresh = await loadModel(fx.gguf('ahead.gguf', TINY), { engine, target: 'host', ctx: 32 });
      opened.length = 0;
      const out = await fresh.complete(request);
      expect(out.ids).to.have.length(8);
      // (the decode program of the batch the model's generations decode in: batch.ts)
      expect(opened).to.deep.equal(['qwen3-decode-seq4-ctx32', 'qwen3-prefill-16-ctx32']);
      await fresh.close();
    } finally {
      engine.openSession = open;
      await model.close();
    }
  });
});
