/**
 * A model on host takes the q8-activations matmul class by default (docs/HOST.md) and the exact class
 * under exactMatmul; an engine given to loadModel keeps its own class, and asking for one then is
 * refused typed.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { InvalidOptions } from '../../../src/errors/index.js';
import { q8Matmuls } from '../../../src/model/qwen3/gate.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { modelFixture, TINY } from './helpers.js';

describe('qwen3 on host: the matmul class', function () {
  this.timeout(120_000);
  const fx = modelFixture();

  it('q8 by default, exact under exactMatmul; greedy tokens agree on this model; an engine keeps its own', async () => {
    const path = fx.gguf('m.gguf', { ...TINY, type: 'Q4_0' });
    const request = { promptIds: [104, 101, 108, 108, 111], maxTokens: 6, repetitionPenalty: 1, ignoreEos: true };
    const fast = await loadModel(path, { target: 'host', ctx: 32, cacheDir: join(fx.dir(), 'c1') });
    const exact = await loadModel(path, { target: 'host', ctx: 32, cacheDir: join(fx.dir(), 'c2'), exactMatmul: true });
    try {
      expect(q8Matmuls(fast)).to.equal(true);
      expect(q8Matmuls(exact)).to.equal(false);
      const [a, b] = [await fast.complete(request), await exact.complete(request)];
      expect(a.ids).to.deep.equal(b.ids);
    } finally {
      await fast.close();
      await exact.close();
    }
    const given = await loadModel(path, { target: 'host', ctx: 32, engine: fx.engine() });
    try {
      expect(q8Matmuls(given)).to.equal(false);
    } finally {
      await given.close();
    }
    await loadModel(path, { target: 'host', ctx: 32, engine: fx.engine(), exactMatmul: true }).then(
      () => expect.fail('an engine and exactMatmul together must be refused'),
      (e: unknown) => expect(e).to.be.instanceOf(InvalidOptions).and.have.property('field', 'exactMatmul'),
    );
  });
});
