/**
 * Serve's finish reasons on every path and the release of a generation whose client left (issue 27
 * item 11), with a scripted model (no weights): the generation's own end (eos, a stop string, a count,
 * the context) reaches the client as OpenAI's finish_reason on the non-streamed and streamed chat and
 * completion paths alike, a prompt past the context is 400 context_length_exceeded, and a client that
 * leaves mid-answer gets its generation returned (its `finally` runs: the cache is given back) on all
 * four paths. Tool-call blocks split in odd places are read as calls.
 */
import { expect } from 'chai';
import type { GeneratedToken, GenerationResult } from '../../src/model/qwen3/generate.js';
import type { GenerateRequest } from '../../src/model/qwen3/model.js';
import { ResourceLimit } from '../../src/errors/index.js';
import type { ServedModel } from '../../src/serve/model.js';
import { createServer, type Server } from '../../src/serve/server.js';
import { TOOL_CALL_FORMATS, ToolCallReader } from '../../src/serve/toolcalls.js';
import { parseBody } from '../../src/serve/wire.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Finish = GenerationResult['finishReason'];

/** The request's last user text, or its prompt. */
function said(g: GenerateRequest): string {
  const last = g.messages?.[g.messages.length - 1]?.content;
  return typeof last === 'string' ? last : g.prompt ?? '';
}

/** "eos", "stop", "length", "context": a three-token answer ending so; "slow": tokens until returned; "long": past the context. */
function scripted(released: string[]): ServedModel {
  return {
    async close() { /* nothing held */ },
    async *generate(g: GenerateRequest): AsyncGenerator<GeneratedToken, GenerationResult, void> {
      const what = said(g);
      if (what === 'long') throw new ResourceLimit('context', 40, 32, 'prompt');
      if (what === 'slow') {
        try {
          for (let i = 0; i < 2000; i++) { await sleep(5); yield { id: i, text: 'x', position: i }; }
          throw new Error('never returned');
        } finally {
          released.push(what);
        }
      }
      const ids = [1, 2, 3];
      for (const id of ids) yield { id, text: `t${id} `, position: id };
      return { ids, text: 't1 t2 t3 ', promptTokens: 2, finishReason: what as Finish, ranOn: [], timings: { prefillMs: 0, decodeMs: 0, prefillTokS: 0, decodeTokS: 0, decodeSteps: 3 } };
    },
  };
}

