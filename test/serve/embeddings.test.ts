/**
 * /v1/embeddings through the official client on a random-weight tiny model: one vector per input, the
 * same bits alone and in a batch, base64 (the client's default, which it decodes) equal to float, the
 * library's Qwen3Model.embed equal to the wire's, mean and last pooling differing, bad input refused
 * naming its field. And the hidden-state program leaves the logits programs as they were.
 */
import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { loadModel, type Qwen3Model } from '../../src/model/qwen3/model.js';
import { buildProgram } from '../../src/model/qwen3/program.js';
import { openModelSource } from '../../src/model/qwen3/source.js';
import { ResourceLimit } from '../../src/errors/index.js';
import { startServer, tinyModel } from './helpers.js';

type Err = { error: { message: string; code: string; param?: string } };

async function post(url: string, body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> & Partial<Err> }> {
  const r = await fetch(`${url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tiny', ...body }) });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> & Partial<Err> };
}

const HIDDEN = 64;

describe('serve: /v1/embeddings (issue 26, item 6)', function () {
  this.timeout(120_000);
  let model: ReturnType<typeof tinyModel>;
  let s: Awaited<ReturnType<typeof startServer>>;
  let last: Awaited<ReturnType<typeof startServer>>;
  // One engine for every model here (both servers', the library's): a fresh engine is not the subject.
  let engine: Engine;
  before(async () => {
    model = tinyModel();
    engine = createEngine({});
    s = await startServer(model.path, { load: { engine } });
    last = await startServer(model.path, { pooling: 'last', load: { engine } });
  });
  after(async () => { await s.server.close(); await last.server.close(); await engine.close(); model.remove(); });

  it('gives one vector of `hidden` values per input, the same bits alone and inside a batch', async () => {
    const batch = await s.client.embeddings.create({ model: 'tiny', input: ['hello there', 'a', 'something else'], encoding_format: 'float' });
    expect(batch.object).to.equal('list');
    expect(batch.model).to.equal('tiny');
    expect(batch.data.map((d) => d.index)).to.deep.equal([0, 1, 2]);
    for (const d of batch.data) { expect(d.object).to.equal('embedding'); expect(d.embedding).to.have.length(HIDDEN); }
    // Usage: the inputs' tokens as the model encodes them.
    const m = s.server.holder.model as unknown as Qwen3Model;
    let n = 0;
    for (const t of ['hello there', 'a', 'something else']) n += (await m.encodePrompt({ prompt: t })).length;
    expect(batch.usage).to.deep.equal({ prompt_tokens: n, total_tokens: n });
    const alone = await s.client.embeddings.create({ model: 'tiny', input: 'a', encoding_format: 'float' });
    expect(alone.data).to.have.length(1);
    expect(alone.data[0]!.embedding).to.deep.equal(batch.data[1]!.embedding);
    // Negative control: another input is another vector.
    expect(batch.data[0]!.embedding).to.not.deep.equal(batch.data[1]!.embedding);
  });

  it('base64 (the client\'s default, decoded by it) is the float answer\'s bits; token ids embed as their text does', async () => {
    const float = await s.client.embeddings.create({ model: 'tiny', input: ['hello there', 'xyz'], encoding_format: 'float' });
    const b64 = await s.client.embeddings.create({ model: 'tiny', input: ['hello there', 'xyz'] });
    expect(b64.data.map((d) => Array.from(d.embedding))).to.deep.equal(float.data.map((d) => d.embedding));
    const raw = await post(s.url, { input: 'xyz', encoding_format: 'base64' });
    expect((raw.json['data'] as { embedding: unknown }[])[0]!.embedding).to.be.a('string');
    const bytes = Buffer.from((raw.json['data'] as { embedding: string }[])[0]!.embedding, 'base64');
    const decoded = Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
    expect(decoded).to.deep.equal(float.data[1]!.embedding);
    const ids = await s.client.embeddings.create({ model: 'tiny', input: [[...Buffer.from('xyz')].map((b) => b + 0)], encoding_format: 'float' });
    const tok = s.server.holder.model as unknown as Qwen3Model;
    const xyzIds = await tok.encodePrompt({ prompt: 'xyz' });
    const byIds = await s.client.embeddings.create({ model: 'tiny', input: xyzIds, encoding_format: 'float' });
    expect(byIds.data[0]!.embedding).to.deep.equal(float.data[1]!.embedding);
    expect(ids.data).to.have.length(1);
  });

  it('a vector equals the library\'s Qwen3Model.embed; mean and last pooling differ', async () => {
    const lib = await loadModel(model.path, { target: 'host', ctx: 64, engine });
    try {
      const ids = await lib.encodePrompt({ prompt: 'hello there' });
      const mean = await lib.embed(ids, 'mean');
      const lastV = await lib.embed(ids, 'last');
      expect(mean).to.have.length(HIDDEN);
      const wire = await s.client.embeddings.create({ model: 'tiny', input: 'hello there', encoding_format: 'float' });
      expect(wire.data[0]!.embedding).to.deep.equal(Array.from(mean));
      const wireLast = await last.client.embeddings.create({ model: 'tiny', input: 'hello there', encoding_format: 'float' });
      expect(wireLast.data[0]!.embedding).to.deep.equal(Array.from(lastV));
      // Negative control: the two poolings are different vectors.
      expect(Array.from(lastV)).to.not.deep.equal(Array.from(mean));
      // The fp64 oracle agrees with the host's vector (to the host's matmul class: q8 activations).
      const ref = await lib.reference().embed(ids, 'mean');
      const err = Math.max(...Array.from(mean, (x, i) => Math.abs(x - ref[i]!)));
      expect(err).to.be.lessThan(0.05);
      // A prompt past the context is refused naming the input.
      const long = new Array<number>(65).fill(5);
      let thrown: unknown;
      try { await lib.embed(long, 'mean', 'input/1'); } catch (e) { thrown = e; }
      expect(thrown).to.be.instanceOf(ResourceLimit);
      expect((thrown as ResourceLimit).place).to.equal('input/1');
    } finally { await lib.close(); }
  });

  it('a sequence past one prefill chunk pools every chunk\'s rows: the same vector as in one step', async () => {
    const whole = await loadModel(model.path, { target: 'host', ctx: 64, engine });
    const chunked = await loadModel(model.path, { target: 'host', ctx: 64, prefillChunk: 16, engine });
    try {
      expect(chunked.fittingChunk()).to.equal(16);
      const ids = Array.from({ length: 41 }, (_, i) => (i * 7) % 300);
      for (const pooling of ['mean', 'last'] as const) {
        expect(Array.from(await chunked.embed(ids, pooling))).to.deep.equal(Array.from(await whole.embed(ids, pooling)));
      }
      // Negative control: the first chunk alone is another vector (the later chunks count).
      expect(Array.from(await chunked.embed(ids.slice(0, 16)))).to.not.deep.equal(Array.from(await chunked.embed(ids)));
    } finally { await whole.close(); await chunked.close(); }
  });

  it('bad input is a 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ input: ['ok', 7] }, 'input/1'],
      [{ input: [] }, 'input'],
      [{ input: { text: 'x' } }, 'input'],
      [{ input: [[1, 2], [3, 'x']] }, 'input/1/1'],
      [{ input: [1, 999] }, 'input/1'],
      [{ input: ['ok', ''] }, 'input/1'],
      [{ input: ['ok', 'x'.repeat(70)] }, 'input/1'],
      [{ input: 'x', encoding_format: 'int8' }, 'encoding_format'],
      [{ input: 'x', dimensions: 32 }, 'dimensions'],
    ];
    for (const [body, param] of cases) {
      const r = await post(s.url, body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.json.error!.param, JSON.stringify(body)).to.equal(param);
    }
    // dimensions equal to the model's hidden size is accepted (negative control of the refusal).
    const ok = await post(s.url, { input: 'x', dimensions: HIDDEN });
    expect(ok.status).to.equal(200);
    const wrongModel = await post(s.url, { input: 'x', model: 'other' });
    expect(wrongModel.status).to.equal(404);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).to.match(/npu_offload_requests_total\{route="\/v1\/embeddings",status="200"\} \d+/);
    expect(metrics).to.match(/npu_offload_requests_total\{route="\/v1\/embeddings",status="400"\} 9/);
  });

  it('a body that is not a JSON object is the route\'s own 400 (its schema), a JSON object past it is checked as before', async () => {
    for (const body of ['[1]', '"x"', 'null', '7']) {
      const r = await fetch(`${s.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(r.status, body).to.equal(400);
      expect(await r.json(), body).to.deep.equal({ error: { message: 'the body is a JSON object', type: 'invalid_request_error', code: 'InvalidOptions', param: 'body' } });
    }
    // Negative control: an object without input gets past the schema to the route's own check of input.
    const r = await post(s.url, {});
    expect(r.status).to.equal(400);
    expect(r.json.error!.param).to.equal('input');
  });

  it('the hidden-state program is a variant: the logits programs keep their names and results', () => {
    const src = openModelSource(model.path);
    const shape = { tokens: 4, ctx: 64, allLogits: true };
    const plain = buildProgram(src.config, src.weights, shape);
    const hidden = buildProgram(src.config, src.weights, { ...shape, output: 'hidden' });
    expect(plain.name).to.equal('qwen3-prefill-4-ctx64-all');
    expect(hidden.name).to.equal('qwen3-prefill-4-ctx64-all-hidden');
    expect(plain.results).to.deep.equal(['logits']);
    expect(hidden.results).to.deep.equal(['hidden']);
    // Negative control: the hidden program has no lm head (fewer equations than the logits one).
    expect(hidden.eqns.length).to.be.lessThan(plain.eqns.length);
  });
});
