import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { AddonError, InvalidInput, InvalidOptions } from '../../src/errors/index.js';
import { packGguf } from '../../src/model/pack/pack.js';
import { writeTinyQwen3 } from '../../src/model/qwen3/tiny.js';
import { Registry, addonLoadMs, loadAddon } from '../../src/serve/addons.js';
import { resolveModel } from '../../src/serve/open.js';
import { createServer } from '../../src/serve/server.js';
import { tinyTokenizerJson } from '../model/tokenizer/helpers.js';
import { seen } from './fixtures/addon.js';
import { tinyModel } from './helpers.js';

const ADDON = fileURLToPath(new URL('./fixtures/addon.js', import.meta.url));

/**
 * A small byte-level tokenizer.json in `dir`, for an add-on's model directory: the routes here are about
 * what the add-on's session gives back, not about the vocabulary, and Qwen3's takes most of a second
 * to load.
 */
const writeTinyTokenizer = (dir: string): void => { writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson())); };

async function served(open: () => Promise<import('../../src/serve/model.js').ServedModel>, prompt: string): Promise<OpenAI.Completion> {
  const server = createServer({ modelId: 'm', open });
  try {
    const url = await server.listen(0, '127.0.0.1');
    await server.loaded;
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'x', maxRetries: 0 });
    return await client.completions.create({ model: 'm', prompt, max_tokens: 4, temperature: 0 });
  } finally { await server.close(); }
}

describe('serve: add-on routes by model_type', function () {
  this.timeout(120_000);
  let model: ReturnType<typeof tinyModel>;
  let registry: Registry;
  const lines: string[] = [];
  before(async () => { model = tinyModel(); registry = new Registry(); await loadAddon(ADDON, registry); });
  after(() => model.remove());

  it('an optional route that declines leaves the directory to the built-in path (its reason logged)', async () => {
    // Q4NX packs whole 256-column rows: this model is wider than the others. Its vocabulary is the small
    // tokenizer's (268), so every id it gives decodes.
    const gguf = join(model.dir, 'wide.gguf');
    writeTinyQwen3(gguf, { layers: 1, type: 'Q4_0', vocab: 268 });
    const tok = join(model.dir, 'tok');
    mkdirSync(tok);
    writeTinyTokenizer(tok);
    const dir = join(model.dir, 'packed');
    packGguf(gguf, dir, { tokenizer: tok });
    const r = await resolveModel(dir, { target: 'host', ctx: 16 }, registry, (l) => lines.push(l));
    expect(r.route).to.equal('built-in');
    expect(seen.declined).to.equal(1);
    expect(lines.join('\n')).to.include('the test NPU is not present');
    const plain = await resolveModel(dir, { target: 'host', ctx: 16 }, new Registry(), () => undefined);
    const [a, b] = [await served(r.open, '!'), await served(plain.open, '!')];
    expect(a.choices[0]!.text).to.equal(b.choices[0]!.text);
    expect(a.usage!.completion_tokens).to.equal(4);
  });

  it('a route that accepts serves its route model\'s tokens, and gets the --npu-opt options', async () => {
    const dir = join(model.dir, 'echo');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'echo' }));
    writeTinyTokenizer(dir);
    const r = await resolveModel(dir, { target: 'host', npuOpts: { tiles: '4' } }, registry, () => undefined);
    expect(r.route).to.equal('echo');
    const c = await served(r.open, ' hello world');
    expect(c.choices[0]!.text).to.equal(' hello world');
    expect(c.choices[0]!.finish_reason).to.equal('length');
    expect(seen.options).to.deep.equal({ target: 'host', npuOpts: { tiles: '4' } });
    expect(registry.commands.map((x) => x.name)).to.deep.equal(['echo-info']);
  });

  it('a model_type nothing serves is refused: its route is not part of this build', async () => {
    const dir = join(model.dir, 'mamba');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'mamba' }));
    const e = await resolveModel(dir, { target: 'host' }, registry, () => undefined).catch((x: unknown) => x);
    expect(e).to.be.instanceOf(InvalidInput);
    expect((e as InvalidInput).message).to.equal(`invalid input at ${join(dir, 'config.json')}: model_type "mamba": its route is not part of this build (the built-in path serves qwen3; an add-on may add it with --addon)`);
  });
});

describe('serve: a misbehaving add-on is an AddonError naming it and the hook', function () {
  this.timeout(60_000);
  let model: ReturnType<typeof tinyModel>;
  before(() => { model = tinyModel(); });
  after(() => model.remove());

  const addonFile = (name: string, body: string) => { const p = join(model.dir, name); writeFileSync(p, body); return p; };

  it('an import that never settles is refused at the load bound (loadMs) with hook load', async () => {
    const spec = addonFile('hang.mjs', 'await new Promise(() => {});\nexport function register() {}');
    const e = await loadAddon(spec, new Registry(), { loadMs: 200 }).catch((x: unknown) => x);
    expect(e).to.be.instanceOf(AddonError);
    expect([(e as AddonError).addon, (e as AddonError).hook]).to.deep.equal([spec, 'load']);
    expect((e as AddonError).reason).to.include('did not settle within 200 ms');
  });

  it('a route model whose generate throws mid-stream, and whose close throws, fail with hooks generate and close', async () => {
    const spec = addonFile('bad.mjs', `export function register(r) {
  r.addRoute({ modelType: 'bad', canServe: () => true, async open() {
    return { async *generate() { yield 5; throw new Error('lost the device'); }, async close() { throw new Error('stuck'); } };
  } });
}`);
    const registry = new Registry();
    await loadAddon(spec, registry);
    const dir = join(model.dir, 'bad');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'bad' }));
    writeTinyTokenizer(dir);
    const served = await (await resolveModel(dir, { target: 'host' }, registry, () => undefined)).open();
    const ids: number[] = [];
    const e = await (async () => { for await (const t of served.generate({ promptIds: [1, 2], maxTokens: 4 })) ids.push(t.id); })().catch((x: unknown) => x);
    expect(ids).to.deep.equal([5]);
    expect(e).to.be.instanceOf(AddonError);
    expect((e as AddonError).hook).to.equal('generate');
    expect((e as AddonError).reason).to.equal("the bad route's generate threw Error: lost the device");
    const c = await served.close().catch((x: unknown) => x);
    expect(c).to.be.instanceOf(AddonError);
    expect(c).to.have.property('message', `add-on ${spec} failed in close: the bad route's close threw Error: stuck`);
  });
});

describe('add-ons: the load bound from NPU_OFFLOAD_ADDON_LOAD_MS', () => {
  const KEY = 'NPU_OFFLOAD_ADDON_LOAD_MS';
  const was = process.env[KEY];
  // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- delete is how an environment variable is unset
  afterEach(() => { if (was === undefined) delete process.env[KEY]; else process.env[KEY] = was; });
  const refused = (v: string): unknown => { process.env[KEY] = v; try { addonLoadMs(); return undefined; } catch (e) { return e; } };

  it('takes whole ms from 1 to the longest timer, and refuses past it (a timer fires at once beyond 2^31 - 1 ms)', () => {
    process.env[KEY] = '2147483647';
    expect(addonLoadMs()).to.equal(2 ** 31 - 1);
    for (const v of ['2147483648', '3000000000', '0', '1.5']) {
      const e = refused(v);
      expect(e, v).to.be.instanceOf(InvalidOptions);
      expect((e as InvalidOptions).message).to.include(KEY);
    }
  });
});
