/**
 * The OpenAI-compatible server (fastify): health, models, chat completions and completions, streamed
 * as server-sent events or not. Up to `parallel` generations at a time (a model that batches them
 * decodes them in one step, model/qwen3/batch.ts; one that does not runs one at a time) behind a
 * bounded FIFO queue (p-queue): past `maxQueue` waiting requests a request gets 429. A client that goes away stops its generation at the
 * next token (or leaves the queue unserved). A generation whose device failed answers 500 with its
 * typed code and reloads the model; health answers 503 until it is back.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import PQueue from 'p-queue';
import type { Engine } from '../jobs/engine.js';
import type { GeneratedToken, GenerationResult } from '../model/qwen3/generate.js';
import type { GenerateRequest } from '../model/qwen3/model.js';
import { ModelHolder, needsReload, type ServedModel } from './model.js';
import { countStreamFailure, isPage, registerPages } from './pages.js';
import { ReasoningSplitter, splitReasoning, type Parted } from './reasoning.js';
import { Metrics } from './metrics.js';
import { registerEmbeddings } from './embeddings.js';
import type { Pooling } from '../model/qwen3/embed.js';
import { prefixCacheStats, ServeCounters } from './status.js';
import { DEFAULT_TOOL_CALL_FAMILY, readToolCalls, toolCallFormat, ToolCallReader, type ParsedCall, type ToolCallFormat, type ToolPiece } from './toolcalls.js';
import { failure, failureOf, finishOf, parseBody, type ServeRequest, type WireFailure } from './wire.js';

/** Options of createServer. */
export interface ServerOptions {
  /** The id `/v1/models` lists and requests name. */
  readonly modelId: string;
  /** Opens the model (again after a device failure). */
  readonly open: () => Promise<ServedModel>;
  /** Requests that may wait behind the running ones (default 16); one more is 429. */
  readonly maxQueue?: number;
  /**
   * Generations that run at once (default 4), as many as the model decodes together (its `slots`; a
   * model without them runs one at a time).
   */
  readonly parallel?: number;
  /** When set, every /v1 request but health needs `Authorization: Bearer KEY`. */
  readonly apiKey?: string;
  /** Where the server's own lines go (load failures, reloads). */
  readonly log?: (line: string) => void;
  /** The engine the model runs on, for /v1/status (its devices, actors, cache, last errors). */
  readonly engine?: Engine;
  /**
   * Origins a browser page may call from (`--cors ORIGIN...`; `*` any): their requests' answers carry
   * Access-Control-Allow-Origin and their preflights are answered. None by default.
   */
  readonly cors?: readonly string[];
  /** A Jinja chat template used over the model's own (`--chat-template FILE`, already read and checked). */
  readonly chatTemplate?: string;
  /** How /v1/embeddings pools a sequence's hidden states (`--pooling`, default mean). */
  readonly pooling?: Pooling;
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
  const parallel = o.parallel ?? 4;
  const queue = new PQueue({ concurrency: 1 });
  // The generations that run at once: `parallel`, at most the slots the model decodes together.
  const slots = (): number => {
    return Math.max(1, Math.min(parallel, holder.model?.slots ?? 1));
  };
  const full = (): WireFailure | undefined => {
    const n = slots();
    if (inFlight < n + maxQueue) return undefined;
    return failure(429, 'rate_limit_error', 'QueueFull', `${inFlight - n} requests are waiting behind the ${n === 1 ? 'running one' : `${n} running`}, the most this server holds (--max-queue ${maxQueue})`);
  };
  // Runs `work` in the queue, as many at once as the model's slots.
  const enqueue = <T>(work: () => Promise<T>) => {
    const n = slots();
    if (queue.concurrency !== n) queue.concurrency = n;
    return queue.add(work);
  };
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

  const cors = o.cors ?? [];
  app.addHook('onRequest', async (req, reply) => {
    const origin = req.headers.origin;
    const allowed = origin !== undefined && (cors.includes(origin) || cors.includes('*'));
    if (allowed) reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
    if (req.method !== 'OPTIONS') return;
    // A preflight: answered for the listed origins only, before the key is asked for (a browser sends none).
    if (!allowed) return send(reply, failure(403, 'invalid_request_error', 'CorsRefused', `the origin ${JSON.stringify(origin ?? null)} is not one this server answers (--cors)`));
    const asked = req.headers['access-control-request-headers'];
    return reply.code(204)
      .header('access-control-allow-methods', 'GET, POST, OPTIONS')
      .header('access-control-allow-headers', typeof asked === 'string' && asked !== '' ? asked : 'authorization, content-type')
      .header('access-control-max-age', '600')
      .send();
  });

