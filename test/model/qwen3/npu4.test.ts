/**
 * Prefill on the simulated NPU4 (the whole layer stack narrowed to FP16: the plain-form program), its
 * KV cache handed to the host's decode session; npu4 partitioned with host for a quantized model; the
 * whole model on the NPU4; the refusal of a quantized model on npu4 alone; the gate's handoff phase.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { DeadlineExceeded } from '../../../src/errors/index.js';
import { createEngine } from '../../../src/jobs/engine.js';
import { roundF16 } from '../../../src/numerics/float16.js';
import { toleranceFor } from '../../../src/numerics/classes.js';
import { compareTensor } from '../../../src/numerics/compare.js';
import type { TensorMap } from '../../../src/ir/values.js';
import { cacheAfter, handoffMargin, margin } from '../../../src/model/qwen3/gate.js';
import { loadModel, type Qwen3Model } from '../../../src/model/qwen3/model.js';
import { modelFixture, SMALL, TINY } from './helpers.js';
import { cliHere } from '../../cli/inProcess.js';

const PROMPT = [104, 101, 108, 108, 111, 32, 119, 111];
const REQUEST = { promptIds: PROMPT, maxTokens: 8, repetitionPenalty: 1, ignoreEos: true } as const;
const NARROW = toleranceFor('NarrowStorage', 'f32');
const REL = 'rel' in NARROW ? NARROW.rel : 0;

/** The tokens of `m` equal host's alone up to the first token host chose at a margin FP16 could move. */
async function expectHostTokens(m: Qwen3Model, host: Qwen3Model): Promise<number> {
  const alone = await host.complete({ ...REQUEST, logits: true });
  const got = (await m.complete(REQUEST)).ids;
  let clear = 0;
  for (const [k, id] of alone.ids.entries()) {
    const l = alone.logits![k]!.data;
    const decisive = margin(l) > handoffMargin(REL, l);
    if (decisive) expect(got[k], `token ${k} (host's margin ${margin(l).toFixed(3)})`).to.equal(id);
    if (got[k] !== id) break;
    if (decisive) clear++;
  }
  return clear;
}

async function expectCacheNarrow(m: Qwen3Model): Promise<TensorMap> {
  const got = await cacheAfter(m, PROMPT);
  const want = await cacheAfter(m.reference(), PROMPT);
  for (const [k, w] of Object.entries(want)) {
    const c = compareTensor(got[k]!, w, NARROW);
    expect(c.pass, `${k}: ${c.reason ?? ''}`).to.equal(true);
  }
  return got;
}

const isF16 = (v: number) => roundF16(v) === v;