describe('serve slips: finish reasons and released generations, on every path', function () {
  this.timeout(60_000);
  let server: Server;
  let url = '';
  const released: string[] = [];
  before(async () => {
    server = createServer({ modelId: 'tiny', open: async () => scripted(released) });
    url = await server.listen(0, '127.0.0.1');
    await server.loaded;
  });
  after(async () => { await server.close(); });

  const body = (kind: 'chat' | 'completion', text: string, stream: boolean) =>
    JSON.stringify(kind === 'chat' ? { model: 'tiny', messages: [{ role: 'user', content: text }], stream } : { model: 'tiny', prompt: text, stream });
  const path = (kind: 'chat' | 'completion') => `${url}/v1/${kind === 'chat' ? 'chat/completions' : 'completions'}`;

  /** The finish_reason the client sees, and the text. */
  async function finishOf(kind: 'chat' | 'completion', text: string, stream: boolean): Promise<{ finish: string | null; text: string }> {
    const r = await fetch(path(kind), { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(kind, text, stream) });
    expect(r.status, await r.clone().text()).to.equal(200);
    if (!stream) {
      const j = await r.json() as { choices: { finish_reason: string; text?: string; message?: { content: string } }[] };
      return { finish: j.choices[0]!.finish_reason, text: j.choices[0]!.text ?? j.choices[0]!.message!.content };
    }
    let finish: string | null = null;
    let out = '';
    for (const line of (await r.text()).split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const c = JSON.parse(line.slice(6)) as { choices: { finish_reason: string | null; text?: string; delta?: { content?: string } }[] };
      const ch = c.choices[0];
      if (ch === undefined) continue;
      out += ch.text ?? ch.delta?.content ?? '';
      if (ch.finish_reason !== null) finish = ch.finish_reason;
    }
    return { finish, text: out };
  }

  for (const kind of ['chat', 'completion'] as const) {
    for (const stream of [false, true]) {
      it(`${kind}${stream ? ', streamed' : ''}: eos and a stop string are stop; a count and the context are length`, async () => {
        const want: Record<string, string> = { eos: 'stop', stop: 'stop', length: 'length', context: 'length' };
        for (const [end, wire] of Object.entries(want)) {
          const got = await finishOf(kind, end, stream);
          expect(got.finish, end).to.equal(wire);
          expect(got.text, end).to.equal('t1 t2 t3 ');
        }
      });

      it(`${kind}${stream ? ', streamed' : ''}: a client that leaves mid-answer has its generation returned`, async () => {
        const before = released.length;
        const ac = new AbortController();
        const r = fetch(path(kind), { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(kind, 'slow', stream), signal: ac.signal });
        if (stream) {
          const res = await r;
          const reader = res.body!.getReader();
          await reader.read();
          ac.abort();
        } else {
          await sleep(100);
          ac.abort();
        }
        await r.catch(() => undefined);
        // The generation is returned at its next token (5 ms apart); a generous bound, not a timing.
        for (let i = 0; i < 200 && released.length === before; i++) await sleep(25);
        expect(released.length, 'the generation was returned').to.equal(before + 1);
      });
    }
  }

  it('a prompt past the context is 400 context_length_exceeded, streamed or not', async () => {
    for (const stream of [false, true]) {
      const r = await fetch(path('chat'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('chat', 'long', stream) });
      expect(r.status).to.equal(400);
      const j = await r.json() as { error: { code: string } };
      expect(j.error.code).to.equal('context_length_exceeded');
    }
  });
});

describe('serve slips: tool-call blocks split anywhere', () => {
  const QWEN = TOOL_CALL_FORMATS['qwen']!;
  const CALL = '<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>';

  /** Text and calls of `text` fed in the pieces `cuts` make. */
  function read(text: string, cuts: number[], tools = ['f']): string {
    const r = new ToolCallReader(QWEN, new Set(tools));
    let out = '';
    let at = 0;
    for (const c of [...cuts, text.length]) {
      for (const p of r.push(text.slice(at, c))) out += 'text' in p ? p.text : `[call ${p.call.name}]`;
      at = c;
    }
    for (const p of r.end()) out += 'text' in p ? p.text : `[call ${p.call.name}]`;
    return out;
  }

  it('an open tag cut before its last character is still a call, and no piece of it leaks as text', () => {
    const text = `hi ${CALL}`;
    const open = text.indexOf('<tool_call>');
    for (let k = 1; k < '<tool_call>'.length; k++) expect(read(text, [open + k]), `cut at ${k}`).to.equal('hi[call f]');
  });

  it('a block naming a tool not offered stays text with the space before it; an unclosed block keeps its tag', () => {
    expect(read(`hi ${CALL}`, [], ['g'])).to.equal(`hi ${CALL}`);
    expect(read('hi <tool_call>\n{"name"', [])).to.equal('hi <tool_call>\n{"name"');
  });
});

describe('serve slips: sampling fields of a request reach the generation', () => {
  const chat = (extra: Record<string, unknown>) => parseBody({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], ...extra }, 'chat').generate;

  it('max_completion_tokens wins over the deprecated max_tokens, which counts alone', () => {
    expect(chat({ max_completion_tokens: 5, max_tokens: 9 }).maxTokens).to.equal(5);
    expect(chat({ max_tokens: 9 }).maxTokens).to.equal(9);
  });

  it('top_k 1 (greedy among the sampled) is passed on; top_k 0 means none', () => {
    expect(chat({ top_k: 1, temperature: 1 }).topK).to.equal(1);
    expect(chat({ top_k: 0, temperature: 1 }).topK).to.equal(undefined);
  });
});
