/**
 * The remote cache tier against a real redis-server: a compile is published, an engine with an empty
 * local cache gets it without compiling, a damaged or foreign remote entry is a miss that the recompile
 * replaces, and a server that is down, goes down, or never answers costs a warning, not a job.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { BlobCache } from '../../src/cache/blobCache.js';
import { decodeBlob } from '../../src/cache/blobFile.js';
import { resolveIdentity } from '../../src/cache/identity.js';
import { RemoteTier } from '../../src/cache/remoteTier.js';
import { InvalidOptions } from '../../src/errors/index.js';
import { createEngine, type Engine, type EngineOptions } from '../../src/jobs/engine.js';
import { chainProgram } from '../jobs/helpers.js';
import { redisOrSkip, startRedis, type RedisServer } from './redisServer.js';

describe('remote cache tier (Redis)', function () {
  let redis: RedisServer;
  let client: Redis;
  let root: string;
  let n = 0;
  const engines: Engine[] = [];

  before(async function () {
    redis = await redisOrSkip(this);
    client = new Redis(redis.url(1));
  });
  after(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when before() skipped
    await client?.quit();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when before() skipped
    await redis?.stop();
  });
  beforeEach(() => { root = mkdtempSync(join(tmpdir(), 'npu-remote-')); });
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
    rmSync(root, { recursive: true, force: true });
    await client.flushdb();
  });

  /** An engine on a fresh local cache, on the remote tier (db 1 of the test server) unless told otherwise. */
  function engine(opts: EngineOptions = {}): Engine {
    const e = createEngine({ cacheDir: join(root, `local${n++}`), remoteCache: redis.url(1), workers: 1, ...opts });
    engines.push(e);
    return e;
  }

  async function remoteBytes(key: string): Promise<Buffer> {
    const b = await client.getBuffer(RemoteTier.keyOf(key));
    if (b === null) throw new Error(`no remote entry for ${key}`);
    return b;
  }

  it('a compile is published; an engine with an empty local cache gets it as a remote hit, compiling nothing', async () => {
    const a = engine();
    const first = await a.compileOnly(chainProgram(3, 1), 'cpu');
    expect(first.hit).to.equal(false);
    expect(await a.cacheStats()).to.include({ stored: 1, remoteHits: 0 });
    expect(decodeBlob(await remoteBytes(first.keys[0]!), first.keys[0]!).ok).to.equal(true);

    const bDir = join(root, 'b');
    const b = engine({ cacheDir: bDir });
    const second = await b.compileOnly(chainProgram(3, 1), 'cpu');
    expect(second).to.deep.equal({ keys: first.keys, hit: true });
    const s = await b.cacheStats();
    expect(s).to.include({ remoteHits: 1, stored: 0, misses: 0 });
    expect(s.remote).to.include({ hits: 1, published: 0 });
    await b.close();
    // Written through to the local cache: an engine with no remote tier at all now hits locally.
    const local = BlobCache.open(bDir);
    expect(local.list().map((e) => e.key)).to.deep.equal(first.keys);
    local.close();
    const c = createEngine({ cacheDir: bDir, workers: 1 });
    engines.push(c);
    expect((await c.compileOnly(chainProgram(3, 1), 'cpu')).hit).to.equal(true);
    expect(await c.cacheStats()).to.include({ localHits: 1, remoteHits: 0, stored: 0 });
  });

  // Each kind of damage on an entry of its own, in one run of three engines (publish, meet the damage,
  // take the replacement) rather than three runs each: the engines' start was most of each case.
  const damages: [string, (own: Buffer, other: Buffer) => Buffer][] = [
    ['overwritten with another identity\'s blob', (_own, other) => other],
    ['truncated', (own) => own.subarray(0, own.length - 7)],
    ['bit-flipped in the body', (own) => { const b = Buffer.from(own); b[b.length - 3]! ^= 0x10; return b; }],
  ];
  it(`a remote entry ${damages.map(([what]) => what).join(', or ')} is a miss, a recompile and a replacement`, async () => {
    const a = engine();
    const salts = damages.map((_, i) => 10 + i);
    const keys: string[] = [];
    for (const salt of salts) keys.push((await a.compileOnly(chainProgram(2, salt), 'cpu')).keys[0]!);
    const other = (await a.compileOnly(chainProgram(2, 19), 'cpu')).keys[0]!;
    for (const [i, [, damage]] of damages.entries()) {
      await client.set(RemoteTier.keyOf(keys[i]!), damage(await remoteBytes(keys[i]!), await remoteBytes(other)));
    }

    const b = engine();
    for (const [i, [what]] of damages.entries()) expect((await b.compileOnly(chainProgram(2, salts[i]), 'cpu')).hit, `${what}: a miss`).to.equal(false);
    const s = await b.cacheStats();
    expect(s, 'every damaged entry recompiled').to.include({ remoteHits: 0, stored: damages.length });
    expect(s.remote, 'every damaged entry counted and republished').to.include({ damaged: damages.length, published: damages.length });
    // Replaced by a sound entry of this very identity, which the next engine takes as a hit.
    const c = engine();
    for (const [i, [what]] of damages.entries()) {
      expect(decodeBlob(await remoteBytes(keys[i]!), keys[i]!).ok, `${what}: replaced by a sound entry`).to.equal(true);
      expect((await c.compileOnly(chainProgram(2, salts[i]), 'cpu')).hit, `${what}: the replacement is a hit`).to.equal(true);
    }
    expect(await c.cacheStats()).to.include({ remoteHits: damages.length, stored: 0 });
  });

  // Each wrong type on a key of its own, in one run of three engines, as the damages above.
  const wrongTypes: [string, (k: string) => Promise<unknown>][] = [
    ['a list', (k) => client.rpush(k, 'not', 'a', 'blob')],
    ['a hash', (k) => client.hset(k, 'field', 'value')],
    ['a set', (k) => client.sadd(k, 'member')],
  ];
  it(`a remote key that is ${wrongTypes.map(([what]) => what).join(', or ')} is that entry's miss, replaced; the tier stays up for the others`, async () => {
    const a = engine();
    const salts = wrongTypes.map((_, i) => 30 + i);
    const keys: string[] = [];
    for (const salt of salts) keys.push((await a.compileOnly(chainProgram(2, salt), 'cpu')).keys[0]!);
    const q = await a.compileOnly(chainProgram(2, 39), 'cpu');
    for (const [i, [, make]] of wrongTypes.entries()) {
      const bad = RemoteTier.keyOf(keys[i]!);
      await client.del(bad);
      await make(bad);
    }

    const warnings: string[] = [];
    const b = engine({ onWarning: (m) => warnings.push(m) });
    for (const [i, [what]] of wrongTypes.entries()) expect((await b.compileOnly(chainProgram(2, salts[i]), 'cpu')).hit, `${what}: a miss`).to.equal(false);
    // The other entry is still served from the tier in the same run.
    expect((await b.compileOnly(chainProgram(2, 39), 'cpu')).hit, 'the sound entry beside them: a hit').to.equal(true);
    const s = await b.cacheStats();
    const n = wrongTypes.length;
    expect(s).to.include({ remoteHits: 1, stored: n });
    expect(s.remote).to.include({ damaged: n, published: n, hits: 1, unavailable: 0 });
    expect(warnings).to.deep.equal([]);
    // Replaced by a sound entry (a string of this identity's blob), which the next engine takes as a hit.
    const c = engine();
    for (const [i, [what]] of wrongTypes.entries()) {
      expect(await client.type(RemoteTier.keyOf(keys[i]!)), `${what}: replaced by a string`).to.equal('string');
      expect(decodeBlob(await remoteBytes(keys[i]!), keys[i]!).ok, `${what}: replaced by a sound entry`).to.equal(true);
      expect(q.keys[0]).to.not.equal(keys[i]);
      expect((await c.compileOnly(chainProgram(2, salts[i]), 'cpu')).hit, `${what}: the replacement is a hit`).to.equal(true);
    }
  });

  it('verify() names a key of the wrong Redis type as a bad entry and goes on', async () => {
    const a = engine();
    const keys = [];
    for (let i = 0; i < 2; i++) keys.push((await a.compileOnly(chainProgram(2, 40 + i), 'cpu')).keys[0]!);
    await client.del(RemoteTier.keyOf(keys[0]!));
    await client.rpush(RemoteTier.keyOf(keys[0]!), 'x');
    const tier = new RemoteTier(redis.url(1));
    try {
      const v = await tier.verify();
      expect(v.ok).to.deep.equal([keys[1]!]);
      expect(v.bad).to.deep.equal([{ key: keys[0]!, reason: 'unreadable' }]);
    } finally {
      await tier.close();
    }
  });

  it('verify() checks every remote entry and names the bad ones without removing them', async () => {
    const a = engine();
    const keys = [];
    for (let i = 0; i < 3; i++) keys.push((await a.compileOnly(chainProgram(2, 20 + i), 'cpu')).keys[0]!);
    const own = await remoteBytes(keys[1]!);
    await client.set(RemoteTier.keyOf(keys[1]!), own.subarray(0, 50));
    const tier = new RemoteTier(redis.url(1));
    try {
      const v = await tier.verify();
      expect(v.ok).to.deep.equal([keys[0]!, keys[2]!].sort());
      expect(v.bad).to.deep.equal([{ key: keys[1]!, reason: 'truncated' }]);
      expect(await tier.keys()).to.have.length(3);
    } finally {
      await tier.close();
    }
  });

  it('a remote tier that goes down mid-run is one warning; compiles go on locally', async () => {
    const own = await startRedis();
    const warnings: string[] = [];
    try {
      const e = engine({ remoteCache: own.url(0), onWarning: (m) => warnings.push(m) });
      expect((await e.compileOnly(chainProgram(2, 40), 'cpu')).hit).to.equal(false);
      expect((await e.cacheStats()).remote).to.include({ published: 1 });
      await own.stop();
      for (let i = 41; i < 44; i++) expect((await e.compileOnly(chainProgram(2, i), 'cpu')).hit).to.equal(false);
      expect(warnings).to.have.length(1);
      expect(await e.cacheStats()).to.include({ stored: 4 });
    } finally {
      await own.stop();
    }
  });
});

