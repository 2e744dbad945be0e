/**
 * A long-running engine whose blob cache directory is unusable (CacheUnavailable) recovers once the
 * directory is fixed: jobs meanwhile fail at once with CacheUnavailable, and the first job after the
 * backoff (1 s doubling to 60 s by default; the test's own clock here) opens the cache and uses it.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobCache } from '../../src/cache/blobCache.js';
import { CacheUnavailable, InvalidOptions } from '../../src/errors/index.js';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { chainProgram } from './helpers.js';

describe('engine: a refused blob cache is tried again with backoff', function () {
  let root: string;
  let engine: Engine | undefined;
  beforeEach(() => { root = mkdtempSync(join(tmpdir(), 'npu-cacheretry-')); });
  afterEach(async () => { await engine?.close(); engine = undefined; rmSync(root, { recursive: true, force: true }); });

  it('CacheUnavailable while the directory is a file; fixed and past the backoff, the next job uses the cache', async () => {
    const dir = join(root, 'cache');
    writeFileSync(dir, 'a file where the cache directory belongs');
    let clock = 0;
    engine = createEngine({ cacheDir: dir, workers: 1, cacheRetry: { now: () => clock } });
    let err: unknown;
    await engine.compileOnly(chainProgram(2, 1), 'cpu').catch((e: unknown) => { err = e; });
    expect(err).to.be.instanceOf(CacheUnavailable);

    // Fixed, but the backoff (1000 ms by default) has not passed: still the refusal, at once.
    rmSync(dir);
    clock = 999;
    err = undefined;
    await engine.compileOnly(chainProgram(2, 1), 'cpu').catch((e: unknown) => { err = e; });
    expect(err).to.be.instanceOf(CacheUnavailable);

    clock = 1000;
    const first = await engine.compileOnly(chainProgram(2, 1), 'cpu');
    expect(first.hit).to.equal(false);
    const again = await engine.compileOnly(chainProgram(2, 1), 'cpu');
    expect(again.hit).to.equal(true);
    expect(await engine.cacheStats()).to.include({ stored: 1, localHits: 1 });
    await engine.close();
    engine = undefined;
    const cache = BlobCache.open(dir);
    try { expect(cache.list().map((e) => e.key)).to.deep.equal(first.keys); } finally { cache.close(); }
  });

  it('refuses a cacheRetry that is not a positive number of ms', () => {
    expect(() => createEngine({ cacheRetry: { firstMs: 0 } })).to.throw(InvalidOptions, /cacheRetry.firstMs/);
    expect(() => createEngine({ cacheRetry: { maxMs: -1 } })).to.throw(InvalidOptions, /cacheRetry.maxMs/);
  });
});
