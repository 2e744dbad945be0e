/**
 * The OpenAI-compatible server (fastify): health, models, chat completions and completions, streamed
 * as server-sent events or not. One generation at a time behind a bounded FIFO queue (p-queue): past
 * `maxQueue` waiting requests a request gets 429. A client that goes away stops its generation at the
 * next token (or leaves the queue unserved). A generation whose device failed answers 500 with its
 * typed code and reloads the model; health answers 503 until it is back.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import PQueue from 'p-queue';
import type { Engine } from '../jobs/engine.js';
import type { GeneratedToken, GenerationResult } from '../model/qwen3/generate.js';
import { ModelHolder, needsReload, type ServedModel } from './model.js';
import { countStreamFailure, isPage, registerPages } from './pages.js';
import { ServeCounters } from './status.js';
import { failure, failureOf, finishOf, parseBody, type ServeRequest, type WireFailure } from './wire.js';

/** Options of createServer. */
export interface ServerOptions {
  /** The id `/v1/models` lists and requests name. */
  readonly modelId: string;
  /** Opens the model (again after a device failure). */
  readonly open: () => Promise<ServedModel>;
  /** Requests that may wait behind the running one (default 16); one more is 429. */
  readonly maxQueue?: number;
  /** When set, every /v1 request but health needs `Authorization: Bearer KEY`. */
  readonly apiKey?: string;
  /** Where the server's own lines go (load failures, reloads). */
  readonly log?: (line: string) => void;
  /** The engine the model runs on, for /v1/status (its devices, actors, cache, last errors). */
  readonly engine?: Engine;
}

/** A running server. */
export interface Server {
  readonly app: FastifyInstance;
  readonly holder: ModelHolder;
  /** Resolves when the model has loaded (or failed to). */
  readonly loaded: Promise<void>;
  /** Requests accepted and not yet answered (the running one and those waiting). */
  readonly inFlight: number;
  /** The server's own counters (429 refusals, failed requests by code) that /v1/status shows. */
  readonly counters: ServeCounters;
  /** Listens; resolves with the URL (`http://host:port`). */
  listen(port: number, host: string): Promise<string>;
  /** Stops taking requests, cancels the waiting ones, lets the running one finish, closes the model. */
  close(): Promise<void>;
}

type Kind = 'chat' | 'completions';

function send(reply: FastifyReply, f: WireFailure): FastifyReply {
  return reply.code(f.status).send(f.body);
}

/** Creates the server and starts loading its model. */
export function createServer(o: ServerOptions): Server {
  const log = o.log ?? (() => undefined);
  const maxQueue = o.maxQueue ?? 16;
  const holder = new ModelHolder(o.modelId, o.open, log);
  const queue = new PQueue({ concurrency: 1 });
  let closing = false;
  // Requests accepted and not yet answered: the running one and those waiting.
  let inFlight = 0;
  const app = Fastify({ logger: false, bodyLimit: 8 * 1024 * 1024 });

  app.setErrorHandler((e: { statusCode?: number; message: string; code?: string }, _req, reply) => {
    // Fastify's own refusals (a body that is not JSON, a wrong content type) keep their 4xx status.
    const status = e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500 ? e.statusCode : 500;
    if (status < 500) return send(reply, failure(status, 'invalid_request_error', e.code ?? 'InvalidRequest', `the body: ${e.message}`, 'body'));
    return send(reply, failureOf(e));
  });
  app.setNotFoundHandler((req, reply) => send(reply, failure(404, 'invalid_request_error', 'NotFound', `no route ${req.method} ${req.url}`)));

  app.addHook('onRequest', async (req, reply) => {
    if (o.apiKey === undefined || req.url === '/v1/health' || isPage(req.url)) return;
    if (req.headers.authorization !== `Bearer ${o.apiKey}`) return send(reply, failure(401, 'invalid_request_error', 'invalid_api_key', 'a wrong or missing API key (Authorization: Bearer KEY)'));
  });

  const counters = new ServeCounters();
  registerPages(app, { modelId: o.modelId, holder, maxQueue, counters, queue: () => ({ running: queue.pending, waiting: queue.size }), ...(o.engine !== undefined ? { engine: o.engine } : {}) });

  app.get('/v1/health', async (_req, reply) => {
    // From the moment a stop begins, so that a load balancer stops sending requests here.
    if (closing) return reply.code(503).send({ status: 'stopping', model: o.modelId, ...failure(503, 'server_error', 'ShuttingDown', 'the server is shutting down').body });
    const s = holder.state;
    if (s === 'ready') return { status: 'ok', model: o.modelId };
    const why = s === 'loading' ? 'the model is loading' : `the model failed to load: ${failureOf(holder.error).body.error.message}`;
    return reply.code(503).send({ status: s, model: o.modelId, ...failure(503, 'server_error', s === 'loading' ? 'ModelLoading' : 'ModelFailed', why).body });
  });

  app.get('/v1/models', async () => ({ object: 'list', data: [{ id: o.modelId, object: 'model', created: 0, owned_by: 'npu-offload' }] }));

  const handle = (kind: Kind) => async (req: FastifyRequest, reply: FastifyReply) => {
    let r: ServeRequest;
    try { r = parseBody(req.body, kind); } catch (e) { return send(reply, failureOf(e)); }
    if (r.model !== o.modelId) return send(reply, failure(404, 'invalid_request_error', 'model_not_found', `no model ${JSON.stringify(r.model)} here (this server serves ${JSON.stringify(o.modelId)})`, 'model'));
    if (closing) return send(reply, failure(503, 'server_error', 'ShuttingDown', 'the server is shutting down'));
    if (holder.state === 'failed') return send(reply, failure(503, 'server_error', 'ModelFailed', `the model failed to load: ${failureOf(holder.error).body.error.message}`));
    if (holder.state !== 'ready') return send(reply, failure(503, 'server_error', 'ModelLoading', 'the model is loading; try again when /v1/health answers 200'));
    if (inFlight > maxQueue) return send(reply, failure(429, 'rate_limit_error', 'QueueFull', `${inFlight - 1} requests are waiting behind the running one, the most this server holds (--max-queue ${maxQueue})`));
    inFlight++;
    let gone = false;
    reply.raw.on('close', () => { if (!reply.raw.writableFinished) gone = true; });
    const done = await queue.add(async () => {
      try { return await serveOne(); } finally { inFlight--; }
    });
    async function serveOne(): Promise<boolean> {
      if (gone) return true;
      if (closing) return false;
      const m = holder.model;
      if (m === undefined) { send(reply, failure(503, 'server_error', 'ModelLoading', 'the model is loading; try again when /v1/health answers 200')); return true; }
      try {
        await (r.stream ? streamed(kind, r, m, reply, () => gone) : whole(kind, r, m, reply, () => gone));
      } catch (e) {
        if (needsReload(e)) { log(`a generation failed (${failureOf(e).body.error.code}); reloading the model`); void holder.load(); }
        if (!reply.sent && !reply.raw.headersSent) send(reply, failureOf(e));
        else { countStreamFailure(counters, req.url, e); reply.raw.end(); }
      }
      return true;
    }
    if (done !== true) return send(reply, failure(503, 'server_error', 'ShuttingDown', 'the server is shutting down'));
    return reply;
  };
  app.post('/v1/chat/completions', handle('chat'));
  app.post('/v1/completions', handle('completions'));

  const loaded = holder.load();
  return {
    app, holder, loaded, counters,
    get inFlight() { return inFlight; },
    async listen(port, host) { return app.listen({ port, host }); },
    async close() {
      closing = true;
      await queue.onIdle();
      await app.close();
      await holder.close();
    },
  };
}