describe('remote cache tier: no server, or not a Redis one (no redis-server needed)', () => {
  let root: string;
  beforeEach(() => { root = mkdtempSync(join(tmpdir(), 'npu-remote-')); });
  afterEach(() => { rmSync(root, { recursive: true, force: true }); });

  it('a remote tier that is down is one warning and local compiles, never a failed job', async () => {
    const warnings: string[] = [];
    // Port 1 on loopback: nothing listens there.
    const e = createEngine({ cacheDir: join(root, 'local'), workers: 1, remoteCache: 'redis://127.0.0.1:1/0', onWarning: (m) => warnings.push(m) });
    try {
      const outcomes = await Promise.all([1, 2, 3].map((i) => e.compileOnly(chainProgram(2, 30 + i), 'cpu')));
      expect(outcomes.map((o) => o.hit)).to.deep.equal([false, false, false]);
      expect((await e.compileOnly(chainProgram(2, 31), 'cpu')).hit).to.equal(true); // the local tier still serves
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.match(/remote cache redis:\/\/127\.0\.0\.1:1\/0 cannot be used \(.*ECONNREFUSED.*\); compiling locally/);
      const s = await e.cacheStats();
      expect(s).to.include({ stored: 3, localHits: 1 });
      expect(s.remote!.unavailable).to.be.at.least(3);
    } finally {
      await e.close();
    }
  });

  it('a port that accepts and never answers is bounded by the connect timeout', async () => {
    const silent: Server = createServer(() => { /* never answers */ });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const port = (silent.address() as { port: number }).port;
    const warnings: string[] = [];
    const tier = new RemoteTier(`redis://127.0.0.1:${port}`, { connectTimeoutMs: 300, onWarning: (m) => warnings.push(m) });
    try {
      const r = resolveIdentity({ device: 'cpu', compiler: 't', compilerVersion: '1', options: {}, region: { n: 1 } });
      expect(await tier.fetch(r)).to.equal(null);
      expect(await tier.publish(r, Buffer.from('x'))).to.equal(false);
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.contain('no answer within 300 ms');
      expect(tier.stats).to.include({ unavailable: 2, hits: 0, published: 0 });
    } finally {
      await tier.close();
      silent.close();
    }
  });

  it('a remoteCache that is not a redis:// URL is refused by createEngine, naming the option', () => {
    for (const bad of ['http://127.0.0.1:6379', 'redis://', 'redis://h:99999', 'redis://h/x', 'not a url']) {
      expect(() => createEngine({ remoteCache: bad }), bad).to.throw(InvalidOptions).with.property('field', 'remoteCache');
    }
  });
});
