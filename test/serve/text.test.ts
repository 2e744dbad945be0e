/**
 * Prompts are rendered and tokenized off the server's event loop, under bounds: a hostile chat template,
 * a backtracking pre-tokenizer pattern and ten 8 MB prompts each get their 400 while /v1/health keeps
 * answering, and the next ordinary request is served.
 */
import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type OpenAI from 'openai';
import type { Server } from '../../src/serve/server.js';
import type { TextLimits } from '../../src/model/tokenizer/textWorker.js';
import { tinyTokenizerJson } from '../model/tokenizer/helpers.js';
import { startServer, tinyModel } from './helpers.js';

/** A template that renders ChatML, and runs `hostile` when the first message says "boom". */
const chatml = (hostile: string) =>
  `{% if messages[0].content == 'boom' %}${hostile}{% endif %}{% for m in messages %}<|end|>{{ m.role }}\n{{ m.content }}{% endfor %}`;

/** A tokenizer directory beside the model: the tiny tokenizer, its config with `template`, `over` on tokenizer.json. */
function tokenizerDir(dir: string, name: string, template: string | null, over: Record<string, unknown> = {}): string {
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  writeFileSync(join(d, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson(over)));
  writeFileSync(join(d, 'tokenizer_config.json'), JSON.stringify(template === null ? {} : { chat_template: template }));
  return d;
}

interface Timed { readonly status: number; readonly body: { error?: { code: string; message: string; param?: string } }; readonly at: number }

let clock = 0;
/** A request and when its answer came, in the order answers arrived (`at`). */
async function timed(url: string, init?: RequestInit): Promise<Timed> {
  const r = await fetch(url, init);
  const body = (await r.json()) as Timed['body'];
  return { status: r.status, body, at: ++clock };
}

const post = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });


/**
 * Sends `hostile` (requests answered by their 400) and health requests one after another while any is in
 * flight; returns the hostile answers and the health answers sent meanwhile.
 */
async function underLoad(s: { server: Server; url: string }, hostile: (() => Promise<Timed>)[]): Promise<{ answers: Timed[]; health: Timed[] }> {
  let pending = hostile.length;
  const answers = Promise.all(hostile.map((f) => f().finally(() => { pending--; })));
  // Health is asked once the server holds the hostile requests (accepted, not yet answered).
  while (s.server.inFlight === 0 && pending > 0) await new Promise((r) => setImmediate(r));
  const health: Timed[] = [];
  while (pending > 0) health.push(await timed(`${s.url}/v1/health`));
  return { answers: await answers, health };
}

function expectHealthy(health: readonly Timed[], answers: readonly Timed[]): void {
  expect(health.length, 'health was asked while the hostile requests were in flight').to.be.greaterThan(0);
  for (const h of health) expect(h.status).to.equal(200);
  // Health was answered before the (last) hostile request was: the event loop was free meanwhile. (An
  // order of answers, not a time: a busy machine slows both sides alike.)
  expect(health[0]!.at).to.be.below(Math.max(...answers.map((a) => a.at)));
}

async function ordinaryChat(client: OpenAI): Promise<void> {
  const r = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hello world' }], max_tokens: 4, temperature: 0 });
  expect(r.usage!.completion_tokens).to.equal(4);
  expect(r.choices[0]!.message.content).to.be.a('string');
}

