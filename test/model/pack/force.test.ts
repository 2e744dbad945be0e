/**
 * What `gguf pack` may replace (issue 9, item 1): never its own input, and with --force only a
 * previous pack. The repack cache still rebuilds its own slot whatever it holds.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../../src/errors/index.js';
import { cacheKey, packCached } from '../../../src/model/pack/cache.js';
import { PACK_FILES } from '../../../src/model/pack/outDir.js';
import { packGguf } from '../../../src/model/pack/pack.js';
import { Workspace } from './helpers.js';

describe('gguf pack: what --force may replace', () => {
  let ws: Workspace;
  beforeEach(() => { ws = new Workspace(); });
  afterEach(() => ws.remove());

  it('refuses an OUTDIR that holds the GGUF or the tokenizer, with or without force, deleting nothing', () => {
    mkdirSync(ws.path('out/models'), { recursive: true });
    const g = ws.tiny('out/models/t.gguf');
    writeFileSync(ws.path('out/models/tokenizer.json'), '{}');
    writeFileSync(ws.path('out/notes.txt'), 'mine');
    for (const force of [false, true]) {
      expect(() => packGguf(g, ws.path('out'), { tokenizer: ws.path('out/models'), force })).to.throw(UsageError, /holds the GGUF/);
      expect(() => packGguf(g, ws.path('out/models'), { tokenizer: ws.tokenizer, force })).to.throw(UsageError, /holds the GGUF/);
    }
    const other = ws.tiny('o.gguf');
    expect(() => packGguf(other, ws.dir, { tokenizer: ws.tokenizer, force: true })).to.throw(UsageError, /holds the GGUF/);
    expect(() => packGguf(other, ws.path('out'), { tokenizer: ws.path('out/models'), force: true })).to.throw(UsageError, /holds the tokenizer directory/);
    expect(readdirSync(ws.path('out')).sort()).to.deep.equal(['models', 'notes.txt']);
    expect(readdirSync(ws.path('out/models')).sort()).to.deep.equal(['t.gguf', 'tokenizer.json']);
  });

  it('with force, replaces a previous pack and nothing else, naming what it would remove', () => {
    const g = ws.tiny('t.gguf');
    const out = ws.path('out');
    packGguf(g, out, { tokenizer: ws.tokenizer });
    writeFileSync(join(out, 'config.json'), '{"stale":true}');
    packGguf(g, out, { tokenizer: ws.tokenizer, force: true });
    expect(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'))).to.have.property('architectures');
    writeFileSync(join(out, 'notes.txt'), 'mine');
    mkdirSync(join(out, 'sub'));
    expect(() => packGguf(g, out, { tokenizer: ws.tokenizer, force: true })).to.throw(UsageError, /--force would remove .*out with "notes\.txt", "sub"/);
    expect(readdirSync(out).sort()).to.deep.equal(['config.json', 'model.q4nx', 'notes.txt', 'sub', 'tokenizer.json']);
  });

  it('with force, refuses a directory of pack-named files that holds no model.q4nx', () => {
    mkdirSync(ws.path('hf'));
    writeFileSync(ws.path('hf/config.json'), '{"mine":1}');
    expect(() => packGguf(ws.tiny('t.gguf'), ws.path('hf'), { tokenizer: ws.tokenizer, force: true })).to.throw(UsageError, /holds no model\.q4nx/);
    expect(readFileSync(ws.path('hf/config.json'), 'utf8')).to.equal('{"mine":1}');
  });

  it('a previous pack is exactly the files pack writes, the stamp included', () => {
    const g = ws.tiny('t.gguf');
    writeFileSync(join(ws.tokenizer, 'tokenizer_config.json'), '{}');
    const root = ws.path('cache');
    const { dir } = packCached(g, { tokenizer: ws.tokenizer, cacheRoot: root });
    expect(readdirSync(dir).every((f) => PACK_FILES.includes(f))).to.equal(true);
    expect(readdirSync(dir)).to.have.length(PACK_FILES.length);
    // A cache slot is the cache's own: a damaged one holding a stray file is still rebuilt.
    rmSync(join(dir, 'model.q4nx'));
    writeFileSync(join(dir, 'stray'), 'x');
    const again = packCached(g, { tokenizer: ws.tokenizer, cacheRoot: root });
    expect(again.hit).to.equal(false);
    expect(again.dir).to.equal(join(root, cacheKey(g)));
    expect(existsSync(join(dir, 'model.q4nx'))).to.equal(true);
    expect(existsSync(join(dir, 'stray'))).to.equal(false);
  });
});
