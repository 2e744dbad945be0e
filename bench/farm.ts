/**
 * `npm run bench`, the farm's part: programs compiled per second by the distributed farm with 1, 2 and 4
 * `farm-worker` processes on this machine (each on a cold local cache and an empty remote tier), and a
 * remote hit's latency against a local hit's, at the cache actor and through an engine. Starts its own
 * redis-server on loopback; without one it says so and measures nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { cacheApi } from '../src/actors/cacheActor.js';
import { resolveIdentity, type BlobIdentity } from '../src/cache/identity.js';
import { RemoteTier } from '../src/cache/remoteTier.js';
import { createEngine } from '../src/jobs/engine.js';
import { runQueueFarm } from '../src/jobs/farmQueue.js';
import { redisMissing, startRedis } from '../test/farm/redisServer.js';

const PROGRAMS = 300;
const bin = new URL('../src/cli/bin.js', import.meta.url).pathname;

/** A 12-equation program, distinct per salt. */
function program(salt: number) {
  const eqns = [];
  let prev = 'x';
  for (let i = 0; i < 12; i++) {
    eqns.push({ op: i % 3 === 2 ? 'tanh' : i % 2 ? 'mul' : 'add', in: i % 3 === 2 ? [prev] : [prev, { lit: i % 2 ? 0.5 : 0.25 + salt }], out: `v${i}` });
    prev = `v${i}`;
  }
  return { format: 'program@1', name: `farm-${salt}`, args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [4, 64] }], eqns, results: [prev], state: {} };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A farm-worker process; resolves once it takes jobs. */
function worker(url: string, cacheDir: string): Promise<ChildProcess> {
  const p = spawn(process.execPath, [bin, 'farm-worker', '--queue', url, '--cache-dir', cacheDir, '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    p.stdout.on('data', (d: Buffer) => { buf += d.toString(); if (buf.includes('"event":"ready"')) resolve(p); });
    p.once('exit', (code) => reject(new Error(`farm-worker exited ${String(code)} before it was ready`)));
  });
}

async function throughput(url: string, flush: () => Promise<unknown>, n: number): Promise<number> {
  await flush();
  const dir = mkdtempSync(join(tmpdir(), 'npuo-bench-farm-'));
  const procs = await Promise.all(Array.from({ length: n }, (_, i) => worker(url, join(dir, `w${i}`))));
  try {
    // Warm-up: every worker starts its actors and threads on its first jobs; that is not throughput.
    const warm = Array.from({ length: 10 * n }, (_, i) => ({ file: `w${i}.json`, program: program(50_000 + n * 1000 + i) }));
    await runQueueFarm(warm, { queue: url, target: 'cpu', sweepMs: 250 });
    const jobs = Array.from({ length: PROGRAMS }, (_, i) => ({ file: `p${i}.json`, program: program(n * 1000 + i) }));
    const t0 = performance.now();
    const out = await runQueueFarm(jobs, { queue: url, target: 'cpu', sweepMs: 250 });
    const s = (performance.now() - t0) / 1000;
    const compiled = out.filter((o) => o.ok && !o.result.hit).length;
    if (compiled !== PROGRAMS) throw new Error(`only ${compiled} of ${PROGRAMS} compiled`);
    return PROGRAMS / s;
  } finally {
    await Promise.all(procs.map((p) => new Promise((r) => { p.once('exit', r); p.kill('SIGTERM'); })));
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Per-get latency at the cache actor: local hits, and remote hits (local miss, fetch, check, local
 * write); and the tier's fetch and check alone, which is what the network adds.
 */
function cacheLatency(url: string): Promise<{ local: number; remote: number; fetch: number; bytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'npuo-bench-tier-'));
  const ids: BlobIdentity[] = Array.from({ length: 200 }, (_, i) => ({ device: 'cpu', compiler: 'bench', compilerVersion: '1', options: {}, region: { i } }));
  const body = randomBytes(4096);
  const writer = cacheApi(join(dir, 'writer'), { url });
  const reader = cacheApi(join(dir, 'reader'), { url });
  return (async () => {
    try {
      for (const id of ids) await writer.put(id, body);
      const tier = new RemoteTier(url);
      const fetch: number[] = [];
      for (const id of ids) { const r = resolveIdentity(id); const t0 = performance.now(); await tier.fetch(r); fetch.push(performance.now() - t0); }
      if (tier.stats.hits !== ids.length) throw new Error('the tier did not hit as planned');
      await tier.close();
      const remote: number[] = [];
      for (const id of ids) { const t0 = performance.now(); await reader.get(id); remote.push(performance.now() - t0); }
      const local: number[] = [];
      for (const id of ids) { const t0 = performance.now(); await reader.get(id); local.push(performance.now() - t0); }
      if (reader.stats().remoteHits !== ids.length || reader.stats().localHits !== ids.length) throw new Error('the reader did not hit as planned');
      return { local: median(local), remote: median(remote), fetch: median(fetch.slice(1)), bytes: body.length };
    } finally {
      await writer.close();
      await reader.close();
      rmSync(dir, { recursive: true, force: true });
    }
  })();
}