function usage(res: GenerationResult) {
  return { prompt_tokens: res.promptTokens, completion_tokens: res.ids.length, total_tokens: res.promptTokens + res.ids.length };
}

/** Runs a generation to its end, or to the next token after the client left. */
async function run(m: ServedModel, r: ServeRequest, gone: () => boolean, onToken: (t: GeneratedToken) => void): Promise<GenerationResult | undefined> {
  const it = m.generate(r.generate);
  for (;;) {
    const n = await it.next();
    if (n.done === true) return n.value;
    if (gone()) { await it.return(undefined as never); return undefined; }
    onToken(n.value);
  }
}

async function whole(kind: Kind, r: ServeRequest, m: ServedModel, reply: FastifyReply, gone: () => boolean): Promise<void> {
  const res = await run(m, r, gone, () => undefined);
  if (res === undefined) return;
  const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const finish_reason = finishOf(res.finishReason);
  const choice = kind === 'chat'
    ? { index: 0, message: { role: 'assistant', content: res.text }, finish_reason, logprobs: null }
    : { index: 0, text: res.text, finish_reason, logprobs: null };
  await reply.send({ id, object: kind === 'chat' ? 'chat.completion' : 'text_completion', created, model: r.model, choices: [choice], usage: usage(res) });
}

async function streamed(kind: Kind, r: ServeRequest, m: ServedModel, reply: FastifyReply, gone: () => boolean): Promise<void> {
  const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const object = kind === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  const chunk = (choice: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id, object, created, model: r.model, choices: [{ index: 0, ...choice }], ...extra })}\n\n`;
  const it = m.generate(r.generate);
  // The first step (the prefill) runs before the headers go, so a prompt past the context still gets its 400.
  const first = await it.next();
  reply.hijack();
  const out = reply.raw;
  out.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  if (kind === 'chat') out.write(chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null }));
  const piece = (text: string) => out.write(kind === 'chat' ? chunk({ delta: { content: text }, finish_reason: null }) : chunk({ text, finish_reason: null }));
  let n = first;
  let sent = '';
  try {
    while (n.done !== true) {
      if (gone()) { await it.return(undefined as never); return; }
      if (n.value.text !== '') { piece(n.value.text); sent += n.value.text; }
      n = await it.next();
    }
  } catch (e) {
    out.write(`data: ${JSON.stringify(failureOf(e).body)}\n\n`);
    out.end();
    throw e;
  }
  const res = n.value;
  const finish_reason = finishOf(res.finishReason);
  // Text held back while it might have begun a stop string comes with the end.
  if (res.text.length > sent.length) piece(res.text.slice(sent.length));
  out.write(kind === 'chat' ? chunk({ delta: {}, finish_reason }) : chunk({ text: '', finish_reason }));
  if (r.includeUsage) out.write(`data: ${JSON.stringify({ id, object, created, model: r.model, choices: [], usage: usage(res) })}\n\n`);
  out.write('data: [DONE]\n\n');
  out.end();
}
