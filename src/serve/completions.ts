/**
 * `POST /v1/chat/completions` and `POST /v1/completions`, a plugin: a request checked (wire.ts), let in
 * or refused (state.ts), run in the server's queue, answered whole or streamed as server-sent events.
 * A client that goes away stops its generation at the next token (or leaves the queue unserved). A
 * generation whose device failed answers 500 with its typed code and reloads the model.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { GeneratedToken, GenerationResult } from '../model/qwen3/generate.js';
import type { GenerateRequest } from '../model/qwen3/model.js';
import { PromptShare } from '../model/qwen3/share.js';
import { needsReload, type ServedModel } from './model.js';
import { countStreamFailure } from './pages.js';
import { ReasoningSplitter, splitReasoning, type Parted } from './reasoning.js';
import type { Metrics } from './metrics.js';
import { send } from './hooks.js';
import { MODEL_LOADING, SHUTTING_DOWN, type Live } from './state.js';
import { DEFAULT_TOOL_CALL_FAMILY, readToolCalls, toolCallFormat, ToolCallReader, type ParsedCall, type ToolCallFormat, type ToolPiece } from './toolcalls.js';
import { failure, failureOf, finishOf, parseBody, type ServeRequest } from './wire.js';

type Kind = 'chat' | 'completions';

/** The two routes. */
export const completionRoutes: FastifyPluginAsync = async (app) => {
  const s = app.served;
  const { holder, counters, live } = s;
  const handle = (kind: Kind) => async (req: FastifyRequest, reply: FastifyReply) => {
    let r: ServeRequest;
    try { r = parseBody(req.body, kind, s.options.chatTemplate); } catch (e) { return send(reply, failureOf(e)); }
    if (r.model !== s.modelId) return send(reply, failure(404, 'invalid_request_error', 'model_not_found', `no model ${JSON.stringify(r.model)} here (this server serves ${JSON.stringify(s.modelId)})`, 'model'));
    const refused = s.refusal();
    if (refused !== undefined) return send(reply, refused);
    s.inFlight++;
    let gone = false;
    reply.raw.on('close', () => { if (!reply.raw.writableFinished) gone = true; });
    const done = await s.enqueue(async () => {
      try { return await serveOne(); } finally { s.inFlight--; }
    });
    async function serveOne(): Promise<boolean> {
      if (gone) return true;
      if (s.closing) return false;
      const m = holder.model;
      if (m === undefined) { send(reply, MODEL_LOADING); return true; }
      try {
        await (r.stream ? streamed(kind, r, m, live, reply, () => gone) : whole(kind, r, m, live, reply, () => gone));
      } catch (e) {
        if (needsReload(e)) { s.log(`a generation failed (${failureOf(e).body.error.code}); reloading the model`); void holder.load(); }
        if (!reply.sent && !reply.raw.headersSent) send(reply, failureOf(e));
        else { countStreamFailure(counters, req.url, e); reply.raw.end(); }
      }
      return true;
    }
    if (!done) return send(reply, SHUTTING_DOWN);
    return reply;
  };
  app.post('/v1/chat/completions', handle('chat'));
  app.post('/v1/completions', handle('completions'));
};

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

/** Every choice of a request in order: prompt p's choice j has index p * n + j; a prompt's n choices share its prefill (model/qwen3/share.ts). */
function* choicesOf(r: ServeRequest): Generator<{ index: number; first: boolean; request: GenerateRequest; share?: PromptShare }> {
  for (const [p, g] of r.prompts.entries()) {
    const share = r.n > 1 ? { share: new PromptShare() } : {};
    for (let j = 0; j < r.n; j++) yield { index: p * r.n + j, first: j === 0, request: choiceRequest(g, j), ...share };
  }
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

/** A generation whose token times (the first, then between tokens) and cache positions are observed. */
async function* observed(m: ServedModel, g: GenerateRequest, live: Live, share?: PromptShare): AsyncGenerator<GeneratedToken, GenerationResult, void> {
  const it = share === undefined ? m.generate(g) : m.generate(g, { share });
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
async function run(m: ServedModel, g: GenerateRequest, live: Live, gone: () => boolean, onToken: (t: GeneratedToken) => void, share?: PromptShare): Promise<GenerationResult | undefined> {
  const it = observed(m, g, live, share);
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
  // The choices run at once (sequences of the batch, a prompt's sharing its prefill); one failing ends
  // the others at their next token, and the answer waits for them to end (what they hold freed).
  let ended = false;
  const over = () => ended || gone();
  const settled = await Promise.allSettled([...choicesOf(r)].map(async (c) => {
    const lps = new Logprobs(kind);
    try {
      return { c, lps, res: await run(m, c.request, live, over, (t) => lps.add(t), c.share) };
    } catch (e) {
      ended = true;
      throw e;
    }
  }));
  for (const x of settled) if (x.status === 'rejected') throw x.reason;
  for (const x of settled) {
    if (x.status === 'rejected') continue;
    const { c, lps, res } = x.value;
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
    const it = observed(m, c.request, live, c.share);
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
