import { expect } from 'chai';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { InvalidInput } from '../../src/errors/index.js';
import { packGguf } from '../../src/model/pack/pack.js';
import { writeTinyQwen3 } from '../../src/model/qwen3/tiny.js';
import { Registry, loadAddon } from '../../src/serve/addons.js';
import { qwen3TokenizerDir } from '../../src/serve/demo.js';
import { resolveModel } from '../../src/serve/open.js';
import { createServer } from '../../src/serve/server.js';
import { seen } from './fixtures/addon.js';
import { tinyModel } from './helpers.js';

const ADDON = fileURLToPath(new URL('./fixtures/addon.js', import.meta.url));

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
    // Q4NX packs whole 256-column rows: this model is wider than the others.
    const gguf = join(model.dir, 'wide.gguf');
    writeTinyQwen3(gguf, { layers: 1, type: 'Q4_0' });
    const dir = join(model.dir, 'packed');
    packGguf(gguf, dir, { tokenizer: qwen3TokenizerDir() });
    const r = await resolveModel(dir, { target: 'cpu', ctx: 16 }, registry, (l) => lines.push(l));
    expect(r.route).to.equal('built-in');
    expect(seen.declined).to.equal(1);
    expect(lines.join('\n')).to.include('the test NPU is not present');
    const plain = await resolveModel(dir, { target: 'cpu', ctx: 16 }, new Registry(), () => undefined);
    const [a, b] = [await served(r.open, '!'), await served(plain.open, '!')];
    expect(a.choices[0]!.text).to.equal(b.choices[0]!.text);
    expect(a.usage!.completion_tokens).to.equal(4);
  });

  it('a route that accepts serves its session\'s tokens, and gets the --npu-opt options', async () => {
    const dir = join(model.dir, 'echo');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'echo' }));
    copyFileSync(join(qwen3TokenizerDir(), 'tokenizer.json'), join(dir, 'tokenizer.json'));
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
