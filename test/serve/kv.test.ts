/**
 * serve's KV budget (model/qwen3/kv.ts): blocks held, filled and free on /v1/status and /metrics; a
 * request the budget cannot hold refused with KvCacheFull (429 while others hold the blocks, 400 past
 * the whole budget), one it can served; a client that disconnects gives its blocks back within a step;
 * `n` choices of a prompt prefilled once (model/qwen3/share.ts), each the bytes of the request alone.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { loadModel, type Qwen3Model } from '../../src/model/qwen3/model.js';
import type { CacheCursor, EngineRunner } from '../../src/model/qwen3/runner.js';
import { createServer, type Server } from '../../src/serve/server.js';
import type { ServedModel } from '../../src/serve/model.js';
import type { ServeStatus } from '../../src/serve/status.js';
import { metric, tinyModel } from './helpers.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => (i * 37 + 5) % 300);

describe('serve: the KV budget and n choices sharing a prefill', function () {
  this.timeout(120_000);
  let model: ReturnType<typeof tinyModel>;
  before(() => { model = tinyModel(); });
  after(() => model.remove());

  async function start(kvBudget: number | boolean, wrap?: (m: Qwen3Model) => ServedModel, parallel = 2): Promise<{ server: Server; url: string; client: OpenAI; model: () => Qwen3Model }> {
    let opened: Qwen3Model | undefined;
    const server = createServer({
      modelId: 'tiny', parallel,
      open: async () => {
        const m = await loadModel(model.path, { target: 'host', ctx: 128, parallel, kvBudget, prefillChunk: 16 });
        opened = m;
        return wrap === undefined ? m : wrap(m);
      },
    });
    const url = await server.listen(0, '127.0.0.1');
    await server.loaded;
    return { server, url, client: new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 }), model: () => opened! };
  }
  const status = async (url: string) => (await (await fetch(`${url}/v1/status`)).json()) as ServeStatus;

  it('refuses what the budget cannot hold (429 while held, 400 never), serves what it can; the use shows on /v1/status and /metrics', async () => {
    // One block of 64 positions.
    const s = await start(64);
    try {
      const st = await status(s.url);
      expect(st.kv).to.include({ block: 64, total: 1, reserved: 0, free: 1, refused: 0, reuseRate: null });
      // Below the budget: 10 + 20 positions.
      const ok = await s.client.completions.create({ model: 'tiny', prompt: ids(10), max_tokens: 20, temperature: 0 });
      expect(ok.choices).to.have.length(1);
      // Two choices of one block each, running at once: the second finds the block held.
      const held = await s.client.completions.create({ model: 'tiny', prompt: ids(10), max_tokens: 20, temperature: 0, n: 2 }).catch((e: unknown) => e);
      expect(held).to.be.instanceOf(OpenAI.RateLimitError);
      expect((held as InstanceType<typeof OpenAI.RateLimitError>).code).to.equal('KvCacheFull');
      expect((held as Error).message).to.contain('1 blocks of 64 positions, 0 of 1 are free');
      // Past the whole budget: 10 + 60 positions never fit.
      const never = await s.client.completions.create({ model: 'tiny', prompt: ids(10), max_tokens: 60, temperature: 0 }).catch((e: unknown) => e);
      expect(never).to.be.instanceOf(OpenAI.BadRequestError);
      expect((never as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('KvCacheFull');
      expect((never as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('max_tokens');
      const after = await status(s.url);
      expect(after.kv).to.include({ reserved: 0, free: 1, refused: 2 });
      expect(after.failures.byCode).to.deep.equal({ KvCacheFull: 2 });
      const text = await (await fetch(`${s.url}/metrics`)).text();
      expect(metric(text, 'npu_offload_kv_blocks')).to.equal(1);
      expect(metric(text, 'npu_offload_kv_blocks_free')).to.equal(1);
      expect(metric(text, 'npu_offload_kv_refused_total')).to.equal(2);
    } finally { await s.server.close(); }
    // The default budget: --ctx for each slot; the same n = 2 request is served.
    const d = await start(true);
    try {
      expect((await status(d.url)).kv).to.include({ total: 4, free: 4 });
      const two = await d.client.completions.create({ model: 'tiny', prompt: ids(10), max_tokens: 20, temperature: 0, n: 2 });
      expect(two.choices).to.have.length(2);
      expect((await status(d.url)).kv).to.include({ reserved: 0, admitted: 2, refused: 0 });
    } finally { await d.server.close(); }
  });

  it('a client that disconnects gives its blocks back, no further step run', async () => {
    // Each token waits for the test's go, so what the generation holds is known when it is read.
    let go!: () => void;
    let gate = new Promise<void>((r) => { go = r; });
    const s = await start(true, (m) => ({
      get slots() { return m.slots; },
      kvUse: () => m.kvUse(),
      async *generate(r, o) {
        const it = m.generate(r, o);
        try {
          for (;;) { const n = await it.next(); if (n.done === true) return n.value; await gate; yield n.value; }
        } finally { await it.return(undefined as never); }
      },
      close: () => m.close(),
    }));
    try {
      const leave = new AbortController();
      // Its headers go with its first token, which waits for the gate.
      const res = fetch(`${s.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', prompt: ids(10), max_tokens: 100, temperature: 0, stream: true }), signal: leave.signal }).catch(() => undefined);
      const m = s.model();
      // Admitted (its blocks reserved), then prefilled.
      while ((m.kvUse()?.generations[0]?.filled ?? 0) < 10) await new Promise((r) => setTimeout(r, 2));
      // Held while it runs: 10 + 100 positions, two blocks, its prompt filled.
      // Read without a socket of its own, so that the server's only connection is the stream's.
      const during = (await s.server.app.inject({ url: '/v1/status' })).json<ServeStatus>();
      expect(during.kv!.generations).to.deep.equal([{ blocks: 2, filled: 10 }]);
      expect(during.kv).to.include({ reserved: 2, free: 2 });
      const steps = m.batchUse()!.aloneSteps + m.batchUse()!.rows;
      leave.abort();
      await res;
      // The server has seen the connection go before the generation's next token.
      for (;;) {
        const open = await new Promise<number>((r, j) => s.server.app.server.getConnections((e, n) => (e ? j(e) : r(n))));
        if (open === 0) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      go();
      gate = Promise.resolve();
      while (s.server.inFlight > 0) await new Promise((r) => setTimeout(r, 5));
      expect(m.kvUse()).to.include({ reserved: 0, free: 4 });
      expect(m.kvUse()!.generations).to.deep.equal([]);
      expect(m.batchUse()!.aloneSteps + m.batchUse()!.rows - steps, 'steps after it left').to.be.at.most(1);
    } finally {
      go();
      gate = Promise.resolve();
      await s.server.close();
    }
  });

  it('n = 3 prefills its prompt once, each choice the bytes of n = 1 with its seed (streamed and not)', async () => {
    const prefills = { n: 0 };
    const s = await start(true, (m) => {
      const runner = m.runner as EngineRunner;
      const begin = runner.begin.bind(runner);
      runner.begin = async (zero) => {
        const c: CacheCursor = await begin(zero);
        const step = c.step.bind(c);
        c.step = (program, x, positions) => { if (x.length > 1) prefills.n++; return step(program, x, positions); };
        return c;
      };
      return m;
    }, 4);
    try {
      // 40 prompt tokens: three prefill steps of at most 16.
      const body = { model: 'tiny', prompt: ids(40), max_tokens: 8, temperature: 1.5, seed: 11 };
      const alone: string[] = [];
      for (const seed of [11, 12, 13]) alone.push((await s.client.completions.create({ ...body, seed })).choices[0]!.text);
      expect(new Set(alone).size, 'the seeds give different answers').to.equal(3);
      expect(prefills.n).to.equal(9);
      prefills.n = 0;
      const three = await s.client.completions.create({ ...body, n: 3 });
      expect(three.choices.map((c) => c.text)).to.deep.equal(alone);
      expect(three.usage!.prompt_tokens).to.equal(40);
      expect(prefills.n, 'prefill steps of n = 3').to.equal(3);
      prefills.n = 0;
      const texts = ['', '', ''];
      for await (const c of await s.client.completions.create({ ...body, n: 3, stream: true })) for (const x of c.choices) texts[x.index] = `${texts[x.index] ?? ''}${x.text}`;
      expect(texts).to.deep.equal(alone);
      expect(prefills.n, 'prefill steps of n = 3, streamed').to.equal(3);
    } finally { await s.server.close(); }
  });
});
