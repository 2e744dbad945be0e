import { expect } from 'chai';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { buildProgram, cacheShapes } from '../../../src/model/qwen3/program.js';
import { EngineRunner } from '../../../src/model/qwen3/runner.js';
import { zeros } from '../../../src/ir/tensor.js';
import { cosine, modelFixture, SMALL } from './helpers.js';

describe('qwen3: the decode program partitioned over xdna2,host', function () {
  this.timeout(120_000);
  const fx = modelFixture();

  it('two decode steps give the logits and KV cache of the host alone, within the XDNA2 segments\' contracts', async () => {
    const path = fx.gguf('part.gguf', { ...SMALL, type: 'Q8_0' });
    const model = await loadModel(path, { engine: fx.engine(), ctx: 8, target: 'host' });
    const { config, weights } = model.source;
    const program = buildProgram(config, weights, { tokens: 1, ctx: 8 });
    const zero = Object.fromEntries([...cacheShapes(config, 8)].map(([k, s]) => [k, zeros('f32', s)]));
    const host = new EngineRunner(fx.engine(), 'host', weights);
    const split = new EngineRunner(fx.engine(), 'xdna2,host', weights);
    let hs = zero;
    let ps = zero;
    for (const [pos, id] of [[0, 3], [1, 7]] as const) {
      const h = await host.step(program, { ids: [id], positions: [pos], state: hs });
      const p = await split.step(program, { ids: [id], positions: [pos], state: ps });
      expect(cosine(p.logits.data, h.logits.data), `position ${pos}`).to.be.at.least(0.9999);
      expect(p.logits.data).to.not.deep.equal(zeros('f32', p.logits.shape).data);
      for (const k of Object.keys(zero)) expect(cosine(p.state[k]!.data, h.state[k]!.data), `${k} at ${pos}`).to.be.at.least(0.9999);
      hs = h.state;
      ps = p.state;
    }
    // The NPU's actor ran segments (a lazily started one would still be starting).
    expect(fx.engine().device('xdna2').state).to.equal('ready');
    await model.close();
  });
});
