/**
 * A broken index costs rows, never blobs: an emptied index or one that lost its WAL is re-indexed from
 * the blob files by verify, and a damaged index file is moved aside (kept) and rebuilt.
 */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BlobCache, CACHE_SCHEMA_VERSION, identityKey } from '../../src/cache/index.js';
import { CacheUnavailable } from '../../src/errors/index.js';
import { cacheCommand } from '../../src/cli/cache.js';
import { filesEndingWith, identity, makeTempDir, patternBody, removeTempDir } from './helpers/fixture.js';

const KEYS = [0, 1, 2].map((n) => identityKey(identity(n)));

function run(sub: Parameters<typeof cacheCommand>[0], opts: Parameters<typeof cacheCommand>[1]) {
  const outs: string[] = [];
  const errs: string[] = [];
  const code = cacheCommand(sub, opts, { out: (l) => outs.push(l), err: (l) => errs.push(l) });
  return { code, outs, errs };
}

describe('BlobCache: rebuilding a lost or damaged index from the blob files', () => {
  let dir: string;
  let indexFile: string;
  beforeEach(() => {
    dir = makeTempDir();
    indexFile = join(dir, `v${CACHE_SCHEMA_VERSION}`, 'index.sqlite');
    const cache = BlobCache.open(dir);
    for (const n of [0, 1, 2]) cache.put(identity(n), patternBody(n, 1000 + n));
    cache.close();
  });
  afterEach(() => removeTempDir(dir));

  function asideFiles(): string[] {
    return readdirSync(join(dir, `v${CACHE_SCHEMA_VERSION}`)).filter((n) => n.startsWith('index.sqlite.damaged-'));
  }

  /** Every entry is back with its body, and every blob file is still there. */
  function expectAllBack(cache: BlobCache): void {
    expect(cache.list().map((e) => e.key).sort()).to.deep.equal([...KEYS].sort());
    for (const n of [0, 1, 2]) expect(cache.get(identity(n))).to.deep.equal(patternBody(n, 1000 + n));
    expect(filesEndingWith(cache.blobDir, '.blob')).to.have.length(3);
  }

  it('verify re-indexes every blob of an emptied index and deletes none', () => {
    const db = new Database(indexFile);
    db.exec('DELETE FROM entries');
    db.close();
    const cache = BlobCache.open(dir);
    try {
      expect(cache.get(identity(0)), 'a file with no row is not an entry').to.equal(null);
      const r = cache.verify();
      expect(r.swept).to.deep.equal([]);
      expect(r.bad).to.deep.equal([]);
      expect(r.reindexed.map((e) => e.key).sort()).to.deep.equal([...KEYS].sort());
      expect(r.reindexed[0]).to.include({ device: 'xdna2:aie2p', compiler: 'iron', compilerVersion: '1.4.0' });
      expectAllBack(cache);
    } finally {
      cache.close();
    }
  });

  it('verify re-indexes the blobs whose rows were lost with the WAL', () => {
    // The rows of a live connection sit in the WAL; a copy of the main file alone is the index after a lost WAL.
    const saved = join(dir, 'main-only.sqlite');
    const live = BlobCache.open(dir);
    live.put(identity(3), patternBody(3, 500));
    copyFileSync(indexFile, saved);
    live.close();
    rmSync(`${indexFile}-wal`, { force: true });
    copyFileSync(saved, indexFile);
    const cache = BlobCache.open(dir);
    try {
      cache.verify();
      expect(cache.get(identity(3))).to.deep.equal(patternBody(3, 500));
      expect(cache.list()).to.have.length(4);
    } finally {
      cache.close();
    }
  });

  for (const [what, damage] of [
    ['garbage', (f: Buffer) => Buffer.from(Array.from({ length: f.length }, (_, i) => (i * 7919 + 13) & 0xff))],
    ['truncated', (f: Buffer) => f.subarray(0, 100)],
    ['cut at a page', (f: Buffer) => f.subarray(0, 4096)],
  ] as const) {
    it(`moves a ${what} index aside, keeps it, and rebuilds it at open`, () => {
      const damaged = damage(readFileSync(indexFile));
      writeFileSync(indexFile, damaged);
      const cache = BlobCache.open(dir);
      try {
        const repaired = cache.repairedIndex;
        expect(repaired).to.not.equal(null);
        expect(repaired!.reason).to.match(/not a database|malformed/);
        expect(readFileSync(repaired!.movedTo).equals(damaged), 'the damaged file is kept as it was').to.equal(true);
        expect(asideFiles()).to.have.length(1);
        expectAllBack(cache);
      } finally {
        cache.close();
      }
      expect(BlobCache.open(dir).repairedIndex, 'the new index is sound').to.equal(null);
    });
  }

  it('moves the WAL aside with the damaged index, so SQLite tools still pair them', () => {
    writeFileSync(indexFile, 'not an index at all');
    writeFileSync(`${indexFile}-wal`, 'stale wal');
    const cache = BlobCache.open(dir);
    try {
      expect(readFileSync(`${cache.repairedIndex!.movedTo}-wal`, 'utf8')).to.equal('stale wal');
      expectAllBack(cache);
    } finally {
      cache.close();
    }
  });

  it('refuses a damaged index with CacheUnavailable when asked not to repair, touching nothing', () => {
    writeFileSync(indexFile, 'garbage');
    let err: unknown;
    try { BlobCache.open(dir, { repairIndex: false }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(CacheUnavailable);
    expect((err as CacheUnavailable).path).to.equal(indexFile);
    expect((err as CacheUnavailable).reason).to.match(/file is not a database.*cache verify/);
    expect(readFileSync(indexFile, 'utf8')).to.equal('garbage');
    expect(asideFiles()).to.deep.equal([]);
  });

  it('a directory in the index\'s place is not damage to repair: CacheUnavailable, nothing moved', () => {
    rmSync(indexFile);
    rmSync(`${indexFile}-wal`, { force: true });
    rmSync(`${indexFile}-shm`, { force: true });
    mkdirSync(indexFile);
    let err: unknown;
    try { BlobCache.open(dir); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(CacheUnavailable);
    expect((err as CacheUnavailable).path).to.equal(indexFile);
    expect((err as CacheUnavailable).reason).to.contain('SQLITE_CANTOPEN');
    expect(asideFiles()).to.deep.equal([]);
    expect(filesEndingWith(join(dir, `v${CACHE_SCHEMA_VERSION}`, 'blobs'), '.blob')).to.have.length(3);
  });

  it('cache verify rebuilds a damaged index and says so (exit 1), then finds it sound (exit 0)', () => {
    writeFileSync(indexFile, 'garbage');
    const r = run('verify', { cacheDir: dir, json: true });
    expect(r.code).to.equal(1);
    const doc = JSON.parse(r.outs[0]!) as { repairedIndex: { movedTo: string; reason: string }; reindexed: { key: string }[]; bad: unknown[]; swept: unknown[] };
    expect(doc.repairedIndex.reason).to.equal('file is not a database');
    expect(existsSync(doc.repairedIndex.movedTo)).to.equal(true);
    expect(doc.reindexed.map((e) => e.key).sort()).to.deep.equal([...KEYS].sort());
    expect([doc.bad, doc.swept]).to.deep.equal([[], []]);
    const again = run('verify', { cacheDir: dir });
    expect(again.code).to.equal(0);
    expect(again.outs.at(-1)).to.equal('3 ok, 0 re-indexed, 0 bad (removed), 0 stray files swept');
  });

  it('cache ls refuses a damaged index, pointing at verify; cache clear rebuilds it and removes every entry', () => {
    writeFileSync(indexFile, 'garbage');
    const ls = run('ls', { cacheDir: dir });
    expect(ls.code).to.equal(1);
    expect(ls.errs).to.have.length(1);
    expect(ls.errs[0]).to.match(/^error \[CacheUnavailable\]: .*file is not a database.*cache verify/);
    const clear = run('clear', { cacheDir: dir });
    expect(clear.code).to.equal(0);
    expect(clear.outs[0]).to.match(/^damaged index \(file is not a database\) moved aside to .*index\.sqlite\.damaged-/);
    expect(clear.outs.at(-1)).to.match(/^removed 3 entries, freed [\d.]+ KiB$/);
    expect(filesEndingWith(join(dir, `v${CACHE_SCHEMA_VERSION}`, 'blobs'), '.blob')).to.deep.equal([]);
    expect(asideFiles()).to.have.length(1);
  });
});
