/**
 * refusalRetry: a worker that refused to start is tried again by the first call after a backoff that
 * doubles with each refusal in a row, up to a cap; before it, calls answer the refusal at once and no
 * thread is started. The clock is the test's own, advanced by hand.
 */
import { expect } from 'chai';
import { superviseActor, type ActorSupervisor } from '../../src/actors/supervisor.js';
import { CacheUnavailable } from '../../src/errors/index.js';
import type { EchoApi, EchoEvents } from './fixtures/echo.worker.js';
import { rejection, until } from './helpers.js';

const entry = new URL('./fixtures/echo.worker.js', import.meta.url);
const refuse = { path: '/srv/cache', reason: 'ENOTDIR' };

describe('actors: a refused worker tried again with backoff', function () {
  const started: ActorSupervisor<EchoApi, EchoEvents>[] = [];
  afterEach(async () => { await Promise.all(started.splice(0).map((a) => a.close())); });

  it('waits 1, 2, then 4 (the cap) clock units between tries; calls in between answer at once, starting nothing', async () => {
    let clock = 0;
    const a = superviseActor<EchoApi, EchoEvents>({
      name: 'cache', entry, workerData: { refuse }, restart: { max: 5, windowMs: 60_000 },
      refusalRetry: { firstMs: 1000, maxMs: 4000, now: () => clock },
    });
    started.push(a);
    let refusals = 0;
    a.on('refused', () => { refusals++; });
    expect(await rejection(a.call('echo', [1]))).to.be.instanceOf(CacheUnavailable);
    expect(await until(() => refusals === 1 && a.threadIds.length === 0)).to.equal(true);

    /** A call at `t`: whether it started a worker (a try), and the error it ends with. */
    async function callAt(t: number): Promise<boolean> {
      clock = t;
      const p = rejection(a.call('echo', [t]));
      const tried = a.threadIds.length > 0; // a try starts its thread before the call returns
      expect(await p).to.be.instanceOf(CacheUnavailable);
      if (tried) expect(await until(() => a.threadIds.length === 0)).to.equal(true);
      return tried;
    }
    // Refused at 0: the next try at 1000; then 1000 + 2000; then 3000 + 4000 (capped); then + 4000.
    const tries: number[] = [];
    for (const t of [500, 999, 1000, 1500, 2999, 3000, 6999, 7000, 10_999, 11_000]) if (await callAt(t)) tries.push(t);
    expect(tries).to.deep.equal([1000, 3000, 7000, 11_000]);
    expect(refusals).to.be.at.least(4);
    expect(a.state).to.equal('down');
  });

  it('without refusalRetry a refusal is final, however much time passes', async () => {
    const a = superviseActor<EchoApi, EchoEvents>({ name: 'cache', entry, workerData: { refuse }, restart: { max: 5, windowMs: 60_000 } });
    started.push(a);
    expect(await rejection(a.call('echo', [1]))).to.be.instanceOf(CacheUnavailable);
    expect(await until(() => a.threadIds.length === 0)).to.equal(true);
    const p = rejection(a.call('echo', [2]));
    expect(a.threadIds).to.deep.equal([]);
    expect(await p).to.be.instanceOf(CacheUnavailable);
  });
});
