/**
 * A GGUF packed to Q4NX (gguf pack) runs as a model directory and gives the same greedy tokens as the
 * GGUF it came from: for Q4_0, Q4_1 and Q4_K sources the q4_1 codes are the GGUF's own, and only the
 * scales, zeros, norms and embedding are rounded to bf16.
 */
import { expect } from 'chai';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Q4nxError } from '../../../src/errors/index.js';
import { packGguf } from '../../../src/model/pack/pack.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import { cosine, modelFixture, SMALL } from './helpers.js';

describe('qwen3 from a Q4NX model directory', function () {
  this.timeout(180_000);
  const fx = modelFixture();

  for (const [type, target] of [['Q4_0', 'cpu'], ['Q4_1', 'cpu'], ['Q4_K', 'cpu'], ['Q4_0', 'host'], ['Q4_K', 'host']] as const) {
    it(`${type} on ${target}: the packed directory gives the GGUF's greedy tokens`, async () => {
      const gguf = fx.gguf(`${type}-${target}.gguf`, { ...SMALL, type });
      const dir = join(fx.dir(), `${type}-${target}-q4nx`);
      packGguf(gguf, dir);
      const fromGguf = await loadModel(gguf, { engine: fx.engine(), ctx: 32, target });
      const fromDir = await loadModel(dir, { engine: fx.engine(), ctx: 32, target });
      expect(fromDir.source.kind).to.equal('q4nx');
      expect(fromDir.source.weights.get('blk.0.ffn_gate')).to.include({ dtype: 'q4nx_q41' });
      expect(fromDir.source.weights.get('blk.0.ffn_gate')!.shape).to.deep.equal([512, 256]);
      expect(fromDir.source.weights.get('token_embd')).to.include({ dtype: 'bf16' });
      const request = { promptIds: [104, 101, 108, 108, 111], maxTokens: 10, logits: true, repetitionPenalty: 1, ignoreEos: true };
      const a = await fromGguf.complete(request);
      const b = await fromDir.complete(request);
      expect(b.ids).to.deep.equal(a.ids);
      for (const [k, l] of b.logits!.entries()) expect(cosine(l.data, a.logits![k]!.data), `step ${k}`).to.be.at.least(0.999);
    });
  }

  it('refuses a directory whose model.q4nx lacks a tensor, naming it', async () => {
    const gguf = fx.gguf('m.gguf', { ...SMALL, type: 'Q4_0', layers: 1 });
    const dir = join(fx.dir(), 'short');
    packGguf(gguf, dir);
    const bad = join(fx.dir(), 'short2');
    mkdirSync(bad);
    copyFileSync(join(dir, 'model.q4nx'), join(bad, 'model.q4nx'));
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(bad, 'config.json'), JSON.stringify({ ...config, num_hidden_layers: 2 }));
    let err: unknown;
    try { await loadModel(bad, { engine: fx.engine() }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(Q4nxError).with.property('tensor', 'model.layers.1.input_layernorm.weight');
    rmSync(bad, { recursive: true });
  });
});
