import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeTinyQwen3 } from '../../src/model/qwen3/tiny.js';
import { Registry } from '../../src/serve/addons.js';
import { resolveModel } from '../../src/serve/open.js';
import { repacked } from '../../src/serve/repack.js';
import { tinyModel } from './helpers.js';

describe('serve: a GGUF on an NPU target goes through the repack cache', function () {
  this.timeout(120_000);
  let model: ReturnType<typeof tinyModel>;
  before(() => { model = tinyModel(); });
  after(() => model.remove());

  it('packs into the cache slot once, then checks and reuses it; the host target opens the GGUF directly', async () => {
    const gguf = join(model.dir, 'wide.gguf');
    writeTinyQwen3(gguf, { layers: 1, type: 'Q4_0' });
    const cache = join(model.dir, 'cache');
    const lines: string[] = [];
    const r = await resolveModel(gguf, { target: 'npu4', cacheDir: cache }, new Registry(), (l) => lines.push(l));
    expect(r.route).to.equal('repack');
    expect((await resolveModel(gguf, { target: 'host' }, new Registry(), () => undefined)).route).to.equal('built-in');
    const dir = repacked(gguf, (l) => lines.push(l), join(cache, 'q4nx'));
    expect(existsSync(join(dir, 'model.q4nx'))).to.equal(true);
    expect(lines.at(-1)).to.match(/^packed into the repack cache \(not cached yet\)/);
    expect(repacked(gguf, (l) => lines.push(l), join(cache, 'q4nx'))).to.equal(dir);
    expect(lines.at(-1)).to.equal(`repack cache hit: ${dir}`);
  });
});
