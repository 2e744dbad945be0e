/**
 * A worker that refuses to start with a typed error (a cache that cannot open) is not restarted: the
 * cause is one a restart cannot fix. Every call answers that error, once the refusal arrives and after.
 * A worker that crashes while starting is still restarted under the intensity (supervisor.test.ts).
 */
import { expect } from 'chai';
import { superviseActor, type ActorSupervisor } from '../../src/actors/supervisor.js';
import { CacheUnavailable, type EngineError } from '../../src/errors/index.js';
import type { EchoApi, EchoEvents } from './fixtures/echo.worker.js';
import { next, rejection, until } from './helpers.js';

const entry = new URL('./fixtures/echo.worker.js', import.meta.url);
const refuse = { path: '/srv/cache', reason: "the cache directory cannot be created or written: ENOTDIR: not a directory, mkdir '/srv/cache/v1/blobs'" };

describe('actors: a worker that refuses to start', function () {
  const started: ActorSupervisor<EchoApi, EchoEvents>[] = [];
  afterEach(async () => { await Promise.all(started.splice(0).map((a) => a.close())); });

  it('is down with its own typed error, restarted never, and every call answers that error', async () => {
    const a = superviseActor<EchoApi, EchoEvents>({ name: 'cache', entry, workerData: { refuse }, restart: { max: 5, windowMs: 60_000 } });
    started.push(a);
    const events: string[] = [];
    for (const ev of ['crash', 'restart', 'down', 'ready'] as const) a.on(ev, () => { events.push(ev); });
    const refused = next<EngineError>((fn) => a.on('refused', fn));
    const queued = await Promise.all([rejection(a.call('echo', [1])), rejection(a.call('echo', [2]))]);
    for (const e of [...queued, await refused]) {
      expect(e).to.be.instanceOf(CacheUnavailable);
      expect((e as CacheUnavailable).path).to.equal(refuse.path);
      expect((e as CacheUnavailable).reason).to.equal(refuse.reason);
    }
    expect(a.state).to.equal('down');
    const later = await rejection(a.call('echo', [3]));
    expect(later).to.be.instanceOf(CacheUnavailable);
    expect((later as CacheUnavailable).reason).to.contain('ENOTDIR');
    // Its thread is terminated, and no replacement was started.
    expect(await until(() => a.threadIds.length === 0)).to.equal(true);
    expect(events).to.deep.equal([]);
  });
});
