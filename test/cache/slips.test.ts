/**
 * The remote tier's own counting and retry pause (issue 27 item 11): a miss, a damaged entry and a hit
 * each counted where `cacheStats` shows them, and a server that cannot be used is tried once, then
 * not again until `retryMs` has passed (default 10 s), then again. The outage is a local port that
 * accepts and closes every connection (counted); the counting uses a real redis-server when there is one.
 */
import { expect } from 'chai';
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { resolveIdentity } from '../../src/cache/identity.js';
import { RemoteTier } from '../../src/cache/remoteTier.js';
import { redisOrSkip, type RedisServer } from '../farm/redisServer.js';

const identity = (n: number) => resolveIdentity({ device: 'cpu', compiler: 'slips', compilerVersion: '1', options: {}, region: { n } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('remote tier slips: the retry pause after an outage', () => {
  let server: Server;
  let port = 0;
  let connections = 0;
  const sockets = new Set<Socket>();
  before(async () => {
    server = createServer((s) => { connections++; sockets.add(s); s.destroy(); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  after(async () => { await new Promise((r) => server.close(r)); });

  it('tries a server that cannot be used once, then not again within retryMs (default 10 s)', async () => {
    const warnings: string[] = [];
    const tier = new RemoteTier(`redis://127.0.0.1:${port}/0`, { connectTimeoutMs: 2000, onWarning: (w) => warnings.push(w) });
    const before = connections;
    expect(await tier.fetch(identity(1))).to.equal(null);
    expect(connections - before, 'the first fetch tries the server').to.be.at.least(1);
    const tried = connections;
    await sleep(60);
    expect(await tier.fetch(identity(2))).to.equal(null);
    expect(await tier.publish(identity(2), new Uint8Array([1]))).to.equal(false);
    expect(connections, 'no new attempt inside the default 10 s pause').to.equal(tried);
    expect(tier.stats.unavailable).to.equal(3);
    expect(warnings).to.have.length(1);
    await tier.close();
  });

  it('tries the server again once retryMs has passed', async () => {
    const tier = new RemoteTier(`redis://127.0.0.1:${port}/0`, { connectTimeoutMs: 2000, retryMs: 20 });
    await tier.fetch(identity(1));
    const tried = connections;
    await sleep(80);
    await tier.fetch(identity(1));
    expect(connections, 'a second attempt after the pause').to.be.above(tried);
    await tier.close();
  });
});

describe('remote tier slips: hits, misses and damaged entries counted', function () {
  let redis: RedisServer | undefined;
  let client: Redis | undefined;
  let tier: RemoteTier | undefined;
  before(async function () {
    redis = await redisOrSkip(this);
    client = new Redis(redis.url(2));
    tier = new RemoteTier(redis.url(2));
  });
  after(async () => {
    await tier?.close();
    await client?.quit();
    await redis?.stop();
  });

  it('a missing key is one miss, a damaged entry one damaged and one miss, a sound one a hit', async () => {
    const a = identity(10);
    const b = identity(11);
    const c = identity(12);
    expect(await tier!.fetch(a)).to.equal(null);
    expect(tier!.stats).to.include({ hits: 0, misses: 1, damaged: 0 });
    await client!.set(RemoteTier.keyOf(b.key), Buffer.from('not a blob file'));
    expect(await tier!.fetch(b)).to.equal(null);
    expect(tier!.stats).to.include({ hits: 0, misses: 2, damaged: 1 });
    expect(await tier!.publish(c, new Uint8Array([1, 2, 3]))).to.equal(true);
    expect([...(await tier!.fetch(c))!]).to.deep.equal([1, 2, 3]);
    expect(tier!.stats).to.include({ hits: 1, misses: 2, damaged: 1, published: 1, unavailable: 0 });
  });
});
