/**
 * Structured output through the server with the official client, on a random-weight tiny Qwen3 at
 * temperature 1: `json_schema` answers are valid under the schema for any seed, `json_object` answers
 * that end parse as objects; without response_format the same requests are not valid (the control).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { qwen3TokenizerDir } from '../../src/serve/demo.js';
import { writeTinyQwen3 } from '../../src/model/qwen3/tiny.js';
import { acceptsPrefix, hasVocabularyTrie, jsonObjectGrammar } from '../../src/model/grammar/index.js';
import { loadModel, type Qwen3Model } from '../../src/model/qwen3/model.js';
import { Registry } from '../../src/serve/addons.js';
import { resolveModel } from '../../src/serve/open.js';
import { problem } from '../model/grammar/validate.js';
import { startServer, tinyModel } from './helpers.js';

const SCHEMA = {
  type: 'object', additionalProperties: false, required: ['kind', 'age', 'name', 'tags'],
  properties: {
    kind: { enum: ['cat', 'dog', 'bird'] },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    name: { type: 'string', minLength: 1, maxLength: 6 },
    tags: { type: 'array', items: { anyOf: [{ type: 'boolean' }, { type: 'string', maxLength: 2 }] }, maxItems: 2 },
  },
};
const HI = [{ role: 'user' as const, content: 'describe a pet as JSON' }];

describe('serve: response_format json_schema and json_object', function () {
  this.timeout(180_000);
  let model: ReturnType<typeof tinyModel>;
  let s: Awaited<ReturnType<typeof startServer>>;
  before(async () => { model = tinyModel(); s = await startServer(model.path, { load: { ctx: 256 } }); });
  after(async () => { await s.server.close(); model.remove(); });

  it('json_schema: every answer is valid under the schema, whatever the seed', async () => {
    for (let seed = 0; seed < 4; seed++) {
      const r = await s.client.chat.completions.create({
        model: 'tiny', messages: HI, max_tokens: 120, temperature: 1, seed,
        response_format: { type: 'json_schema', json_schema: { name: 'pet', strict: true, schema: SCHEMA } },
      });
      const text = r.choices[0]!.message.content ?? '';
      expect(r.choices[0]!.finish_reason, text).to.equal('stop');
      expect(problem(SCHEMA, text), text).to.equal(undefined);
    }
  });

  it('negative control: without response_format the same requests are not valid', async () => {
    for (let seed = 0; seed < 2; seed++) {
      const r = await s.client.chat.completions.create({ model: 'tiny', messages: HI, max_tokens: 40, temperature: 1, seed });
      expect(problem(SCHEMA, r.choices[0]!.message.content ?? '')).to.not.equal(undefined);
    }
  });

  it('json_object: every answer parses as an object (logit_bias favours `"` and `}` so the random model ends its strings)', async () => {
    for (let seed = 0; seed < 4; seed++) {
      const r = await s.client.chat.completions.create({
        model: 'tiny', messages: HI, max_tokens: 200, temperature: 1, seed, response_format: { type: 'json_object' },
        logit_bias: { [0x22]: 4, [0x7d]: 4 },
      });
      const text = r.choices[0]!.message.content ?? '';
      if (r.choices[0]!.finish_reason !== 'stop') expect(acceptsPrefix(jsonObjectGrammar(), text), text).to.equal(true);
      expect(r.choices[0]!.finish_reason, text).to.equal('stop');
      const v: unknown = JSON.parse(text);
      expect(v, text).to.be.an('object').and.not.be.an('array');
    }
  });
});

const WEATHER = {
  type: 'object', additionalProperties: false, required: ['city', 'days', 'unit'],
  properties: { city: { type: 'string', minLength: 1, maxLength: 8 }, days: { type: 'integer', minimum: 1, maximum: 7 }, unit: { enum: ['c', 'f'] } },
};
const TOOLS = [
  { type: 'function' as const, function: { name: 'get_weather', parameters: WEATHER } },
  { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string', maxLength: 4 } }, required: ['zone'], additionalProperties: false } } },
];

/** The tiny model with room for Qwen3's tools prompt (context 1024). */
function roomyModel(): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'npu-tools-'));
  const path = join(dir, 'tiny.gguf');
  writeTinyQwen3(path, { layers: 1, hidden: 64, intermediate: 128, heads: 2, kvHeads: 1, headDim: 32, vocab: 320, contextLength: 1024, std: 0.3 });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('serve: tool_choice required and named, by constrained decoding', function () {
  this.timeout(180_000);
  let model: ReturnType<typeof roomyModel>;
  let s: Awaited<ReturnType<typeof startServer>>;
  // Qwen3's own template (it renders tools); the tiny model's file has none.
  const template = (JSON.parse(readFileSync(join(qwen3TokenizerDir(), 'tokenizer_config.json'), 'utf8')) as { chat_template: string }).chat_template;
  before(async () => { model = roomyModel(); s = await startServer(model.path, { chatTemplate: template, load: { ctx: 1024 } }); });
  after(async () => { await s.server.close(); model.remove(); });

  it('a named function: message.tool_calls with arguments valid under its schema, whatever the seed', async () => {
    for (let seed = 0; seed < 3; seed++) {
      const r = await s.client.chat.completions.create({
        model: 'tiny', messages: [{ role: 'user', content: 'weather?' }], max_tokens: 120, temperature: 1, seed, tools: TOOLS,
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      });
      const c = r.choices[0]!;
      expect(c.finish_reason, JSON.stringify(c.message)).to.equal('tool_calls');
      expect(c.message.content).to.equal(null);
      const call = c.message.tool_calls![0]! as { type: string; id: string; function: { name: string; arguments: string } };
      expect(call.type).to.equal('function');
      expect(call.id).to.match(/^call_/);
      expect(call.function.name).to.equal('get_weather');
      expect(problem(WEATHER, call.function.arguments), call.function.arguments).to.equal(undefined);
    }
  });

  it('required, streamed: one tool-call delta naming one of the tools, its arguments valid', async () => {
    const stream = await s.client.chat.completions.create({
      model: 'tiny', messages: [{ role: 'user', content: 'do something' }], max_tokens: 120, temperature: 1, seed: 5, tools: TOOLS, tool_choice: 'required', stream: true,
    });
    const calls: { function?: { name?: string; arguments?: string } }[] = [];
    let finish: string | null = null;
    let content = '';
    for await (const ch of stream) {
      const d = ch.choices[0]!;
      calls.push(...(d.delta.tool_calls ?? []));
      content += d.delta.content ?? '';
      finish = d.finish_reason ?? finish;
    }
    expect(finish).to.equal('tool_calls');
    expect(content).to.equal('');
    expect(calls).to.have.length(1);
    const f = calls[0]!.function!;
    const schema = TOOLS.find((t) => t.function.name === f.name)!.function.parameters;
    expect(problem(schema, f.arguments!), f.arguments).to.equal(undefined);
  });

  it('a name that is not a tool, and a forced call with a JSON response format, are 400s naming the field', async () => {
    const post = (body: Record<string, unknown>) => fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'x' }], tools: TOOLS, ...body }) });
    const a = await post({ tool_choice: { type: 'function', function: { name: 'nope' } } });
    expect(a.status).to.equal(400);
    expect(((await a.json()) as { error: { param: string } }).error.param).to.equal('tool_choice/function/name');
    const b = await post({ tool_choice: 'required', response_format: { type: 'json_object' } });
    expect(b.status).to.equal(400);
    expect(((await b.json()) as { error: { param: string } }).error.param).to.equal('response_format');
  });

  it('a model `serve` opens has its vocabulary trie built while it loads, not by its first constrained request', async () => {
    const r = await resolveModel(model.path, { target: 'host', ctx: 64 }, new Registry(), () => undefined);
    const served = (await r.open()) as Qwen3Model;
    try {
      expect(hasVocabularyTrie(served.tokenizer!)).to.equal(true);
    } finally { await served.close(); }
    // The control: a model loaded by itself has none until a constrained answer asks for it. (A copy of
    // the file: a process keeps a file's tokenizer, trie and all, for its next load.)
    const copy = join(dirname(model.path), 'bare.gguf');
    copyFileSync(model.path, copy);
    const bare = await loadModel(copy, { target: 'host', ctx: 64 });
    try {
      expect(hasVocabularyTrie(bare.tokenizer!)).to.equal(false);
    } finally { await bare.close(); }
  });
});
