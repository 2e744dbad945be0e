import { expect } from 'chai';
import { DeadlineExceeded } from '../../src/errors/index.js';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { loadModel } from '../../src/model/qwen3/model.js';
import type { ServedModel } from '../../src/serve/model.js';
import { createServer, type Server } from '../../src/serve/server.js';
import type { ServeStatus } from '../../src/serve/status.js';
import { startServer, tinyModel } from './helpers.js';

const REQ = { model: 'tiny', prompt: 'abc', max_tokens: 4, temperature: 0 };

async function post(url: string, body: unknown, key?: string): Promise<Response> {
  return fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });
}

async function status(url: string, key?: string): Promise<ServeStatus> {
  const r = await fetch(`${url}/v1/status`, key !== undefined ? { headers: { authorization: `Bearer ${key}` } } : {});
  expect(r.status).to.equal(200);
  return await r.json() as ServeStatus;
}

describe('serve: /v1/status', function () {
  this.timeout(60_000);
  let model: ReturnType<typeof tinyModel>;
  before(() => { model = tinyModel(); });
  after(() => model.remove());

  it('shows the model, the queue, 429s and failures by code, and the engine\'s devices, jobs and cache', async () => {
    // Each token of a generation waits for the test's go, so the queue's state is known when it is read.
    let go!: () => void;
    let gate = new Promise<void>((r) => { go = r; });
    const engine: Engine = createEngine({ cacheDir: model.dir });
    const server: Server = createServer({
      modelId: 'tiny', maxQueue: 0, engine,
      open: async (): Promise<ServedModel> => {
        const m = await loadModel(model.path, { target: 'host', ctx: 64, engine });
        return {
          async *generate(r) { const it = m.generate(r); for (;;) { const n = await it.next(); if (n.done === true) return n.value; await gate; yield n.value; } },
          close: () => m.close(),
        };
      },
    });
    try {
      const url = await server.listen(0, '127.0.0.1');
      await server.loaded;
      const before = await status(url);
      expect(before.object).to.equal('status');
      expect(before.model).to.deep.equal({ id: 'tiny', state: 'ready', error: null });
      expect(before.queue).to.deep.equal({ running: 0, waiting: 0, slots: 1, maxQueue: 0, refused429: 0 });
      expect(before.failures).to.deep.equal({ total: 0, byCode: {}, last: [] });

      const running = post(url, REQ);
      while (server.inFlight < 1) await new Promise((r) => setImmediate(r));
      expect((await post(url, REQ)).status).to.equal(429);
      expect((await post(url, { ...REQ, model: 'other' })).status).to.equal(404);
      const during = await status(url);
      expect(during.queue).to.deep.equal({ running: 1, waiting: 0, slots: 1, maxQueue: 0, refused429: 1 });
      expect(during.failures.total).to.equal(2);
      expect(during.failures.byCode).to.deep.equal({ QueueFull: 1, model_not_found: 1 });
      expect(during.failures.last.map((f) => [f.status, f.code, f.path])).to.deep.equal([[429, 'QueueFull', '/v1/completions'], [404, 'model_not_found', '/v1/completions']]);
      expect(during.failures.last[0]!.message).to.match(/--max-queue 0/);

      go();
      gate = Promise.resolve();
      expect((await running).status).to.equal(200);
      const after = await status(url);
      expect(after.queue.running).to.equal(0);
      const e = after.engine!;
      expect(e.devices.map((d) => [d.kind, d.state, d.restarts, d.poisonedSince, d.running, d.waiting])).to.deep.equal([['host', 'ready', 0, null, 0, 0]]);
      // The model keeps its decode and its last prefill session open between requests.
      expect(e.devices[0]!.sessions).to.equal(2);
      expect(e.actors.map((a) => a.name).sort()).to.deep.equal(['cache', 'planner']);
      expect(e.jobs.failed).to.equal(0);
      // The prefill and decode programs were compiled and stored: entries on disk, and lookups counted.
      expect(e.cache!.entries).to.be.greaterThan(0);
      expect(e.cache!.bytes).to.be.greaterThan(0);
      expect(e.cache!.hitRate).to.be.a('number');
      expect(e.lastErrors).to.deep.equal([]);
    } finally { await server.close(); await engine.close(); }
  });

  it('counts a stream that fails after it began by its code', async () => {
    const server = createServer({
      modelId: 'tiny',
      open: async (): Promise<ServedModel> => {
        const m = await loadModel(model.path, { target: 'host', ctx: 64 });
        return {
          async *generate(r) { const it = m.generate(r); const n = await it.next(); if (n.done !== true) yield n.value; await it.return(undefined as never); throw new DeadlineExceeded(100); },
          close: () => m.close(),
        };
      },
    });
    try {
      const url = await server.listen(0, '127.0.0.1');
      await server.loaded;
      const r = await post(url, { ...REQ, stream: true });
      expect(r.status).to.equal(200);
      expect(await r.text()).to.match(/"code":"DeadlineExceeded"/);
      const st = await status(url);
      expect(st.failures.byCode).to.deep.equal({ DeadlineExceeded: 1 });
      expect(st.failures.last.map((f) => [f.status, f.code, f.path])).to.deep.equal([[500, 'DeadlineExceeded', '/v1/completions']]);
    } finally { await server.close(); }
  });

  it('shows the prefix cache\'s hits, reused tokens, blocks and bytes on /v1/status, the status page and /metrics; none with prefixCache false', async () => {
    const long = { ...REQ, prompt: 'hello world, '.repeat(8), max_tokens: 2 };
    const s = await startServer(model.path, { load: { ctx: 256, prefillChunk: 16, prefixCache: { bytes: 1 << 24, block: 8 } } });
    try {
      type Answer = { choices: { text: string }[]; usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } } };
      const first = await (await post(s.url, long)).json() as Answer;
      expect(first.usage.prompt_tokens_details.cached_tokens).to.equal(0);
      expect((await status(s.url)).prefixCache).to.include({ lookups: 1, hits: 0, reusedTokens: 0, budget: 1 << 24, block: 8 });
      const second = await (await post(s.url, long)).json() as Answer;
      expect(second.choices[0]!.text).to.equal(first.choices[0]!.text);
      const p = (await status(s.url)).prefixCache!;
      expect(second.usage.prompt_tokens_details.cached_tokens).to.equal(p.reusedTokens);
      expect(p.reusedTokens).to.be.lessThan(second.usage.prompt_tokens);
      expect(p).to.include({ lookups: 2, hits: 1 });
      expect(p.reusedTokens).to.be.greaterThan(0);
      expect(p.blocks).to.be.greaterThan(0);
      expect(p.bytes).to.be.greaterThan(0);
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      expect(metrics).to.match(/^npu_offload_prefix_cache_hits_total 1$/m);
      expect(metrics).to.match(new RegExp(`^npu_offload_prefix_cache_reused_tokens_total ${p.reusedTokens}$`, 'm'));
      expect(metrics).to.match(new RegExp(`^npu_offload_prefix_cache_bytes ${p.bytes}$`, 'm'));
      expect(await (await fetch(`${s.url}/status`)).text()).to.match(/Prefix cache/);
    } finally { await s.server.close(); }
    const off = await startServer(model.path, { load: { prefixCache: false } });
    try {
      await post(off.url, REQ);
      expect((await status(off.url)).prefixCache).to.equal(null);
      expect(await (await fetch(`${off.url}/metrics`)).text()).not.to.match(/prefix_cache/);
    } finally { await off.server.close(); }
  });

  it('without an engine it says so (engine null); with --api-key the pages need no key but /v1/status does', async () => {
    const s = await startServer(model.path, { apiKey: 'sesame' });
    try {
      for (const path of ['/', '/status']) {
        const r = await fetch(`${s.url}${path}`);
        expect(r.status, path).to.equal(200);
        expect(r.headers.get('content-type'), path).to.match(/^text\/html/);
        expect(await r.text(), path).to.match(/^<!doctype html>/);
      }
      expect((await fetch(`${s.url}/v1/status`)).status).to.equal(401);
      const st = await status(s.url, 'sesame');
      expect(st.engine).to.equal(null);
      expect(st.failures.byCode).to.deep.equal({ invalid_api_key: 1 });
    } finally { await s.server.close(); }
  });
});