  app.addHook('onRequest', async (req, reply) => {
    if (o.apiKey === undefined || req.url === '/v1/health' || isPage(req.url)) return;
    if (req.headers.authorization !== `Bearer ${o.apiKey}`) return send(reply, failure(401, 'invalid_request_error', 'invalid_api_key', 'a wrong or missing API key (Authorization: Bearer KEY)'));
  });

  const metrics = new Metrics();
  const live: Live = { metrics, kv: new Map() };
  app.addHook('onResponse', async (req, reply) => { metrics.request(req.routeOptions.url ?? 'unmatched', reply.statusCode); });
  app.get('/metrics', async (_req, reply) => {
    const m = holder.model as { ctx?: unknown } | undefined;
    // Each slot's cache holds ctx positions.
    const kvSize = typeof m?.ctx === 'number' ? m.ctx * slots() : undefined;
    let kvUsed = 0;
    const prefix = prefixCacheStats(holder.model);
    for (const n of live.kv.values()) kvUsed += n;
    return reply.type('text/plain; version=0.0.4; charset=utf-8').send(metrics.text({
      waiting: queue.size, running: queue.pending, slots: slots(), ready: holder.state === 'ready', kvUsed, ...(kvSize !== undefined ? { kvSize } : {}),
      ...(prefix !== null ? { prefix } : {}),
    }));
  });

