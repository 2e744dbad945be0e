import { expect } from 'chai';
import OpenAI from 'openai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { loadModel } from '../../src/model/qwen3/model.js';
import { createServer } from '../../src/serve/server.js';
import type { ServedModel } from '../../src/serve/model.js';
import { coldLoadAndRequestMs, startServer, tinyModel } from './helpers.js';

const REQ = { model: 'tiny', prompt: 'abc', max_tokens: 6, temperature: 0 };

describe('serve: keys, the queue, loading and a missed deadline', function () {
  this.timeout(60_000);
  let model: ReturnType<typeof tinyModel>;
  // One engine for the models here but the deadline test's (that one's engine injects the hang): a fresh
  // engine is not their subject. The server with a key serves the first two tests (neither changes it).
  let engine: Engine;
  let keyed: Promise<Awaited<ReturnType<typeof startServer>>> | undefined;
  const keyedServer = () => (keyed ??= startServer(model.path, { apiKey: 'sesame', load: { engine } }));
  before(() => { model = tinyModel(); engine = createEngine({}); });
  after(async () => {
    if (keyed !== undefined) await (await keyed).server.close();
    await engine.close();
    model.remove();
  });

  it('with --api-key a wrong key is 401 and the right one is served', async () => {
    const s = await keyedServer();
    const wrong = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: 'guess', maxRetries: 0 });
    const e = await wrong.models.list().catch((x: unknown) => x);
    expect(e).to.be.instanceOf(OpenAI.AuthenticationError);
    expect((await s.client.completions.create(REQ)).usage!.completion_tokens).to.equal(6);
  });

  it('the key guards every route but the pages and health, unknown paths included; without --api-key none is guarded', async () => {
    const s = await keyedServer();
    const plain = await startServer(model.path, { load: { engine } });
    try {
      const status = async (url: string, path: string, key?: string, body?: unknown) => (await fetch(`${url}${path}`, {
        ...(body !== undefined ? { method: 'POST', body: JSON.stringify(body) } : {}),
        headers: { ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      })).status;
      for (const open of ['/', '/status', '/favicon.ico', '/v1/health', '/status?x=1']) expect(await status(s.url, open), open).to.be.oneOf([200, 204]);
      const guarded: [string, unknown?][] = [['/v1/models'], ['/v1/status'], ['/metrics'], ['/v1/nothing'], ['/nothing'], ['/v1/chat/completions', {}], ['/v1/embeddings', {}]];
      for (const [path, body] of guarded) {
        expect(await status(s.url, path, undefined, body), `${path} without the key`).to.equal(401);
        expect(await status(s.url, path, 'guess', body), `${path} with a wrong key`).to.equal(401);
      }
      // With the key (and on a server without one) the same paths get their own answers.
      for (const url of [s.url, plain.url]) {
        expect(await status(url, '/metrics', 'sesame')).to.equal(200);
        expect(await status(url, '/v1/nothing', 'sesame')).to.equal(404);
        expect(await status(url, '/v1/chat/completions', 'sesame', {})).to.equal(400);
      }
    } finally { await plain.server.close(); }
  });

  it('past --max-queue waiting requests a request gets 429; the running and waiting ones are served', async () => {
    // Each token of the running generation waits for the test's go, so the queue's state is known.
    let go!: () => void;
    let tokenGate = new Promise<void>((r) => { go = r; });
    const server = createServer({
      modelId: 'tiny', maxQueue: 1,
      open: async (): Promise<ServedModel> => {
        const m = await loadModel(model.path, { target: 'host', ctx: 64, engine });
        return {
          async *generate(r) { const it = m.generate(r); for (;;) { const n = await it.next(); if (n.done === true) return n.value; await tokenGate; yield n.value; } },
          close: () => m.close(),
        };
      },
    });
    try {
      const url = await server.listen(0, '127.0.0.1');
      await server.loaded;
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
      const running = client.completions.create(REQ);
      const waiting = client.completions.create(REQ);
      while (server.inFlight < 2) await new Promise((r) => setImmediate(r));
      const full = await client.completions.create(REQ).catch((x: unknown) => x);
      expect(full).to.be.instanceOf(OpenAI.RateLimitError);
      expect((full as InstanceType<typeof OpenAI.RateLimitError>).code).to.equal('QueueFull');
      go();
      tokenGate = Promise.resolve();
      expect((await running).usage!.completion_tokens).to.equal(6);
      expect((await waiting).usage!.completion_tokens).to.equal(6);
    } finally { await server.close(); }
  });

  it('health answers 503 while the model loads, and requests 503 too; 200 once loaded', async () => {
    const m = tinyModel();
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const server = createServer({ modelId: 'tiny', open: async (): Promise<ServedModel> => { await gate; return loadModel(m.path, { target: 'host', ctx: 64, engine }); } });
    try {
      const url = await server.listen(0, '127.0.0.1');
      const h = await fetch(`${url}/v1/health`);
      expect(h.status).to.equal(503);
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
      const e = await client.completions.create(REQ).catch((x: unknown) => x);
      expect((e as InstanceType<typeof OpenAI.APIError>).status).to.equal(503);
      release();
      await server.loaded;
      expect((await fetch(`${url}/v1/health`)).status).to.equal(200);
      expect((await client.completions.create(REQ)).usage!.completion_tokens).to.equal(6);
    } finally { await server.close(); m.remove(); }
  });

  it('a step that misses its deadline fails that request with a typed 500, the model reloads and serves the next', async () => {
    // The 3rd step on the host device hangs: the first request's prefill and decode steps run, the second request's prefill hangs.
    const counter = new Int32Array(new SharedArrayBuffer(4));
    // Each load makes its own engine, as the server's default path does; the first one's hangs. A step's
    // deadline also bounds the load's device calls (a cold device worker's start among them), so it is
    // tied to a cold load and one request timed here first, on an engine without faults.
    const deadlineMs = Math.max(2000, 4 * await coldLoadAndRequestMs(model.path));
    let opens = 0;
    let reloadMay!: () => void;
    const reloadGate = new Promise<void>((r) => { reloadMay = r; });
    const server = createServer({
      modelId: 'tiny',
      open: async (): Promise<ServedModel> => {
        if (++opens === 2) await reloadGate;
        const engine: Engine = createEngine({ devices: { host: { plan: { counter, hang: [8] } } } });
        const m = await loadModel(model.path, { target: 'host', ctx: 64, engine, deadlineMs });
        return { generate: (r) => m.generate(r), close: async () => { await m.close(); await engine.close(); } };
      },
    });
    try {
      const url = await server.listen(0, '127.0.0.1');
      await server.loaded;
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
      const first = await client.completions.create(REQ);
      expect(first.usage!.completion_tokens).to.equal(6);
      const e = await client.completions.create(REQ).catch((x: unknown) => x);
      expect((e as InstanceType<typeof OpenAI.APIError>).status).to.equal(500);
      expect((e as InstanceType<typeof OpenAI.APIError>).code).to.equal('DeadlineExceeded');
      // The reload began when the request failed; health is 503 until it is done.
      expect(server.holder.state).to.equal('loading');
      expect((await fetch(`${url}/v1/health`)).status).to.equal(503);
      reloadMay();
      await server.holder.load();
      const r = await client.completions.create(REQ);
      expect(r.choices[0]!.text).to.equal(first.choices[0]!.text);
      expect(opens).to.equal(2);
    } finally { await server.close(); }
  });
});