describe('serve: prompts are rendered and tokenized off the event loop, under bounds', function () {
  this.timeout(240_000);
  let model: ReturnType<typeof tinyModel>;
  before(() => { model = tinyModel(); });
  after(() => model.remove());

  async function serverWith(tokenizer: string, textLimits?: TextLimits) {
    return startServer(model.path, { load: { tokenizer, ...(textLimits !== undefined ? { textLimits } : {}) } });
  }

  it('a template looping a billion times: health answers meanwhile, the request gets a 400 ResourceLimit naming the template, the next chat is served', async () => {
    const s = await serverWith(tokenizerDir(model.dir, 'loop', chatml('{% for i in range(1000000000) %}x{% endfor %}')));
    try {
      await ordinaryChat(s.client);
      const { answers, health } = await underLoad(s, [() => timed(`${s.url}/v1/chat/completions`, post({ model: 'tiny', messages: [{ role: 'user', content: 'boom' }] }))]);
      expectHealthy(health, answers);
      const a = answers[0]!;
      expect(a.status).to.equal(400);
      expect(a.body.error!.code).to.equal('ResourceLimit');
      // Out of the worker's memory or of its time, whichever comes first on this machine.
      expect(a.body.error!.message).to.match(/loop \(chat template\): template-(memory|ms) /);
      await ordinaryChat(s.client);
    } finally { await s.server.close(); }
  });

  it('a template writing about 1 GB is refused as template-bytes, streamed or not, and the server goes on', async () => {
    const s = await serverWith(tokenizerDir(model.dir, 'big', chatml(`{% set k = "${'x'.repeat(100_000)}" %}{% for i in range(10000) %}{{ k }}{% endfor %}`)));
    try {
      const { answers, health } = await underLoad(s, [
        () => timed(`${s.url}/v1/chat/completions`, post({ model: 'tiny', messages: [{ role: 'user', content: 'boom' }] })),
        () => timed(`${s.url}/v1/chat/completions`, post({ model: 'tiny', messages: [{ role: 'user', content: 'boom' }], stream: true })),
      ]);
      expectHealthy(health, answers);
      for (const a of answers) {
        expect(a.status).to.equal(400);
        expect(a.body.error!.code).to.equal('ResourceLimit');
        expect(a.body.error!.message).to.contain('big (chat template): template-bytes');
      }
      await ordinaryChat(s.client);
    } finally { await s.server.close(); }
  });

  it('a template running past its time bound is refused as template-ms', async () => {
    const s = await serverWith(tokenizerDir(model.dir, 'slow', chatml('{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}')), { renderMs: 1000 });
    try {
      const { answers, health } = await underLoad(s, [() => timed(`${s.url}/v1/chat/completions`, post({ model: 'tiny', messages: [{ role: 'user', content: 'boom' }] }))]);
      expectHealthy(health, answers);
      expect(answers[0]!.status).to.equal(400);
      expect(answers[0]!.body.error!.message).to.match(/slow \(chat template\): template-ms \d+ is past the limit 1000/);
      await ordinaryChat(s.client);
    } finally { await s.server.close(); }
  });

  it('ten 8 MB prompts at once: each a 400 context_length_exceeded, health answers throughout, then a request is served', async () => {
    const s = await serverWith(tokenizerDir(model.dir, 'plain', chatml('')));
    try {
      const big = 'hello world '.repeat(8_000_000 / 12);
      const { answers, health } = await underLoad(s, Array.from({ length: 10 }, () => () => timed(`${s.url}/v1/completions`, post({ model: 'tiny', prompt: big, max_tokens: 1 }))));
      expectHealthy(health, answers);
      for (const a of answers) {
        expect(a.status).to.equal(400);
        expect(a.body.error!.code).to.equal('context_length_exceeded');
        expect(a.body.error!.param).to.equal('prompt');
      }
      await ordinaryChat(s.client);
    } finally { await s.server.close(); }
  });

  it('a backtracking pre-tokenizer pattern ((a+)+$) on a prompt of a\'s: health answers meanwhile, a 400, then a request is served', async () => {
    const pre = { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: '(a+)+$' }, behavior: 'Isolated', invert: false }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false }] };
    const s = await serverWith(tokenizerDir(model.dir, 'regex', chatml(''), { pre_tokenizer: pre }), { encodeMs: 3000 });
    try {
      let done = false;
      const hostile = timed(`${s.url}/v1/completions`, post({ model: 'tiny', prompt: `${'a'.repeat(1000)}!`, max_tokens: 1 })).finally(() => { done = true; });
      while (s.server.inFlight === 0 && !done) await new Promise((r) => setImmediate(r));
      const h = await timed(`${s.url}/v1/health`);
      expect(h.status).to.equal(200);
      const a = await hostile;
      expect(a.status).to.equal(400);
      // The encoding ran to its 3000 ms bound in the text worker: health was answered meanwhile.
      if (a.body.error!.code === 'ResourceLimit') expect(h.at, 'health answered before the refusal').to.be.below(a.at);
      // Past the encoding's time bound with a backtracking matcher; past the context with a linear one.
      expect(a.body.error!.code).to.be.oneOf(['ResourceLimit', 'context_length_exceeded']);
      if (a.body.error!.code === 'ResourceLimit') expect(a.body.error!.message).to.match(/tokenize-ms \d+ is past the limit 3000/);
      await ordinaryChat(s.client);
    } finally { await s.server.close(); }
  });
});
