/**
 * The OpenAI surface the server does not implement is refused, not ignored: each such parameter with a
 * value that asks for something is a 400 naming it by its wire name; default values are accepted. Every
 * `param` is a wire name, and a stop begins with health answering 503.
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { createServer } from '../../src/serve/server.js';
import { loadModel } from '../../src/model/qwen3/model.js';
import type { ServedModel } from '../../src/serve/model.js';
import { startServer, tinyModel } from './helpers.js';

const HI = [{ role: 'user', content: 'hello there' }];

describe('serve: the OpenAI parameters it does not implement, wire names, health when stopping', function () {
  this.timeout(120_000);
  let model: ReturnType<typeof tinyModel>;
  let s: Awaited<ReturnType<typeof startServer>>;
  before(async () => { model = tinyModel(); s = await startServer(model.path); });
  after(async () => { await s.server.close(); model.remove(); });

  async function refused(path: string, body: string | Record<string, unknown>): Promise<{ message: string; type: string; code: string; param?: string }> {
    const r = await fetch(`${s.url}/v1/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify({ model: 'tiny', max_tokens: 2, ...body }) });
    const json = (await r.json()) as { error: { message: string; type: string; code: string; param?: string } };
    expect(r.status, JSON.stringify(json)).to.equal(400);
    expect(json.error.type).to.equal('invalid_request_error');
    return json.error;
  }

  const chat: [string, Record<string, unknown>][] = [
    ['n', { n: 0 }], ['n', { n: 17 }], ['logprobs', { logprobs: 'yes' }], ['top_logprobs', { top_logprobs: 2 }], ['top_logprobs', { logprobs: true, top_logprobs: 21 }],
    ['tool_choice', { tool_choice: 'required' }], ['tool_choice/function/name', { tool_choice: { type: 'function', function: { name: 'f' } } }], ['tool_choice', { tool_choice: 'always' }],
    ['functions', { functions: [{ name: 'f' }] }], ['function_call', { function_call: { name: 'f' } }],
    ['response_format.type', { response_format: { type: 'xml' } }], ['frequency_penalty', { frequency_penalty: 5 }],
    ['response_format.json_schema.schema.properties.x.pattern', { response_format: { type: 'json_schema', json_schema: { name: 's', schema: { type: 'object', properties: { x: { type: 'string', pattern: 'a+' } } } } } }],
    ['presence_penalty', { presence_penalty: -3 }], ['logit_bias/x', { logit_bias: { x: 100 } }], ['logit_bias/42', { logit_bias: { 42: 101 } }],
    ['logit_bias/100000', { logit_bias: { 100000: 1 } }], ['min_p', { min_p: 2 }], ['top_k', { top_k: 1.5 }],
    ['messages/0/role', { messages: [{ role: 'wizard', content: 'hi' }] }], ['messages/1/role', { messages: [...HI, { role: 'function', content: '1', name: 'x' }] }],
  ];
  for (const [param, body] of chat) {
    it(`chat: ${JSON.stringify(body)} is a 400 naming ${param}`, async () => {
      const e = await refused('chat/completions', { messages: HI, ...body });
      expect(e.param).to.equal(param);
      expect(e.code).to.equal('InvalidOptions');
    });
  }

  const completions: [string, Record<string, unknown>][] = [
    ['n', { n: 1.5 }], ['logprobs', { logprobs: 21 }], ['logprobs', { logprobs: true }], ['echo', { echo: true }], ['suffix', { suffix: 'end' }], ['best_of', { best_of: 3 }],
    ['frequency_penalty', { frequency_penalty: 2.5 }], ['logit_bias/1', { logit_bias: { 1: 'x' } }],
  ];
  for (const [param, body] of completions) {
    it(`completions: ${JSON.stringify(body)} is a 400 naming ${param}`, async () => {
      const e = await refused('completions', { prompt: 'abc', ...body });
      expect(e.param).to.equal(param);
    });
  }

  it('the values that ask for nothing are accepted (n 1, logprobs false, text format, zero penalties, empty bias and tools)', async () => {
    const r = await s.client.chat.completions.create({
      model: 'tiny', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }], max_tokens: 2, n: 1, logprobs: false,
      response_format: { type: 'text' }, frequency_penalty: 0, presence_penalty: 0, logit_bias: {}, tools: [],
    });
    expect(r.choices).to.have.length(1);
    const c = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 2, n: 1, best_of: 1, echo: false, suffix: '', logprobs: null });
    expect(c.choices).to.have.length(1);
  });

  it('params are wire names: top_p 0 and repetition_penalty 0 name top_p and repetition_penalty, not topP', async () => {
    expect((await refused('completions', { prompt: 'abc', top_p: 0 })).param).to.equal('top_p');
    expect((await refused('completions', { prompt: 'abc', repetition_penalty: 0 })).param).to.equal('repetition_penalty');
  });

  it('max_tokens 1e400 (Infinity once parsed) is a 400 whose message names the value', async () => {
    const e = await refused('completions', '{"model":"tiny","prompt":"abc","max_tokens":1e400}');
    expect(e.param).to.equal('max_tokens');
    expect(e.message).to.contain('Infinity');
    expect(e.message).to.not.contain('not null');
  });

  it('a body past 8 MiB is a 413 in OpenAI\'s shape', async () => {
    const r = await fetch(`${s.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', prompt: 'x'.repeat(8 * 1024 * 1024) }) });
    expect(r.status).to.equal(413);
    expect(((await r.json()) as { error: { code: string } }).error.code).to.equal('FST_ERR_CTP_BODY_TOO_LARGE');
  });

  it('health answers 503 ShuttingDown from the moment a stop begins, while the running request finishes', async () => {
    let release!: () => void;
    const paused = new Promise<void>((r) => { release = r; });
    let started!: () => void;
    const running = new Promise<void>((r) => { started = r; });
    const inner = await loadModel(model.path, { target: 'host', ctx: 64 });
    const server = createServer({
      modelId: 'tiny',
      open: async (): Promise<ServedModel> => ({
        async *generate(r) { started(); await paused; return yield* inner.generate(r); },
        close: () => inner.close(),
      }),
    });
    const url = await server.listen(0, '127.0.0.1');
    await server.loaded;
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
    const answer = client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 2 });
    await running;
    expect((await fetch(`${url}/v1/health`)).status).to.equal(200);
    const closed = server.close();
    const h = await fetch(`${url}/v1/health`);
    expect(h.status).to.equal(503);
    const body = (await h.json()) as { error: { code: string; type: string } };
    expect(body.error.code).to.equal('ShuttingDown');
    expect(body.error.type).to.equal('server_error');
    release();
    expect((await answer).choices[0]!.text).to.be.a('string');
    await closed;
  });
});
