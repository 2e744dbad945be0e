/**
 * Tool calls the model writes on its own (tool_choice auto): the reader of Qwen's `<tool_call>` blocks,
 * fed whole and piece by piece, and the server's answers through the official client, from a scripted
 * model (a random-weight model does not write a tool call by itself) that writes a given text in pieces.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import type { GeneratedToken, GenerationResult } from '../../src/model/qwen3/generate.js';
import type { GenerateRequest } from '../../src/model/qwen3/model.js';
import type { ServedModel } from '../../src/serve/model.js';
import { createServer, type Server } from '../../src/serve/server.js';
import { readToolCalls, TOOL_CALL_FORMATS, ToolCallReader, type ToolPiece } from '../../src/serve/toolcalls.js';

const QWEN = TOOL_CALL_FORMATS['qwen']!;
const NAMES = new Set(['get_weather', 'get_time']);
const CALL_A = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}\n</tool_call>';
const CALL_B = '<tool_call>\n{"name": "get_time", "arguments": {"zone": "CET"}}\n</tool_call>';
const BAD_JSON = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"\n</tool_call>';
const UNKNOWN = '<tool_call>\n{"name": "launch", "arguments": {}}\n</tool_call>';
const TWO = `Let me check.\n\n${CALL_A}\n${CALL_B}`;

/** The reader fed `text` in pieces of `size` characters: its text joined, its calls. */
function readInPieces(text: string, size: number): { content: string; calls: string[] } {
  const r = new ToolCallReader(QWEN, NAMES);
  const pieces: ToolPiece[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(...r.push(text.slice(i, i + size)));
  pieces.push(...r.end());
  let content = '';
  const calls: string[] = [];
  for (const p of pieces) if ('text' in p) content += p.text; else calls.push(`${p.index}:${p.call.name}:${p.call.arguments}`);
  return { content, calls };
}

describe('serve: tool calls read from the answer (Qwen <tool_call>)', () => {
  it('reads each block as a call; the text outside stays content, null when there is none', () => {
    const two = readToolCalls(TWO, QWEN, NAMES);
    expect(two.content).to.equal('Let me check.');
    expect(two.calls).to.deep.equal([
      { name: 'get_weather', arguments: '{"city":"Oslo","days":2}' },
      { name: 'get_time', arguments: '{"zone":"CET"}' },
    ]);
    expect(readToolCalls(CALL_A, QWEN, NAMES).content).to.equal(null);
    // No arguments is an empty object.
    expect(readToolCalls('<tool_call>{"name": "get_time"}</tool_call>', QWEN, NAMES).calls).to.deep.equal([{ name: 'get_time', arguments: '{}' }]);
  });

  it('negative controls: JSON that does not parse, a name that is not a tool, an unclosed block stay text', () => {
    for (const text of [BAD_JSON, UNKNOWN, CALL_A.slice(0, 40), `ok \n${CALL_A.slice(0, 40)}`, `a\n${UNKNOWN}\nb`, 'no calls here', '<tool_call>["get_time"]</tool_call>']) {
      const r = readToolCalls(text, QWEN, NAMES);
      expect(r.calls, text).to.deep.equal([]);
      expect(r.content, text).to.equal(text);
    }
    // A bad block beside a good one: only the good one is a call.
    const mixed = readToolCalls(`${BAD_JSON}\n${CALL_B}`, QWEN, NAMES);
    expect(mixed.calls.map((c) => c.name)).to.deep.equal(['get_time']);
    expect(mixed.content).to.equal(BAD_JSON);
    // A malformed block (JSON that does not parse) is not a call: the control that the reader does parse.
    expect(readToolCalls(CALL_A.replace('"Oslo"', 'Oslo'), QWEN, NAMES).calls).to.deep.equal([]);
  });

  it('fed piece by piece (every piece size), gives the same text and calls as whole', () => {
    for (const text of [TWO, `${CALL_A} and after`, BAD_JSON, `x <tool_ca`, `${CALL_B}\n${UNKNOWN}`, 'a < b <tool_call> c', `ok \n${CALL_A.slice(0, 40)}`, `a\n${UNKNOWN}\nb`]) {
      const whole = readInPieces(text, text.length);
      for (let size = 1; size <= 13; size++) expect(readInPieces(text, size), `${JSON.stringify(text)} by ${size}`).to.deep.equal(whole);
    }
  });

  it('holds back nothing but a possible tag: text before a call comes out before the block closes', () => {
    const r = new ToolCallReader(QWEN, NAMES);
    expect(r.push('Hello <tool')).to.deep.equal([{ text: 'Hello' }]);
    expect(r.push('_call>\n{"name": "get_time", "arguments": {}}')).to.deep.equal([]);
    expect(r.push('\n</tool_call>')).to.deep.equal([{ call: { name: 'get_time', arguments: '{}' }, index: 0 }]);
    expect(r.end()).to.deep.equal([]);
  });
});

/** A model that writes, for a chat whose last message is a key of `scripts`, that text in 5-character tokens. */
function scriptedModel(scripts: Record<string, string>): ServedModel & { seen: GenerateRequest[] } {
  const seen: GenerateRequest[] = [];
  return {
    seen,
    async close() { /* nothing held */ },
    async *generate(g: GenerateRequest): AsyncGenerator<GeneratedToken, GenerationResult, void> {
      seen.push(g);
      const last = g.messages?.[g.messages.length - 1]?.content;
      const text = scripts[typeof last === 'string' ? last : ''] ?? '';
      const ids: number[] = [];
      for (let i = 0; i < text.length; i += 5) { ids.push(i); yield { id: i, text: text.slice(i, i + 5) }; }
      return { ids, text, promptTokens: 3, finishReason: 'eos', ranOn: [], timings: { prefillMs: 0, decodeMs: 0, prefillTokS: 0, decodeTokS: 0, decodeSteps: ids.length } };
    },
  };
}

const TOOLS = [
  { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } } },
  { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } },
];

