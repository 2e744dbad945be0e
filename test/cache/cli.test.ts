import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheCommand } from '../../src/cli/cache.js';
import { BlobCache, identityKey } from '../../src/cache/index.js';
import { identity, makeTempDir, patternBody, removeTempDir } from './helpers/fixture.js';

function run(sub: Parameters<typeof cacheCommand>[0], opts: Parameters<typeof cacheCommand>[1]): { code: number; lines: string[]; errs: string[] } {
  const lines: string[] = [];
  const errs: string[] = [];
  const code = cacheCommand(sub, opts, { out: (l) => lines.push(l), err: (l) => errs.push(l) });
  return { code, lines, errs };
}

describe('cache CLI command', () => {
  let dir: string;
  beforeEach(() => {
    dir = makeTempDir();
    const cache = BlobCache.open(dir);
    cache.put(identity(0), patternBody(1, 2000));
    cache.put(identity(1, 'npu4:lnl'), patternBody(2, 3000));
    cache.close();
  });
  afterEach(() => removeTempDir(dir));

  it('ls prints a table and JSON', () => {
    const t = run('ls', { cacheDir: dir });
    expect(t.code).to.equal(0);
    expect(t.lines[0]).to.match(/^KEY\s+DEVICE\s+COMPILER\s+SIZE\s+CREATED\s+LAST USED$/);
    expect(t.lines[1]).to.include(identityKey(identity(0)).slice(0, 16)).and.include('xdna2:aie2p').and.include('iron 1.4.0');
    expect(t.lines[2]).to.include('npu4:lnl');
    expect(t.lines[3]).to.match(/^2 entries, [\d.]+ KiB in /);
    const j = run('ls', { cacheDir: dir, json: true });
    const doc = JSON.parse(j.lines.join('\n')) as { entries: { key: string; lastUsed: string }[] };
    expect(doc.entries.map((e) => e.key)).to.deep.equal([identityKey(identity(0)), identityKey(identity(1, 'npu4:lnl'))]);
    expect(Date.parse(doc.entries[0]!.lastUsed)).to.be.closeTo(Date.now(), 60_000);
  });

  it('verify exits 1 and names a damaged entry, then 0', () => {
    const cache = BlobCache.open(dir);
    const path = cache.blobPath(identityKey(identity(1, 'npu4:lnl')));
    cache.close();
    writeFileSync(path, readFileSync(path).subarray(0, 50));
    const r = run('verify', { cacheDir: dir, json: true });
    expect(r.code).to.equal(1);
    const doc = JSON.parse(r.lines[0]!) as { ok: unknown[]; bad: { key: string; reason: string }[] };
    expect(doc.ok.length).to.equal(1);
    expect(doc.bad).to.have.length(1);
    expect(doc.bad[0]).to.include({ key: identityKey(identity(1, 'npu4:lnl')), reason: 'truncated' });
    const again = run('verify', { cacheDir: dir });
    expect(again.code).to.equal(0);
    expect(again.lines.at(-1)).to.equal('1 ok, 0 re-indexed, 0 bad (removed), 0 stray files swept');
  });

  it('gc needs maxBytes and removes down to it; clear empties', () => {
    const bad = run('gc', { cacheDir: dir });
    expect(bad.code).to.equal(2);
    expect(bad.lines).to.deep.equal([]);
    expect(bad.errs).to.have.length(1);
    expect(bad.errs[0]).to.match(/^error \[UsageError\]: cache gc needs --max-bytes/);
    const badJson = run('gc', { cacheDir: dir, json: true });
    expect(badJson.code).to.equal(2);
    expect(badJson.errs).to.deep.equal([]);
    expect(JSON.parse(badJson.lines[0]!)).to.deep.equal({ error: { code: 'UsageError', reason: 'cache gc needs --max-bytes, a number of bytes of at least 0' } });
    const gc = run('gc', { cacheDir: dir, maxBytes: 4000, json: true });
    expect(gc.code).to.equal(0);
    const doc = JSON.parse(gc.lines[0]!) as { removed: { key: string }[]; freedBytes: number };
    expect(doc.removed.map((e) => e.key)).to.deep.equal([identityKey(identity(0))]);
    expect(doc.freedBytes).to.be.greaterThan(2000);
    const clear = run('clear', { cacheDir: dir });
    expect(clear.code).to.equal(0);
    expect(clear.lines.at(-1)).to.match(/^removed 1 entry, freed [\d.]+ KiB$/);
    expect(run('ls', { cacheDir: dir, json: true }).lines[0]).to.include('"entries":[]');
  });

  it('reports an unusable cache directory as CacheUnavailable naming the path and the cause', () => {
    const file = join(dir, 'file');
    writeFileSync(file, '');
    const r = run('ls', { cacheDir: join(file, 'sub'), json: true });
    expect(r.code).to.equal(1);
    expect(r.errs).to.deep.equal([]);
    const doc = JSON.parse(r.lines[0]!) as { error: { code: string; path: string; reason: string } };
    expect(doc.error).to.include({ code: 'CacheUnavailable', path: join(file, 'sub') });
    expect(doc.error.reason).to.contain('ENOTDIR');
    const text = run('verify', { cacheDir: join(file, 'sub') });
    expect(text.code).to.equal(1);
    expect(text.lines).to.deep.equal([]);
    expect(text.errs).to.have.length(1);
    expect(text.errs[0]).to.match(/^error \[CacheUnavailable\]: the blob cache at .*\/file\/sub cannot be used: .*ENOTDIR/);
  });
});