  const counters = new ServeCounters();
  registerPages(app, { modelId: o.modelId, holder, maxQueue, counters, queue: () => ({ running: queue.pending, waiting: queue.size, slots: slots() }), ...(o.engine !== undefined ? { engine: o.engine } : {}) });

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
    try { r = parseBody(req.body, kind, o.chatTemplate); } catch (e) { return send(reply, failureOf(e)); }
    if (r.model !== o.modelId) return send(reply, failure(404, 'invalid_request_error', 'model_not_found', `no model ${JSON.stringify(r.model)} here (this server serves ${JSON.stringify(o.modelId)})`, 'model'));
    if (closing) return send(reply, failure(503, 'server_error', 'ShuttingDown', 'the server is shutting down'));
    if (holder.state === 'failed') return send(reply, failure(503, 'server_error', 'ModelFailed', `the model failed to load: ${failureOf(holder.error).body.error.message}`));
    if (holder.state !== 'ready') return send(reply, failure(503, 'server_error', 'ModelLoading', 'the model is loading; try again when /v1/health answers 200'));
    const refused = full();
    if (refused !== undefined) return send(reply, refused);
    inFlight++;
    let gone = false;
    reply.raw.on('close', () => { if (!reply.raw.writableFinished) gone = true; });
    const done = await enqueue(async () => {
      try { return await serveOne(); } finally { inFlight--; }
    });
    async function serveOne(): Promise<boolean> {
      if (gone) return true;
      if (closing) return false;
      const m = holder.model;
      if (m === undefined) { send(reply, failure(503, 'server_error', 'ModelLoading', 'the model is loading; try again when /v1/health answers 200')); return true; }
      try {
        await (r.stream ? streamed(kind, r, m, live, reply, () => gone) : whole(kind, r, m, live, reply, () => gone));
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
  registerEmbeddings(app, {
    modelId: o.modelId, pooling: o.pooling ?? 'mean',
    admit: () => {
      if (closing) return failure(503, 'server_error', 'ShuttingDown', 'the server is shutting down');
      if (holder.state === 'failed') return failure(503, 'server_error', 'ModelFailed', `the model failed to load: ${failureOf(holder.error).body.error.message}`);
      if (holder.state !== 'ready' || holder.model === undefined) return failure(503, 'server_error', 'ModelLoading', 'the model is loading; try again when /v1/health answers 200');
      return full() ?? { model: holder.model };
    },
    queued: async (work) => {
      inFlight++;
      return enqueue(async () => {
        try { return closing ? undefined : { value: await work() }; } finally { inFlight--; }
      });
    },
  });

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

/** A chat answer's message: a leading <think> block as `reasoning_content`, the rest `content`. */
function messageOf(text: string): Record<string, unknown> {
  const p = splitReasoning(text);
  return { role: 'assistant', content: p.content, ...(p.reasoning !== '' ? { reasoning_content: p.reasoning } : {}) };
}

/** How a response reads the calls its model writes on its own (tools given, tool_choice auto): the format, the tools' names, call ids. */
interface AutoTools {
  readonly format: ToolCallFormat;
  readonly names: ReadonlySet<string>;
  /** The next call's id, unique in the response (`call_<random>_<n>`). */
  id(): string;
}

function toolsReadAs(m: ServedModel, names: readonly string[]): AutoTools {
  const stem = `call_${randomUUID().replace(/-/g, '').slice(0, 16)}_`;
  let n = 0;
  return { format: toolCallFormat(m.toolCallFamily ?? DEFAULT_TOOL_CALL_FAMILY), names: new Set(names), id: () => `${stem}${n++}` };
}

function autoToolsOf(kind: Kind, r: ServeRequest, m: ServedModel): AutoTools | undefined {
  return kind !== 'chat' || r.autoTools === undefined ? undefined : toolsReadAs(m, r.autoTools);
}

/**
 * A forced tool call's answer, read as a model's own calls are, as OpenAI's `tool_calls`; undefined
 * when the text is not whole calls and nothing else (cut by max_tokens).
 */
function forcedCallsOf(text: string, r: ServeRequest, m: ServedModel): { id: string; type: 'function'; function: { name: string; arguments: string } }[] | undefined {
  if (r.toolCall === undefined) return undefined;
  const tools = toolsReadAs(m, r.toolCall);
  const read = readToolCalls(text, tools.format, tools.names);
  return read.calls.length === 0 || read.content !== null ? undefined : read.calls.map((c) => wireCall(c, tools.id()));
}

function wireCall(c: ParsedCall, id: string): { id: string; type: 'function'; function: { name: string; arguments: string } } {
  return { id, type: 'function', function: { name: c.name, arguments: c.arguments } };
}

/** A chat answer's message with the calls the model wrote read out of its content; undefined when it wrote none. */
function autoToolMessage(text: string, tools: AutoTools): Record<string, unknown> | undefined {
  const p = splitReasoning(text);
  const read = readToolCalls(p.content, tools.format, tools.names);
  if (read.calls.length === 0) return undefined;
  return { role: 'assistant', content: read.content, ...(p.reasoning !== '' ? { reasoning_content: p.reasoning } : {}), tool_calls: read.calls.map((c) => wireCall(c, tools.id())) };
}

/** Completions' top tokens as `{ token: logprob }`; two tokens of the same text (pieces of a character) keep the likelier. */
function topObject(top: readonly { token: string; logprob: number }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const y of top) if (!Object.hasOwn(out, y.token)) out[y.token] = y.logprob;
  return out;
}

/** The log probabilities of a choice's tokens in OpenAI's shapes: chat's `content` entries, completions' parallel arrays. */
class Logprobs {
  readonly #tokens: NonNullable<GeneratedToken['logprobs']>[] = [];
  #offset = 0;
  #offsets: number[] = [];
  constructor(private readonly kind: Kind) {}
  add(t: GeneratedToken): void {
    if (t.logprobs === undefined) return;
    this.#tokens.push(t.logprobs);
    this.#offsets.push(this.#offset);
    this.#offset += t.logprobs.token.length;
  }
  clear(): void { this.#tokens.length = 0; this.#offsets = []; }
  get wire(): Record<string, unknown> {
    const t = this.#tokens;
    if (this.kind === 'chat') {
      return {
        content: t.map((x) => ({ token: x.token, logprob: x.logprob, bytes: x.bytes, top_logprobs: x.top.map((y) => ({ token: y.token, logprob: y.logprob, bytes: y.bytes })) })),
        refusal: null,
      };
    }
    return {
      tokens: t.map((x) => x.token), token_logprobs: t.map((x) => x.logprob),
      top_logprobs: t.map((x) => topObject(x.top)), text_offset: [...this.#offsets],
    };
  }
}

/** Choice j of a prompt: the prompt's request with seed + j (choice 0 is the request as given). */
function choiceRequest(g: GenerateRequest, j: number): GenerateRequest {
  return j === 0 ? g : { ...g, seed: (g.seed ?? 0) + j };
}

/** Every choice of a request in order: prompt p's choice j has index p * n + j. */
function* choicesOf(r: ServeRequest): Generator<{ index: number; first: boolean; request: GenerateRequest }> {
  for (const [p, g] of r.prompts.entries()) for (let j = 0; j < r.n; j++) yield { index: p * r.n + j, first: j === 0, request: choiceRequest(g, j) };
}

/** Usage summed over choices: each prompt's tokens counted once, every choice's generated tokens. */
class Usage {
  prompt = 0;
  completion = 0;
  // Of the prompt tokens counted, those taken from the prefix cache (OpenAI's prompt_tokens_details.cached_tokens).
  cached = 0;
  constructor(private readonly metrics: Metrics) {}
  add(res: GenerationResult, first: boolean): void {
    const prompt = first ? res.promptTokens : 0;
    this.prompt += prompt;
    if (first) this.cached += res.cachedTokens ?? 0;
    this.completion += res.ids.length;
    this.metrics.promptTokens += prompt;
    this.metrics.generatedTokens += res.ids.length;
  }
  get wire() { return { prompt_tokens: this.prompt, completion_tokens: this.completion, total_tokens: this.prompt + this.completion, prompt_tokens_details: { cached_tokens: this.cached } }; }
}

/** What the metrics see of the running generations. */
interface Live {
  readonly metrics: Metrics;
  /** KV cache positions each running generation holds. */
  readonly kv: Map<symbol, number>;
}

/** A generation whose token times (the first, then between tokens) and cache positions are observed. */
async function* observed(m: ServedModel, g: GenerateRequest, live: Live): AsyncGenerator<GeneratedToken, GenerationResult, void> {
  const it = m.generate(g);
  let last = performance.now();
  let first = true;
  const self = Symbol('generation');
  try {
    for (;;) {
      const n = await it.next();
      if (n.done === true) return n.value;
      const now = performance.now();
      (first ? live.metrics.ttft : live.metrics.perToken).observe((now - last) / 1000);
      first = false;
      last = now;
      if (n.value.position !== undefined) live.kv.set(self, n.value.position + 1);
      yield n.value;
    }
  } finally {
    live.kv.delete(self);
    await it.return(undefined as never);
  }
}

/** Runs a generation to its end, or to the next token after the client left. */
async function run(m: ServedModel, g: GenerateRequest, live: Live, gone: () => boolean, onToken: (t: GeneratedToken) => void): Promise<GenerationResult | undefined> {
  const it = observed(m, g, live);
  for (;;) {
    const n = await it.next();
    if (n.done === true) return n.value;
    if (gone()) { await it.return(undefined as never); return undefined; }
    onToken(n.value);
  }
}

async function whole(kind: Kind, r: ServeRequest, m: ServedModel, live: Live, reply: FastifyReply, gone: () => boolean): Promise<void> {
  const usage = new Usage(live.metrics);
  const choices: Record<string, unknown>[] = [];
  const tools = autoToolsOf(kind, r, m);
  for (const c of choicesOf(r)) {
    const lps = new Logprobs(kind);
    const res = await run(m, c.request, live, gone, (t) => lps.add(t));
    if (res === undefined) return;
    usage.add(res, c.first);
    const finish_reason = finishOf(res.finishReason);
    const logprobs = c.request.logprobs !== undefined ? lps.wire : null;
    const calls = forcedCallsOf(res.text, r, m);
    const written = tools !== undefined ? autoToolMessage(res.text, tools) : undefined;
    if (calls !== undefined) choices.push({ index: c.index, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls', logprobs });
    else if (written !== undefined) choices.push({ index: c.index, message: written, finish_reason: 'tool_calls', logprobs });
    else choices.push(kind === 'chat'
      ? { index: c.index, message: messageOf(res.text), finish_reason, logprobs }
      : { index: c.index, text: res.text, finish_reason, logprobs });
  }
  const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  await reply.send({ id, object: kind === 'chat' ? 'chat.completion' : 'text_completion', created, model: r.model, choices, usage: usage.wire });
}

async function streamed(kind: Kind, r: ServeRequest, m: ServedModel, live: Live, reply: FastifyReply, gone: () => boolean): Promise<void> {
  const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const object = kind === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  const usage = new Usage(live.metrics);
  let out: FastifyReply['raw'] | undefined;
  const tools = autoToolsOf(kind, r, m);
  for (const c of choicesOf(r)) {
    const chunk = (choice: Record<string, unknown>) =>
      `data: ${JSON.stringify({ id, object, created, model: r.model, choices: [{ index: c.index, ...choice }] })}\n\n`;
    const it = observed(m, c.request, live);
    // The first step (the prefill) runs before the headers go, so a prompt past the context still gets its 400.
    let n = await it.next();
    if (out === undefined) {
      // Headers set by the hooks (CORS) go with the stream's own.
      const headers = Object.fromEntries(Object.entries(reply.getHeaders()).filter((e): e is [string, string | number | string[]] => e[1] !== undefined));
      reply.hijack();
      out = reply.raw;
      out.writeHead(200, { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    }
    const o = out;
    if (kind === 'chat') o.write(chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null }));
    const thinking = new ReasoningSplitter();
    // With tools the model may call on its own, content goes through their reader: a call is held back
    // from its opening tag and sent as one tool-call delta when its block closes.
    const reader = tools !== undefined ? new ToolCallReader(tools.format, tools.names) : undefined;
    let called = 0;
    const contentPieces = (text: string): ToolPiece[] => (reader === undefined ? (text !== '' ? [{ text }] : []) : reader.push(text));
    // Pieces in order; the first chunk written carries `extra` (a token's logprobs); returns whether one was.
    const writePieces = (pieces: readonly ToolPiece[], extra: Record<string, unknown> = {}): boolean => {
      let first = true;
      for (const x of pieces) {
        const delta = 'text' in x ? { content: x.text } : { tool_calls: [{ index: x.index, ...wireCall(x.call, tools!.id()) }] };
        if ('call' in x) called++;
        o.write(chunk({ delta, ...(first ? extra : {}), finish_reason: null }));
        first = false;
      }
      return !first;
    };
    const write = (p: Parted) => {
      if (p.reasoning !== '') o.write(chunk({ delta: { reasoning_content: p.reasoning }, finish_reason: null }));
      writePieces(contentPieces(p.content));
    };
    const piece = (text: string) => (kind === 'chat' ? write(thinking.push(text)) : o.write(chunk({ text, finish_reason: null })));
    // With logprobs, one chunk a token, with that token's log probabilities and the text it made certain.
    const withLogprobs = c.request.logprobs !== undefined;
    const lps = new Logprobs(kind);
    const token = (t: GeneratedToken) => {
      lps.clear();
      lps.add(t);
      if (kind === 'chat') {
        const p = thinking.push(t.text);
        if (reader === undefined) o.write(chunk({ delta: { content: p.content, ...(p.reasoning !== '' ? { reasoning_content: p.reasoning } : {}) }, logprobs: lps.wire, finish_reason: null }));
        else {
          if (p.reasoning !== '') o.write(chunk({ delta: { reasoning_content: p.reasoning }, finish_reason: null }));
          if (!writePieces(contentPieces(p.content), { logprobs: lps.wire })) o.write(chunk({ delta: { content: '' }, logprobs: lps.wire, finish_reason: null }));
        }
      } else o.write(chunk({ text: t.text, logprobs: lps.wire, finish_reason: null }));
    };
    let sent = '';
    try {
      while (n.done !== true) {
        if (gone()) { await it.return(undefined as never); return; }
        // A forced tool call is sent whole at its end, as one tool-call delta.
        if (r.toolCall !== undefined) { /* held */ } else if (withLogprobs) { token(n.value); sent += n.value.text; } else if (n.value.text !== '') { piece(n.value.text); sent += n.value.text; }
        n = await it.next();
      }
    } catch (e) {
      o.write(`data: ${JSON.stringify(failureOf(e).body)}\n\n`);
      o.end();
      throw e;
    }
    const res = n.value;
    usage.add(res, c.first);
    const finish_reason = finishOf(res.finishReason);
    const calls = forcedCallsOf(res.text, r, m);
    if (calls !== undefined) {
      o.write(chunk({ delta: { tool_calls: calls.map((x, index) => ({ index, ...x })) }, finish_reason: null }));
      o.write(chunk({ delta: {}, finish_reason: 'tool_calls' }));
      continue;
    }
    // Text held back while it might have begun a stop string comes with the end.
    if (res.text.length > sent.length) piece(res.text.slice(sent.length));
    if (kind === 'chat') write(thinking.end());
    if (reader !== undefined) writePieces(reader.end());
    o.write(kind === 'chat' ? chunk({ delta: {}, finish_reason: called > 0 ? 'tool_calls' : finish_reason }) : chunk({ text: '', finish_reason }));
  }
  if (out === undefined) return;
  if (r.includeUsage) out.write(`data: ${JSON.stringify({ id, object, created, model: r.model, choices: [], usage: usage.wire })}\n\n`);
  out.write('data: [DONE]\n\n');
  out.end();
}