interface Call { id: string; name: string; arguments: string }

describe('serve: tool_choice auto, calls the model writes (official client, scripted model)', function () {
  this.timeout(60_000);
  let server: Server;
  let client: OpenAI;
  const model = scriptedModel({ two: TWO, bad: `${BAD_JSON} then text`, think: `<think>\nhmm\n</think>\n\n${CALL_B}`, cut: `ok ${CALL_A.slice(0, 30)}` });
  before(async () => {
    server = createServer({ modelId: 'tiny', open: async () => model });
    const url = await server.listen(0, '127.0.0.1');
    await server.loaded;
    client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0 });
  });
  after(async () => { await server.close(); });

  const whole = async (content: string, tools: boolean) => {
    const r = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content }], ...(tools ? { tools: TOOLS } : {}) } as never) as OpenAI.ChatCompletion;
    const c = r.choices[0]!;
    const calls: Call[] = (c.message.tool_calls ?? []).map((t) => { const f = t as OpenAI.ChatCompletionMessageFunctionToolCall; expect(f.type).to.equal('function'); return { id: f.id, name: f.function.name, arguments: f.function.arguments }; });
    return { content: c.message.content, calls, finish: c.finish_reason, reasoning: (c.message as { reasoning_content?: string }).reasoning_content };
  };
  const streamed = async (content: string, tools: boolean, extra: Record<string, unknown> = {}) => {
    const s = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content }], stream: true, ...(tools ? { tools: TOOLS } : {}), ...extra } as never) as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>;
    let text = '';
    let finish: string | null = null;
    const calls: (Call & { index: number })[] = [];
    for await (const ch of s) {
      const d = ch.choices[0]!;
      text += d.delta.content ?? '';
      for (const t of d.delta.tool_calls ?? []) calls.push({ index: t.index, id: t.id!, name: t.function!.name!, arguments: t.function!.arguments! });
      finish = d.finish_reason ?? finish;
    }
    return { content: text, calls, finish };
  };

  it('the calls answer as message.tool_calls (ids unique, arguments JSON strings), the text outside as content', async () => {
    const r = await whole('two', true);
    expect(r.finish).to.equal('tool_calls');
    expect(r.content).to.equal('Let me check.');
    expect(r.calls.map((c) => [c.name, JSON.parse(c.arguments) as unknown])).to.deep.equal([['get_weather', { city: 'Oslo', days: 2 }], ['get_time', { zone: 'CET' }]]);
    expect(new Set(r.calls.map((c) => c.id)).size).to.equal(2);
    for (const c of r.calls) expect(c.id).to.match(/^call_/);
    // After a <think> block: reasoning apart, the call read from the content.
    const t = await whole('think', true);
    expect(t).to.deep.include({ content: null, finish: 'tool_calls', reasoning: 'hmm' });
    expect(t.calls.map((c) => c.name)).to.deep.equal(['get_time']);
  });

  it('streamed: the same text and calls, each call one tool-call delta with its index', async () => {
    const a = await whole('two', true);
    const b = await streamed('two', true);
    expect(b.finish).to.equal('tool_calls');
    expect(b.content).to.equal(a.content);
    expect(b.calls.map((c) => [c.index, c.name, c.arguments])).to.deep.equal(a.calls.map((c, i) => [i, c.name, c.arguments]));
    for (const c of b.calls) expect(c.id).to.match(/^call_/);
    // With logprobs (a chunk a token) too.
    const l = await streamed('two', true, { logprobs: true });
    expect([l.content, l.finish, l.calls.map((c) => c.name)]).to.deep.equal([a.content, 'tool_calls', ['get_weather', 'get_time']]);
  });

  it('negative controls: a malformed block, and a block cut off at the end, stay text (whole and streamed)', async () => {
    for (const key of ['bad', 'cut']) {
      const text = key === 'bad' ? `${BAD_JSON} then text` : `ok ${CALL_A.slice(0, 30)}`;
      const a = await whole(key, true);
      expect(a).to.deep.include({ content: text, finish: 'stop' });
      expect(a.calls).to.deep.equal([]);
      const b = await streamed(key, true);
      expect(b).to.deep.equal({ content: text, calls: [], finish: 'stop' });
    }
  });

  it('no tools given: nothing is read, the blocks come back as text', async () => {
    const a = await whole('two', false);
    expect(a).to.deep.include({ content: TWO, finish: 'stop' });
    expect(a.calls).to.deep.equal([]);
    expect(await streamed('two', false)).to.deep.equal({ content: TWO, calls: [], finish: 'stop' });
    // tool_choice none: the tools are given but not offered, nothing is read either.
    expect(await streamed('two', true, { tool_choice: 'none' })).to.deep.equal({ content: TWO, calls: [], finish: 'stop' });
  });
});
