/**
 * `farm --queue` with no worker running, against a real redis-server: it says on stderr that no worker
 * has taken a job yet (after --notice-ms, shortened here; 5 s by default), and with --timeout it gives
 * up with FarmTimeout, exit 1, removing the jobs it enqueued. The notice is asserted to come before the
 * timeout's error, both timers of one process, so no wall-clock guess is made.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/output.js';
import { FARM_QUEUE } from '../../src/jobs/farmQueue.js';
import { redisOrSkip, type RedisServer } from './redisServer.js';
import { reap, startWorker, writePrograms, type WorkerProc } from './workers.js';

function capture(): Io & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (l) => lines.push(`out: ${l}`), err: (l) => lines.push(`err: ${l}`) };
}

describe('farm --queue with no worker: a notice, and --timeout', function () {
  let redis: RedisServer;
  let client: Redis;
  let root: string;
  let worker: WorkerProc | undefined;

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
  beforeEach(() => { root = mkdtempSync(join(tmpdir(), 'npu-farmto-')); });
  afterEach(async () => {
    await reap(worker);
    worker = undefined;
    rmSync(root, { recursive: true, force: true });
    await client.flushall();
  });

  it('no worker: the notice on stderr, then FarmTimeout (taken 0) as JSON, exit 1, and its jobs leave the queue', async () => {
    const dir = join(root, 'programs');
    writePrograms(dir, 3, 500);
    const io = capture();
    const code = await main(['farm', dir, '--target', 'cpu', '--queue', redis.url(0), '--json', '--timeout', '3000', '--notice-ms', '100'], io);
    expect(code).to.equal(1);
    const notice = io.lines.findIndex((l) => l.startsWith('err: farm: no worker has taken a job yet'));
    const error = io.lines.findIndex((l) => l.startsWith('out: {"error"'));
    expect(notice, io.lines.join('\n')).to.be.greaterThan(-1);
    expect(error, io.lines.join('\n')).to.be.greaterThan(notice);
    expect(io.lines[notice]).to.include('3 jobs waiting').and.include('farm-worker --queue').and.include('giving up after 3000 ms');
    const doc = JSON.parse(io.lines[error]!.slice('out: '.length)) as { error: Record<string, unknown> };
    expect(doc.error).to.include({ code: 'FarmTimeout', timeoutMs: 3000, taken: 0, total: 3, url: redis.url(0) });
    expect(await client.llen(`bull:${FARM_QUEUE}:wait`)).to.equal(0);
  });

  it('without --json: the error on stderr, typed, exit 1', async () => {
    const dir = join(root, 'programs');
    writePrograms(dir, 2, 600);
    const io = capture();
    expect(await main(['farm', dir, '--target', 'cpu', '--queue', redis.url(0), '--timeout', '1500'], io)).to.equal(1);
    expect(io.lines.some((l) => l.startsWith('err: error [FarmTimeout]: no worker took a job'))).to.equal(true, io.lines.join('\n'));
  });

  it('a worker that takes the jobs: the farm finishes within a generous --timeout, exit 0', async () => {
    const dir = join(root, 'programs');
    writePrograms(dir, 2, 700);
    worker = await startWorker(['--queue', redis.url(0), '--name', 'w', '--cache-dir', join(root, 'cache-w')]);
    const io = capture();
    // The notice is left at its default (5 s), and the timeout is far past any compile of two programs.
    expect(await main(['farm', dir, '--target', 'cpu', '--queue', redis.url(0), '--json', '--timeout', '600000'], io)).to.equal(0);
    const summary = JSON.parse(io.lines.find((l) => l.startsWith('out: '))!.slice(5)) as { compiled: number; hits: number };
    expect(summary.compiled + summary.hits).to.equal(2);
  });

  it('--timeout without --queue, or 0, is a usage error', async () => {
    const dir = join(root, 'programs');
    writePrograms(dir, 1, 800);
    expect(await main(['farm', dir, '--target', 'cpu', '--timeout', '1000'], capture())).to.equal(2);
    expect(await main(['farm', dir, '--target', 'cpu', '--queue', redis.url(0), '--timeout', '0'], capture())).to.equal(2);
  });
});
