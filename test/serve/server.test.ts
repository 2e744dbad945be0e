import { expect } from 'chai';
import OpenAI from 'openai';
import { startServer, tinyModel } from './helpers.js';
import { createServer, type Server } from '../../src/serve/server.js';
import { loadModel } from '../../src/model/qwen3/model.js';
import type { ServedModel } from '../../src/serve/model.js';

const HI = [{ role: 'user' as const, content: 'hello there' }];

describe('serve: the OpenAI endpoints through the official client', function () {
  this.timeout(60_000);
  let model: ReturnType<typeof tinyModel>;
  let s: { server: Server; url: string; client: OpenAI };
  before(async () => { model = tinyModel(); s = await startServer(model.path); });
  after(async () => { await s.server.close(); model.remove(); });

  it('lists the model, and health answers 200 with its id', async () => {
    const list = await s.client.models.list();
    expect(list.data.map((m) => m.id)).to.deep.equal(['tiny']);
    const h = await fetch(`${s.url}/v1/health`);
    expect(h.status).to.equal(200);
    expect(await h.json()).to.deep.equal({ status: 'ok', model: 'tiny' });
  });

  it('a greedy chat answers the same text streamed (chunks concatenated) as not, with usage and finish_reason', async () => {
    const whole = await s.client.chat.completions.create({ model: 'tiny', messages: HI, max_tokens: 12, temperature: 0 });
    const c = whole.choices[0]!;
    expect(c.finish_reason).to.equal('length');
    expect(whole.usage!.completion_tokens).to.equal(12);
    expect(whole.usage!.prompt_tokens).to.be.greaterThan(0);
    expect(whole.usage!.total_tokens).to.equal(whole.usage!.prompt_tokens + 12);
    const stream = await s.client.chat.completions.create({ model: 'tiny', messages: HI, max_tokens: 12, temperature: 0, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    let completion = -1;
    for await (const ch of stream) {
      text += ch.choices[0]?.delta.content ?? '';
      finish = ch.choices[0]?.finish_reason ?? finish;
      if (ch.usage) completion = ch.usage.completion_tokens;
    }
    expect(text).to.equal(c.message.content);
    expect(text.length).to.be.greaterThan(0);
    expect(finish).to.equal('length');
    expect(completion).to.equal(12);
  });

  it('completions, streamed and not; max_tokens caps the count', async () => {
    const r = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 5, temperature: 0 });
    expect(r.usage!.completion_tokens).to.equal(5);
    expect(r.choices[0]!.finish_reason).to.equal('length');
    let text = '';
    for await (const ch of await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 5, temperature: 0, stream: true })) text += ch.choices[0]?.text ?? '';
    expect(text).to.equal(r.choices[0]!.text);
  });

  it('max_completion_tokens, a seeded sampled request (the same text twice) and repetition_penalty reach the model', async () => {
    const r = await s.client.chat.completions.create({ model: 'tiny', messages: HI, max_completion_tokens: 3 });
    expect(r.usage!.completion_tokens).to.equal(3);
    const sampled = { model: 'tiny', prompt: 'abc', max_tokens: 10, temperature: 1.5, top_p: 0.95, seed: 7 };
    const [a, b] = [await s.client.completions.create(sampled), await s.client.completions.create(sampled)];
    expect(a.choices[0]!.text).to.equal(b.choices[0]!.text);
    const greedy = (await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 10, temperature: 0 })).choices[0]!.text;
    expect(a.choices[0]!.text).to.not.equal(greedy);
    const plain = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 20, temperature: 0, repetition_penalty: 1 } as never);
    const heavy = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 20, temperature: 0, repetition_penalty: 3 } as never);
    expect((plain as { choices: { text: string }[] }).choices[0]!.text).to.not.equal((heavy as { choices: { text: string }[] }).choices[0]!.text);
  });

  it('stop ends the text before the stop string, with finish_reason stop', async () => {
    const r = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 20, temperature: 0 });
    const text = r.choices[0]!.text;
    expect(text.length).to.be.greaterThan(3);
    const stop = text.slice(2, 4);
    const cut = await s.client.completions.create({ model: 'tiny', prompt: 'abc', max_tokens: 20, temperature: 0, stop });
    expect(cut.choices[0]!.text).to.equal(text.slice(0, text.indexOf(stop)));
    expect(cut.choices[0]!.finish_reason).to.equal('stop');
  });

  it('a malformed body is a 400 naming the field; an unknown model 404; a prompt past the context 400', async () => {
    const bad = await s.client.chat.completions.create({ model: 'tiny', messages: HI, temperature: 'hot' as unknown as number }).catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('temperature');
    const noMessages = await s.client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user' } as never] }).catch((e: unknown) => e);
    expect((noMessages as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('messages/0/content');
    const unknown = await s.client.chat.completions.create({ model: 'gpt-4', messages: HI }).catch((e: unknown) => e);
    expect(unknown).to.be.instanceOf(OpenAI.NotFoundError);
    const long = await s.client.completions.create({ model: 'tiny', prompt: 'x'.repeat(200), stream: true }).catch((e: unknown) => e);
    expect(long).to.be.instanceOf(OpenAI.BadRequestError);
    expect((long as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('context_length_exceeded');
    const raw = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": ' });
    expect(raw.status).to.equal(400);
    expect(((await raw.json()) as { error: { type: string } }).error.type).to.equal('invalid_request_error');
  });

  it('a client that aborts mid-stream frees the server: its generation stops, the next request is served, and greedy text repeats', async () => {
    const req = { model: 'tiny', prompt: 'abc', max_tokens: 8, temperature: 0 };
    const first = (await s.client.completions.create(req)).choices[0]!.text;
    // A second server whose generations pause after their 2nd token until the test lets them go on.
    let release!: () => void;
    const paused = new Promise<void>((r) => { release = r; });
    let made = 0;
    let ended = false;
    const inner = await loadModel(model.path, { target: 'host', ctx: 64 });
    const server = createServer({
      modelId: 'tiny',
      open: async (): Promise<ServedModel> => ({
        async *generate(r) {
          const it = inner.generate(r);
          try {
            for (;;) { const n = await it.next(); if (n.done === true) return n.value; if (++made > 2) await paused; yield n.value; }
          } finally { ended = true; await it.return(undefined as never); }
        },
        close: () => inner.close(),
      }),
    });
    try {
      const url = await server.listen(0, '127.0.0.1');
      await server.loaded;
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
      const ac = new AbortController();
      const stream = await client.completions.create({ model: 'tiny', prompt: 'zz', max_tokens: 50, temperature: 0, stream: true }, { signal: ac.signal });
      let chunks = 0;
      try {
        for await (const _ of stream) { if (++chunks === 2) ac.abort(); }
      } catch (e) {
        expect((e as Error).name).to.match(/Abort/);
      }
      // Let the server see the closed socket before the paused token goes on (a settle, not a timing check).
      await new Promise((r) => setTimeout(r, 200));
      release();
      const again = await client.completions.create(req);
      expect(again.choices[0]!.text).to.equal(first);
      expect(ended).to.equal(true);
      // The aborted generation stopped at the token after the client left (3 made, or 4 when the server
      // saw the closed socket only after writing the 3rd), then the next request's 8: not the 50 asked for.
      expect(made).to.be.within(3 + 8, 4 + 8);
    } finally { await server.close(); }
  });
});