describe('qwen3: prefill on npu4, decode on host', function () {
  this.timeout(240_000);
  const fx = modelFixture();

  it('an F16 model prefills whole on npu4: host\'s greedy tokens, a cache within NarrowStorage of fp64 and stored in FP16', async () => {
    const path = fx.gguf('f16.gguf', { ...TINY, type: 'F16' });
    const handed = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'host', prefillTarget: 'npu4' });
    const host = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'host' });
    expect(await expectHostTokens(handed, host)).to.be.at.least(3);
    const cache = await expectCacheNarrow(handed);
    // Every value the NPU handed over went through its FP16 storage; host's own cache did not.
    for (const t of Object.values(cache)) expect(Array.from(t.data).every(isF16)).to.equal(true);
    const own = await cacheAfter(host, PROMPT);
    expect(Object.values(own).some((t) => !Array.from(t.data).every(isF16))).to.equal(true);
    // The NPU4 ran it: no row kernel, the tables as inputs (the plain form), on the npu4 device; the
    // result says the prefill was simulated and in NarrowStorage, the decode on host neither.
    expect(handed.prefillProgram(PROMPT.length).eqns.some((e) => e.op === 'row_kernel')).to.equal(false);
    const ran = (await handed.complete({ ...REQUEST, maxTokens: 2 })).ranOn;
    expect(ran.map((r) => [r.phase, r.target, r.simulated, r.numerics])).to.deep.equal([['prefill', 'npu4', true, 'NarrowStorage'], ['decode', 'host', false, 'Contract']]);
    expect(fx.engine().device('npu4').state).to.equal('ready');
    await Promise.all([handed.close(), host.close()]);
  });

  it('a prefill that hangs on npu4 fails with DeadlineExceeded naming it; host stays ready; once npu4 restarts the next generation runs', async () => {
    const path = fx.gguf('hang.gguf', { ...TINY, type: 'F16' });
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const engine = createEngine({ cacheDir: join(fx.dir(), 'hang-cache'), devices: { npu4: { plan: { counter, hang: [1] } } } });
    try {
      const npu = engine.device('npu4');
      let poisoned = false;
      npu.on('poisoned', () => { poisoned = true; });
      const restarted = new Promise<void>((resolve) => { const off = npu.on('ready', () => { if (poisoned) { off(); resolve(); } }); });
      // The deadline bounds the load's calls to npu4 too: wait for its worker first (no deadline), so a
      // loaded machine's slow worker start is not one of them; loading a tiny artifact is far below 5 s.
      await npu.call('live', []);
      const m = await loadModel(path, { engine, ctx: 32, target: 'host', prefillTarget: 'npu4', deadlineMs: 5000 });
      const e = await m.complete(REQUEST).then(() => null, (x: unknown) => x);
      expect(e).to.be.instanceOf(DeadlineExceeded);
      expect((e as DeadlineExceeded).device).to.match(/npu4/);
      // The host's actor was not touched (it may still be starting: the prefill came first).
      expect(engine.device('host').state).to.not.equal('poisoned');
      expect(engine.device('host').restarts).to.equal(0);
      await restarted;
      // The restarted npu4 prefills the next generation (with no deadline: the simulator is slow on a loaded machine).
      const again = await loadModel(path, { engine, ctx: 32, target: 'host', prefillTarget: 'npu4' });
      const host = await loadModel(path, { engine, ctx: 32, target: 'host' });
      expect(await expectHostTokens(again, host)).to.be.at.least(3);
      await Promise.all([m.close(), again.close(), host.close()]);
    } finally {
      await engine.close();
    }
  });

  it('a Q8_0 model on npu4,host: the NPU4 takes what it admits, the quantized matmuls go to host; same checks', async () => {
    const path = fx.gguf('q8.gguf', { ...SMALL, type: 'Q8_0' });
    const handed = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'host', prefillTarget: 'npu4,host' });
    const host = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'host' });
    expect(await expectHostTokens(handed, host)).to.be.at.least(3);
    await expectCacheNarrow(handed);
    await Promise.all([handed.close(), host.close()]);
  });

  it('the whole model on npu4 (prefill and decode): host\'s greedy tokens where FP16 cannot move them', async () => {
    const path = fx.gguf('all.gguf', { ...TINY, type: 'F16' });
    const npu = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'npu4' });
    const host = await loadModel(path, { engine: fx.engine(), ctx: 32, target: 'host' });
    expect(await expectHostTokens(npu, host)).to.be.at.least(3);
    await Promise.all([npu.close(), host.close()]);
  });

  it('npu4 alone refuses a quantized model when it loads, naming the weight; gate --prefill-target npu4 passes its handoff phase', async () => {
    const q8 = fx.gguf('r.gguf', { ...SMALL, type: 'Q8_0' });
    const refused = await loadModel(q8, { engine: fx.engine(), ctx: 32, target: 'host', prefillTarget: 'npu4' }).then(() => null, (e: unknown) => e);
    expect(refused).to.include({ code: 'CapabilityMissing', capability: 'dtype.q8_0', op: 'gather' });
    const bad = await cliHere(['generate', q8, '--prompt-ids', '1,2,3', '--target', 'host', '--prefill-target', 'npu4', '--ctx', '32', '--json'], { env: { NPU_OFFLOAD_CACHE_DIR: join(fx.dir(), 'cache') } });
    expect(bad.status, bad.err).to.equal(1);
    expect(JSON.parse(bad.out)).to.deep.include({ error: { code: 'CapabilityMissing', eqn: 4, op: 'gather', capability: 'dtype.q8_0' } });
    const f16 = fx.gguf('g.gguf', { ...TINY, type: 'F16' });
    const ok = await cliHere(['generate', f16, '--prompt-ids', '1,2,3', '--max-tokens', '2', '--target', 'host', '--prefill-target', 'npu4,host', '--ctx', '32', '--json'], { env: { NPU_OFFLOAD_CACHE_DIR: join(fx.dir(), 'cache') } });
    expect(ok.status, ok.err).to.equal(0);
    const ranOn = (JSON.parse(ok.out) as { ran_on: { phase: string; target: string; devices: string[]; simulated: boolean; numerics: string }[] }).ran_on;
    expect(ranOn.map((r) => [r.phase, r.target, r.simulated, r.numerics])).to.deep.equal([['prefill', 'npu4,host', true, 'NarrowStorage'], ['decode', 'host', false, 'Contract']]);
    expect(ranOn[0]!.devices.some((d) => d.includes('npu4'))).to.equal(true);
    const r = await cliHere(['gate', f16, '--target', 'host', '--prefill-target', 'npu4', '--ctx', '64', '--json'], { env: { NPU_OFFLOAD_CACHE_DIR: join(fx.dir(), 'cache') } });
    expect(r.status, r.err).to.equal(0);
    const doc = JSON.parse(r.out) as { phases: { phase: string; pass: boolean; detail: string }[] };
    const phase = doc.phases.find((p) => p.phase === 'handoff')!;
    expect(phase.pass, phase.detail).to.equal(true);
    expect(phase.detail).to.include('within NarrowStorage');
  });
});
