/**
 * A prompt prefilled on another target (xdna2 partitioned with host, simulated) and its KV cache handed
 * to the host's decode session: the same greedy tokens as host alone, the cache within its class of the
 * fp64 reference's, and the gate's handoff phase.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { compareTensor } from '../../../src/numerics/compare.js';
import { cacheAfter as cacheOf } from '../../../src/model/qwen3/gate.js';
import { loadModel, type Qwen3Model } from '../../../src/model/qwen3/model.js';
import { modelFixture, SMALL, TINY } from './helpers.js';
import { cliHere } from '../../cli/inProcess.js';

const PROMPT = [104, 101, 108, 108, 111, 32, 119];

const cacheAfter = (m: Qwen3Model) => cacheOf(m, PROMPT);

describe('qwen3: prefill on xdna2,host, decode on host', function () {
  this.timeout(180_000);
  const fx = modelFixture();

  it('gives host\'s greedy tokens and hands over a KV cache within Contract (normwise) of the fp64 reference', async () => {
    const path = fx.gguf('h.gguf', { ...SMALL, type: 'Q8_0' });
    const handed = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'host', prefillTarget: 'xdna2,host' });
    const alone = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'host' });
    const request = { promptIds: PROMPT, maxTokens: 8, repetitionPenalty: 1, ignoreEos: true };
    expect((await handed.complete(request)).ids).to.deep.equal((await alone.complete(request)).ids);
    const got = await cacheAfter(handed);
    const want = await cacheAfter(handed.reference());
    for (const [k, w] of Object.entries(want)) {
      const c = compareTensor(got[k]!, w, { kind: 'normwise', rel: 1e-5 });
      expect(c.pass, `${k}: ${c.reason ?? ''}`).to.equal(true);
    }
    // The cache came from xdna2's simulated arithmetic: close to host's, not the same values.
    const host = await cacheAfter(alone);
    expect(Object.keys(got).some((k) => Array.from(got[k]!.data).some((v, i) => v !== host[k]!.data[i]))).to.equal(true);
  });

  it('gate --prefill-target adds a handoff phase that passes; a prefill target no model fits is refused typed', async () => {
    const path = fx.gguf('g.gguf', { ...TINY, type: 'Q8_0' });
    const r = await cliHere(['gate', path, '--target', 'host', '--prefill-target', 'xdna2,host', '--ctx', '64', '--json'], { env: { NPU_OFFLOAD_CACHE_DIR: join(fx.dir(), 'cache') } });
    expect(r.status, r.err).to.equal(0);
    const doc = JSON.parse(r.out) as { phases: { phase: string; pass: boolean }[] };
    expect(doc.phases.find((p) => p.phase === 'handoff')).to.include({ pass: true });
    const bad = await cliHere(['generate', path, '--prompt-ids', '1,2', '--target', 'host', '--prefill-target', 'tpu', '--json'], { env: { NPU_OFFLOAD_CACHE_DIR: join(fx.dir(), 'cache') } });
    expect(bad.status).to.equal(1);
    expect(JSON.parse(bad.out)).to.have.nested.property('error.field', 'prefillTarget');
  });
});