/** Per-program latency through engines: compileOnly on an empty local cache (remote hits), then on the filled one. */
async function engineLatency(url: string): Promise<{ local: number; remote: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'npuo-bench-eng-'));
  const n = 100;
  try {
    const a = createEngine({ cacheDir: join(dir, 'a'), remoteCache: url, workers: 1 });
    for (let i = 0; i < n; i++) await a.compileOnly(program(9000 + i), 'cpu');
    await a.close();
    const time = async (remoteCache: string | undefined): Promise<number[]> => {
      // A fresh engine each time, so both passes plan every program (no plan memo) and differ in the cache only.
      const e = createEngine({ cacheDir: join(dir, 'b'), workers: 1, ...(remoteCache !== undefined ? { remoteCache } : {}) });
      try {
        await e.compileOnly(program(8999), 'cpu'); // starts the actors
        const ms: number[] = [];
        for (let i = 0; i < n; i++) {
          const t0 = performance.now();
          const r = await e.compileOnly(program(9000 + i), 'cpu');
          ms.push(performance.now() - t0);
          if (!r.hit) throw new Error('expected a hit');
        }
        return ms;
      } finally {
        await e.close();
      }
    };
    const remote = await time(url);
    const local = await time(undefined);
    return { local: median(local), remote: median(remote) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const missing = redisMissing();
  if (missing !== null) { console.log(`farm bench skipped: ${missing}`); return; }
  const redis = await startRedis();
  const client = new Redis(redis.url(0));
  try {
    console.log(`farm: ${PROGRAMS} programs (12 equations each) per run, cpu target, ${cpus().length} cores (load average ${loadavg()[0]!.toFixed(1)} at the start), redis-server on loopback`);
    for (const n of [1, 2, 4]) {
      const rate = await throughput(redis.url(0), () => client.flushall(), n);
      console.log(`farm: ${n} worker${n === 1 ? ' ' : 's'} (concurrency 2 each): ${rate.toFixed(0)} programs compiled/s`);
    }
    await client.flushall();
    const c = await cacheLatency(redis.url(0));
    console.log(`cache actor get, ${c.bytes}-byte artifact: local hit median ${c.local.toFixed(3)} ms; remote hit median ${c.remote.toFixed(3)} ms (${(c.remote / c.local).toFixed(0)}x), of which the tier's fetch and check ${c.fetch.toFixed(3)} ms and the rest the local write (fsync)`);
    await client.flushall();
    const e = await engineLatency(redis.url(0));
    console.log(`engine compileOnly (plan + cache): local hit median ${e.local.toFixed(3)} ms; remote hit median ${e.remote.toFixed(3)} ms`);
  } finally {
    await client.quit();
    await redis.stop();
  }
}

await main();
