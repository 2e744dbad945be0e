/**
 * Batch invariance on host (issue 23): in the q8-activations class (the models' default for q4_0,
 * q4_1 and q8_0 weights) every kernel computes a row the same way whatever rows run with it, so how a
 * prompt is chunked does not change a bit of the logits: one prefill of the whole prompt, chunks of 7
 * or 16, or one token per step through the decode program give the same bytes. The exact class's
 * matmul changes its summation order with the number of rows (the decode kernel below 12, the prefill
 * panels from 12), which is this test's negative control.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { createEngine, type Engine } from '../../../src/jobs/engine.js';
import { loadModel } from '../../../src/model/qwen3/model.js';
import type { QuantType } from '../../../src/model/gguf/ggmlTypes.js';
import { modelFixture, SMALL } from './helpers.js';

const PROMPT = Array.from({ length: 37 }, (_, i) => (i * 97 + 13) % 300);

describe('qwen3 on host: logits do not depend on how the prompt is chunked', function () {
  this.timeout(180_000);
  const fx = modelFixture();
  const engines: Engine[] = [];
  // One engine per matmul class for the file (each model is loaded and closed by logits()).
  const byClass = new Map<string, Engine>();
  const engine = (matmul: 'q8' | 'exact'): Engine => {
    let e = byClass.get(matmul);
    if (e === undefined) {
      e = createEngine({ cacheDir: join(fx.dir(), `cache-${matmul}`), devices: { host: { matmul } } });
      byClass.set(matmul, e);
      engines.push(e);
    }
    return e;
  };
  after(async () => { for (const e of engines) await e.close(); });

  // The logits of three greedy steps after the prompt, prefilled in chunks of at most `chunk` tokens.
  async function logits(path: string, on: Engine, chunk: number): Promise<Float64Array[]> {
    const model = await loadModel(path, { engine: on, target: 'host', ctx: 64, prefillChunk: chunk });
    try {
      const r = await model.complete({ promptIds: PROMPT, maxTokens: 3, repetitionPenalty: 1, ignoreEos: true, logits: true });
      return r.logits!.map((t) => Float64Array.from(t.data));
    } finally {
      await model.close();
    }
  }
  const same = (a: Float64Array[], b: Float64Array[]): boolean => a.length === b.length && a.every((x, i) => x.length === b[i]!.length && x.every((v, j) => Object.is(v, b[i]![j])));

  for (const type of ['Q4_0', 'Q8_0', 'Q4_1'] as const satisfies readonly QuantType[]) {
    it(`${type}, q8 class: one prefill, chunks of 16 and 7, and one token a step give the same bytes`, async () => {
      const path = fx.gguf(`${type}.gguf`, { ...SMALL, type });
      const on = engine('q8');
      const whole = await logits(path, on, 512);
      for (const chunk of [16, 7, 1]) expect(same(await logits(path, on, chunk), whole), `chunks of ${chunk}`).to.equal(true);
    });
  }

  it('negative control: the exact class gives other bytes one token a step than in one prefill', async () => {
    const path = fx.gguf('exact.gguf', { ...SMALL, type: 'Q8_0' });
    const on = engine('exact');
    expect(same(await logits(path, on, 1), await logits(path, on, 512))).to.equal(false);
  });
});
