/**
 * More jobs than one batch (issue 27 item 11): a farm that gives up (FarmTimeout, no worker) removes the
 * jobs it enqueued in batches of 100; with 130 every one must leave the queue, not only the first batch.
 * Against a real redis-server (skipped without one).
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { main } from '../../src/cli/main.js';
import { FARM_QUEUE } from '../../src/jobs/farmQueue.js';
import { redisOrSkip, type RedisServer } from './redisServer.js';
import { writePrograms } from './workers.js';

describe('farm slips: more jobs than one removal batch', function () {
  this.timeout(120_000);
  let redis: RedisServer | undefined;
  let client: Redis | undefined;
  let root: string | undefined;
  before(async function () {
    redis = await redisOrSkip(this);
    client = new Redis(redis.url(0));
    root = mkdtempSync(join(tmpdir(), 'npu-farmslips-'));
  });
  after(async () => {
    await client?.quit();
    await redis?.stop();
    if (root !== undefined) rmSync(root, { recursive: true, force: true });
  });

  it('130 jobs and no worker: after FarmTimeout none of them is left waiting', async () => {
    const dir = join(root!, 'programs');
    writePrograms(dir, 130, 900);
    const lines: string[] = [];
    const code = await main(['farm', dir, '--target', 'cpu', '--queue', redis!.url(0), '--json', '--timeout', '2000', '--notice-ms', '60000'], { out: (l) => lines.push(l), err: (l) => lines.push(l) });
    expect(code, lines.join('\n')).to.equal(1);
    expect(lines.join('\n')).to.include('FarmTimeout').and.include('"total":130');
    expect(await client!.llen(`bull:${FARM_QUEUE}:wait`)).to.equal(0);
  });
});
