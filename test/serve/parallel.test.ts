/**
 * serve --parallel: up to N generations decode together (the model's batch, model/qwen3/batch.ts), each
 * streamed answer the bytes it is alone; past the slots and --max-queue a request gets 429; a client
 * that goes away frees its slot; the slots show on /v1/status and /metrics.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { loadModel, type Qwen3Model } from '../../src/model/qwen3/model.js';
import { createServer, type Server } from '../../src/serve/server.js';
import type { ServedModel } from '../../src/serve/model.js';
import type { ServeStatus } from '../../src/serve/status.js';
import { metric, tinyModel } from './helpers.js';

const PROMPTS = ['abc', 'hello there, a longer prompt', 'x', 'the fourth one'];
const request = (prompt: string, max = 8) => ({ model: 'tiny', prompt, max_tokens: max, temperature: 0 });

/** A streamed completion's text, piece by piece as it came. */
async function streamed(client: OpenAI, prompt: string, max = 8): Promise<string[]> {
  const pieces: string[] = [];
  for await (const c of await client.completions.create({ ...request(prompt, max), stream: true })) pieces.push(c.choices[0]?.text ?? '');
  return pieces;
}


describe('serve --parallel: generations decoded together', function () {
  this.timeout(120_000);
  let model: ReturnType<typeof tinyModel>;
  // One engine for every server's model here: a fresh engine is not the subject.
  let engine: Engine;
  before(() => { model = tinyModel(); engine = createEngine({}); });
  after(async () => { await engine.close(); model.remove(); });

  async function start(parallel: number, maxQueue = 16, wrap?: (m: Qwen3Model) => ServedModel): Promise<{ server: Server; url: string; client: OpenAI }> {
    const server = createServer({
      modelId: 'tiny', parallel, maxQueue,
      open: async () => {
        const m = await loadModel(model.path, { target: 'host', ctx: 64, parallel, engine });
        return wrap === undefined ? m : wrap(m);
      },
    });
    const url = await server.listen(0, '127.0.0.1');
    await server.loaded;
    return { server, url, client: new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 }) };
  }

  it('four concurrent streamed completions give the pieces each gives alone, in shared steps', async () => {
    const one = await start(1);
    const alone: string[][] = [];
    try {
      for (const p of PROMPTS) alone.push(await streamed(one.client, p));
    } finally { await one.server.close(); }
    // The answers differ, so a stream given another's tokens would show.
    expect(new Set(alone.map((a) => a.join(''))).size).to.equal(PROMPTS.length);

    const four = await start(4);
    try {
      const together = await Promise.all(PROMPTS.map((p) => streamed(four.client, p)));
      expect(together.map((a) => a.join(''))).to.deep.equal(alone.map((a) => a.join('')));
      const use = (four.server.holder.model as Qwen3Model).batchUse()!;
      expect(use.slots).to.equal(4);
      expect(use.steps, 'batch steps').to.be.below(use.rows);
      expect(use.busy).to.equal(0);
    } finally { await four.server.close(); }
  });

  it('a client that goes away frees its slot; the next request is served the same bytes', async () => {
    const s = await start(2);
    try {
      const alone = await streamed(s.client, PROMPTS[1]!);
      const leave = new AbortController();
      const res = await fetch(`${s.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...request(PROMPTS[0]!, 50), stream: true }), signal: leave.signal });
      const reader = res.body!.getReader();
      await reader.read();
      const m = s.server.holder.model as Qwen3Model;
      while ((m.batchUse()?.busy ?? 0) < 1) await new Promise((r) => setTimeout(r, 5));
      leave.abort();
      await reader.read().catch(() => undefined);
      while (m.batchUse()!.busy > 0 || s.server.inFlight > 0) await new Promise((r) => setTimeout(r, 5));
      const use = m.batchUse()!;
      // It stopped within a few steps of leaving, not at its 50th token.
      expect(use.rows).to.be.below(50);
      expect(await streamed(s.client, PROMPTS[1]!)).to.deep.equal(alone);
    } finally { await s.server.close(); }
  });

  it('past the slots and --max-queue a request gets 429; the slots show on /v1/status and /metrics', async () => {
    // Each token waits for the test's go, so the slots and the line are known when they are read.
    let go!: () => void;
    let gate = new Promise<void>((r) => { go = r; });
    const s = await start(2, 1, (m) => ({
      get slots() { return m.slots; },
      get ctx() { return m.ctx; },
      async *generate(r) { const it = m.generate(r); for (;;) { const n = await it.next(); if (n.done === true) return n.value; await gate; yield n.value; } },
      close: () => m.close(),
    }));
    try {
      const running = [s.client.completions.create(request('abc', 4)), s.client.completions.create(request('x', 4))];
      const waiting = s.client.completions.create(request('the fourth one', 4));
      while (s.server.inFlight < 3) await new Promise((r) => setImmediate(r));
      const full = await s.client.completions.create(request('abc', 4)).catch((x: unknown) => x);
      expect(full).to.be.instanceOf(OpenAI.RateLimitError);
      expect((full as InstanceType<typeof OpenAI.RateLimitError>).code).to.equal('QueueFull');
      expect((full as Error).message).to.contain('behind the 2 running');
      const st = (await (await fetch(`${s.url}/v1/status`)).json()) as ServeStatus;
      expect(st.queue).to.deep.equal({ running: 2, waiting: 1, slots: 2, maxQueue: 1, refused429: 1 });
      const text = await (await fetch(`${s.url}/metrics`)).text();
      expect(metric(text, 'npu_offload_slots')).to.equal(2);
      expect(metric(text, 'npu_offload_busy_slots')).to.equal(2);
      expect(metric(text, 'npu_offload_queue_depth')).to.equal(1);
      expect(metric(text, 'npu_offload_kv_cache_positions')).to.equal(128);
      go();
      gate = Promise.resolve();
      for (const r of [...running, waiting]) expect((await r).usage!.completion_tokens).to.equal(4);
    } finally {
      go();
      gate = Promise.resolve();
      await s.server.close();
    }
  });
});
