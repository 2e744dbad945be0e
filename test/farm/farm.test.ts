/**
 * The distributed farm against a real redis-server: `farm --queue` and `farm-worker` processes share
 * the compiles of a directory, every blob lands verified in the remote tier, and a worker that dies
 * mid-job loses nothing; one that is told to stop finishes its jobs first.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { RemoteTier } from '../../src/cache/remoteTier.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/output.js';
import { FARM_QUEUE } from '../../src/jobs/farmQueue.js';
import { createEngine } from '../../src/jobs/engine.js';
import { chainProgram } from '../jobs/helpers.js';
import { redisOrSkip, type RedisServer } from './redisServer.js';
import { reap, startWorker, writePrograms, type WorkerProc } from './workers.js';

interface Summary {
  programs: number; hits: number; compiled: number; skipped: number;
  refused: { file: string; error: Record<string, unknown> }[];
  workers: Record<string, { hits: number; compiled: number }>;
}

function capture(): Io & { outs: string[]; errs: string[] } {
  const outs: string[] = [];
  const errs: string[] = [];
  return { outs, errs, out: (l) => outs.push(l), err: (l) => errs.push(l) };
}

async function farm(dir: string, url: string, extra: string[] = []): Promise<{ code: number; summary: Summary }> {
  const io = capture();
  const code = await main(['farm', dir, '--target', 'cpu', '--queue', url, '--json', ...extra], io);
  return { code, summary: JSON.parse(io.outs[0]!) as Summary };
}

describe('distributed farm (BullMQ on Redis)', function () {
  let redis: RedisServer;
  let client: Redis;
  let root: string;
  const workers: WorkerProc[] = [];

  before(async function () {
    redis = await redisOrSkip(this);
    client = new Redis(redis.url(0));
  });
  after(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when before() skipped
    await client?.quit();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when before() skipped
    await redis?.stop();
  });
  beforeEach(() => { root = mkdtempSync(join(tmpdir(), 'npu-farm-')); });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map(reap));
    rmSync(root, { recursive: true, force: true });
    await client.flushall();
  });

  async function worker(name: string, ...args: string[]): Promise<WorkerProc> {
    const w = await startWorker(['--queue', redis.url(0), '--name', name, '--cache-dir', join(root, `cache-${name}`), ...args]);
    workers.push(w);
    return w;
  }

  /** Counts the queue's stalled-job events from now on. */
  async function stalls(): Promise<{ count: () => number; close: () => Promise<void> }> {
    const ev = new QueueEvents(FARM_QUEUE, { connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null } });
    let n = 0;
    ev.on('stalled', () => { n++; });
    await ev.waitUntilReady();
    return { count: () => n, close: () => ev.close() };
  }

  it('two workers and one farm over 200 programs: each compiled once, every blob verified, a third engine compiles none', async () => {
    const dir = join(root, 'programs');
    const files = writePrograms(dir, 200, 1000);
    const w1 = await worker('w1');
    const w2 = await worker('w2');

    const { code, summary } = await farm(dir, redis.url(0));
    expect(code).to.equal(0);
    expect(summary).to.include({ programs: 200, hits: 0, compiled: 200, skipped: 0 });
    expect(summary.refused).to.deep.equal([]);
    expect(Object.keys(summary.workers).sort()).to.deep.equal(['w1', 'w2']);
    expect(summary.workers['w1']!.compiled + summary.workers['w2']!.compiled).to.equal(200);

    // Each worker's own account: every file compiled by exactly one of them, none twice.
    const compiledBy = [...w1.done(), ...w2.done()].filter((l) => l.hit === false).map((l) => l.file!).sort();
    expect(compiledBy).to.deep.equal(files);

    const tier = new RemoteTier(redis.url(0));
    try {
      const v = await tier.verify();
      expect(v.bad).to.deep.equal([]);
      expect(v.ok).to.have.length(200);
    } finally {
      await tier.close();
    }

    const third = createEngine({ cacheDir: join(root, 'cache-third'), remoteCache: redis.url(0), workers: 1 });
    try {
      const outcomes = [];
      for (let i = 0; i < 200; i++) outcomes.push(await third.compileOnly(chainProgram(2, 1000 + i), 'cpu'));
      expect(outcomes.filter((o) => !o.hit)).to.deep.equal([]);
      expect(await third.cacheStats()).to.include({ remoteHits: 200, stored: 0, misses: 0, localHits: 0 });
    } finally {
      await third.close();
    }

    // SIGTERM: both drain and exit 0, saying what they did.
    for (const w of [w1, w2]) w.proc.kill('SIGTERM');
    for (const w of [w1, w2]) {
      expect(await w.exit).to.deep.equal({ code: 0, signal: null });
      expect(w.lines.at(-1)).to.include({ event: 'closed' });
    }
  });

  it('a worker killed with SIGKILL mid-job: its job completes on the other worker, nothing lost or duplicated', async () => {
    const dir = join(root, 'programs');
    const files = writePrograms(dir, 60, 2000);
    const watch = await stalls();
    try {
      const w1 = await worker('w1', '--concurrency', '1', '--lock-ms', '1500');
      const farming = farm(dir, redis.url(0));
      await w1.waitFor((l) => l.event === 'done', 'its first job was done');
      w1.proc.kill('SIGKILL');
      expect(await w1.exit).to.deep.equal({ code: null, signal: 'SIGKILL' });
      const w2 = await worker('w2', '--lock-ms', '1500');
      const { code, summary } = await farming;

      expect(code).to.equal(0);
      expect(summary.refused).to.deep.equal([]);
      expect(summary.programs).to.equal(60);
      expect(summary.hits + summary.compiled).to.equal(60);
      expect(watch.count(), 'the job w1 held was given back as stalled').to.be.at.least(1);
      // Done exactly once across the two; what w1 never finished, w2 did.
      const doneFiles = [...w1.done(), ...w2.done()].map((l) => l.file!).sort();
      expect(doneFiles).to.deep.equal(files);
      const held = w1.lines.filter((l) => l.event === 'active' && !w1.done().some((d) => d.job === l.job));
      for (const h of held) expect(w2.done().map((d) => d.job)).to.include(h.job);

      const tier = new RemoteTier(redis.url(0));
      try {
        const v = await tier.verify();
        expect(v.bad).to.deep.equal([]);
        expect(v.ok).to.have.length(60);
      } finally {
        await tier.close();
      }
    } finally {
      await watch.close();
    }
  });

  it('a job whose worker dies more often than --max-stalls allows fails, and farm reports it', async () => {
    const dir = join(root, 'programs');
    writePrograms(dir, 30, 3000);
    const w1 = await worker('w1', '--concurrency', '1', '--lock-ms', '1500');
    const farming = farm(dir, redis.url(0));
    await w1.waitFor((l) => l.event === 'done', 'its first job was done');
    w1.proc.kill('SIGKILL');
    await w1.exit;
    await worker('w2', '--lock-ms', '1500', '--max-stalls', '0');
    const { code, summary } = await farming;
    expect(code).to.equal(1);
    expect(summary.refused).to.have.length(1);
    expect(summary.refused[0]!.error).to.deep.equal({ code: 'ActorCrashed', actor: 'farm-worker', detail: 'job stalled more than allowable limit' });
    expect(summary.hits + summary.compiled).to.equal(29);
  });

  it('SIGTERM drains a busy worker: the jobs in hand finish, it exits 0, another takes the rest', async () => {
    const dir = join(root, 'programs');
    const files = writePrograms(dir, 40, 4000);
    const watch = await stalls();
    try {
      const w1 = await worker('w1', '--concurrency', '1', '--lock-ms', '1500');
      const farming = farm(dir, redis.url(0));
      await w1.waitFor((l) => l.event === 'done', 'its first job was done');
      w1.proc.kill('SIGTERM');
      expect(await w1.exit).to.deep.equal({ code: 0, signal: null });
      const events = w1.lines.map((l) => l.event);
      expect(events.indexOf('draining')).to.be.greaterThan(0);
      expect(events.at(-1)).to.equal('closed');
      // Nothing it started was left behind.
      const started = w1.lines.filter((l) => l.event === 'active').map((l) => l.job).sort();
      expect(w1.done().map((l) => l.job).sort()).to.deep.equal(started);

      const w2 = await worker('w2', '--lock-ms', '1500');
      const { code, summary } = await farming;
      expect(code).to.equal(0);
      expect(summary).to.include({ programs: 40, compiled: 40, hits: 0 });
      expect([...w1.done(), ...w2.done()].map((l) => l.file!).sort()).to.deep.equal(files);
      expect(watch.count()).to.equal(0);
    } finally {
      await watch.close();
    }
  });

  it('farm --queue refuses local-only flags, and a program it cannot read is refused without being enqueued', async () => {
    const dir = join(root, 'programs');
    writePrograms(dir, 1, 5000);
    const io = capture();
    expect(await main(['farm', dir, '--target', 'cpu', '--queue', redis.url(0), '--workers', '2'], io)).to.equal(2);
    expect(io.errs.join('\n')).to.contain('give --workers to farm-worker instead');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'broken.json'), '{"format": "program@1", ');
    await worker('w1');
    const { code, summary } = await farm(dir, redis.url(0));
    expect(code).to.equal(1);
    expect(summary).to.include({ programs: 2, compiled: 1 });
    expect(summary.refused.map((r) => [r.file, r.error['code']])).to.deep.equal([['broken.json', 'InvalidProgram']]);
  });
});
