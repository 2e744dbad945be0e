import { expect } from 'chai';
import { existsSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BlobCache, CACHE_SCHEMA_VERSION, CacheError, defaultCacheDir, identityKey } from '../../src/cache/index.js';
import { CacheUnavailable } from '../../src/errors/index.js';
import { stampOf } from '../../src/cache/blobFile.js';
import { checkBody, filesEndingWith, identity, makeTempDir, patternBody, removeTempDir } from './helpers/fixture.js';

describe('BlobCache', () => {
  let dir: string;
  let cache: BlobCache;
  beforeEach(() => {
    dir = makeTempDir();
    cache = BlobCache.open(dir);
  });
  afterEach(() => {
    cache.close();
    removeTempDir(dir);
  });

  it('round-trips bytes through put and get, in files under the versioned folder', () => {
    const body = patternBody(1, 5000);
    expect(cache.get(identity())).to.equal(null);
    cache.put(identity(), body);
    const got = cache.get(identity());
    expect(got).to.deep.equal(body);
    // The returned Buffer owns its memory: its ArrayBuffer is exactly the artifact.
    expect(got!.buffer.byteLength).to.equal(body.length);
    expect(existsSync(join(dir, `v${CACHE_SCHEMA_VERSION}`, 'index.sqlite'))).to.equal(true);
    expect(existsSync(cache.blobPath(identityKey(identity())))).to.equal(true);
    expect(cache.get(identity(1))).to.equal(null);
    expect(cache.stats).to.include({ hits: 1, misses: 2, puts: 1 });
  });

  it('a second cache on the same directory (another thread or process) hits the first one\'s entry', () => {
    cache.put(identity(), patternBody(2, 300));
    const other = BlobCache.open(dir);
    try {
      expect(checkBody(other.get(identity())!)).to.equal(true);
      expect(other.get(identity())).to.deep.equal(patternBody(2, 300));
    } finally {
      other.close();
    }
  });

  it('invalidates, lists and clears', () => {
    cache.put(identity(0), patternBody(1, 100));
    cache.put(identity(1, 'npu4:lnl'), patternBody(2, 200));
    const entries = cache.list();
    expect(entries.map((e) => e.device)).to.deep.equal(['xdna2:aie2p', 'npu4:lnl']);
    const e1 = entries[1]!;
    expect(e1).to.include({ key: identityKey(identity(1, 'npu4:lnl')), compiler: 'iron', compilerVersion: '1.4.0' });
    expect(e1.size).to.equal(statSync(cache.blobPath(e1.key)).size);
    expect(e1.created).to.be.closeTo(Date.now(), 60_000);
    expect(cache.invalidate(identity(0))).to.equal(true);
    expect(cache.invalidate(identity(0))).to.equal(false);
    expect(cache.get(identity(0))).to.equal(null);
    expect(existsSync(cache.blobPath(identityKey(identity(0))))).to.equal(false);
    const cleared = cache.clear();
    expect(cleared.removed.map((e) => e.key)).to.deep.equal([e1.key]);
    expect(cleared.freedBytes).to.equal(e1.size);
    expect(cache.list()).to.deep.equal([]);
    expect(filesEndingWith(cache.blobDir, '.blob')).to.deep.equal([]);
  });

  it('gc removes least recently used entries first until under the cap', () => {
    for (let i = 0; i < 5; i++) cache.put(identity(i), patternBody(i, 1000));
    // Use 0 and 2 again: the LRU order becomes 1, 3, 4, 0, 2.
    expect(cache.get(identity(0))).to.not.equal(null);
    expect(cache.get(identity(2))).to.not.equal(null);
    const sizes = new Map(cache.list().map((e) => [e.key, e.size]));
    const size = (i: number) => sizes.get(identityKey(identity(i)))!;
    const r = cache.gc({ maxBytes: size(0) + size(2) });
    expect(r.removed.map((e) => e.key)).to.deep.equal([1, 3, 4].map((i) => identityKey(identity(i))));
    expect(r.freedBytes).to.equal(size(1) + size(3) + size(4));
    expect(cache.list().map((e) => e.key)).to.deep.equal([0, 2].map((i) => identityKey(identity(i))));
    expect(cache.get(identity(0))).to.deep.equal(patternBody(0, 1000));
    expect(cache.gc({ maxBytes: 1e9 }).removed).to.deep.equal([]);
    expect(cache.gc({ maxBytes: 0 }).removed.length).to.equal(2);
    expect(filesEndingWith(cache.blobDir, '.blob')).to.deep.equal([]);
    expect(() => cache.gc({ maxBytes: -1 })).to.throw(CacheError);
  });

  it('verify reports and removes a damaged entry, keeps the rest', () => {
    cache.put(identity(0), patternBody(1, 1000));
    cache.put(identity(1), patternBody(2, 1000));
    const path = cache.blobPath(identityKey(identity(1)));
    const file = readFileSync(path);
    file[file.length - 1]! ^= 0x10;
    writeFileSync(path, file);
    const r = cache.verify();
    expect(r.ok.map((e) => e.key)).to.deep.equal([identityKey(identity(0))]);
    expect(r.bad.map((b) => [b.entry.key, b.reason])).to.deep.equal([[identityKey(identity(1)), 'checksum']]);
    expect(existsSync(path)).to.equal(false);
    expect(cache.list().length).to.equal(1);
    expect(cache.verify().bad).to.deep.equal([]);
  });

  it('treats an index row whose blob file is missing as a miss and drops the row', async () => {
    cache.put(identity(), patternBody(1, 100));
    unlinkSync(cache.blobPath(identityKey(identity())));
    expect(cache.get(identity())).to.equal(null);
    expect(cache.list()).to.deep.equal([]);
    cache.put(identity(), patternBody(1, 100));
    expect(cache.get(identity())).to.deep.equal(patternBody(1, 100));
  });

  it('refuses use after close with a typed error', () => {
    cache.close();
    expect(() => cache.get(identity())).to.throw(CacheError, /closed/);
  });

  it('reports an unusable directory as CacheUnavailable, with its path and the cause', () => {
    const file = join(dir, 'plain-file');
    writeFileSync(file, 'x');
    let err: unknown;
    try { BlobCache.open(join(file, 'cache')); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(CacheUnavailable);
    expect((err as CacheUnavailable).code).to.equal('CacheUnavailable');
    expect((err as CacheUnavailable).path).to.equal(join(file, 'cache'));
    expect((err as CacheUnavailable).reason).to.match(/cannot be created or written: .*plain-file exists and is not a directory \(ENOTDIR\)/);
  });

  it('discarding a judged entry keeps the one a newer writer put in its place', () => {
    const key = identityKey(identity());
    cache.put(identity(), patternBody(1, 1000));
    const judged = stampOf(cache.blobPath(key));
    expect(judged).to.not.equal(null);
    cache.put(identity(), patternBody(2, 1500));
    cache.discard(key, judged);
    expect(cache.get(identity()), 'the newer entry survives').to.deep.equal(patternBody(2, 1500));
    expect(cache.list().map((e) => e.key)).to.deep.equal([key]);
    // The stamp of the file that is there now does discard it.
    cache.discard(key, stampOf(cache.blobPath(key)));
    expect(cache.get(identity())).to.equal(null);
    expect(existsSync(cache.blobPath(key))).to.equal(false);
    expect(cache.list()).to.deep.equal([]);
  });
});

describe('defaultCacheDir', () => {
  it('prefers NPU_OFFLOAD_CACHE_DIR, then XDG_CACHE_HOME, then ~/.cache', () => {
    expect(defaultCacheDir({ NPU_OFFLOAD_CACHE_DIR: '/a/b', XDG_CACHE_HOME: '/x' }, '/home/u')).to.equal('/a/b');
    expect(defaultCacheDir({ XDG_CACHE_HOME: '/x' }, '/home/u')).to.equal(join('/x', 'npu-offload'));
    expect(defaultCacheDir({}, '/home/u')).to.equal(join('/home/u', '.cache', 'npu-offload'));
    expect(defaultCacheDir({ NPU_OFFLOAD_CACHE_DIR: '', XDG_CACHE_HOME: '' }, '/home/u')).to.equal(join('/home/u', '.cache', 'npu-offload'));
  });

  it('is never relative to the working directory', () => {
    expect(defaultCacheDir({ XDG_CACHE_HOME: 'rel/x' }, '/home/u')).to.equal(join('/home/u', '.cache', 'npu-offload'));
    expect(() => defaultCacheDir({ NPU_OFFLOAD_CACHE_DIR: 'rel' }, '/home/u')).to.throw(CacheError, /absolute/);
  });
});
