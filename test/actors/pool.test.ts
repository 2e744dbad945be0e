import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool, type ActorPool } from '../../src/actors/pool.js';
import { ActorCrashed, ActorDown, DeadlineExceeded, EngineClosed, IndexOutOfRange } from '../../src/errors/index.js';
import type { PoolTask } from './fixtures/pool.worker.js';
import { next, rejection, until } from './helpers.js';

const entry = new URL('./fixtures/pool.worker.js', import.meta.url);

describe('actors: createPool', function () {
  const started: ActorPool<PoolTask, number | ArrayBuffer>[] = [];
  function pool(name: string, more: { workerData?: unknown; restart?: { max: number; windowMs: number } } = {}) {
    const p = createPool<PoolTask, number | ArrayBuffer>({ name, entry, workers: 2, restart: { max: 3, windowMs: 10_000 }, ...more });
    started.push(p);
    return p;
  }
  afterEach(async function () {
    await Promise.all(started.splice(0).map((p) => p.destroy()));
  });

  it('runs tasks and rebuilds typed errors across piscina', async function () {
    const p = pool('compiler');
    expect(await Promise.all([3, 4, 5].map((n) => p.run({ kind: 'square', n })))).to.deep.equal([9, 16, 25]);
    const e = await rejection(p.run({ kind: 'typed', index: 7 }));
    expect(e).to.be.instanceOf(IndexOutOfRange);
    expect([(e as IndexOutOfRange).eqn, (e as IndexOutOfRange).index, (e as IndexOutOfRange).extent]).to.deep.equal([5, 7, 2]);
    const plain = await rejection(p.run({ kind: 'plain' }));
    expect(plain).to.be.instanceOf(ActorCrashed);
    expect((plain as ActorCrashed).actor).to.equal('compiler');
    expect((plain as ActorCrashed).detail).to.contain('RangeError: plain pool failure');
  });

  it('startThreads: starts that many threads, another only when a task finds them busy, and keeps it (control: by default all start)', async function () {
    const p = createPool<PoolTask, number | ArrayBuffer>({ name: 'lazy', entry, workers: 2, startThreads: 1, restart: { max: 3, windowMs: 10_000 } });
    started.push(p);
    expect(p.threadIds).to.have.length(1);
    // Tasks one after another fit in the one thread.
    for (const n of [2, 3, 4]) expect(await p.run({ kind: 'square', n })).to.equal(n * n);
    expect(p.threadIds).to.have.length(1);
    // A task that holds the thread: the next one gets a second thread, which answers it and stays.
    const hung = rejection(p.run({ kind: 'hang' }));
    expect(await p.run({ kind: 'square', n: 5 })).to.equal(25);
    expect(p.threadIds).to.have.length(2);
    expect(await p.run({ kind: 'square', n: 6 })).to.equal(36);
    expect(p.threadIds).to.have.length(2);
    await p.destroy();
    expect(await hung).to.be.instanceOf(EngineClosed);
    expect(p.threadIds).to.deep.equal([]);
    // Control: without startThreads every thread starts with the pool.
    expect(pool('eager').threadIds).to.have.length(2);
    for (const startThreads of [0, 3]) {
      expect(() => createPool({ name: 'bad', entry, workers: 2, startThreads, restart: { max: 1, windowMs: 1000 } })).to.throw(RangeError);
    }
  });

  it('moves a result buffer marked with transfer()', async function () {
    const p = pool('bytes');
    const b = await p.run({ kind: 'bytes', n: 64 });
    expect(b).to.be.instanceOf(ArrayBuffer);
    expect((b as ArrayBuffer).byteLength).to.equal(64);
  });

  it('rejects a hung task with DeadlineExceeded, replaces its worker and runs the next task', async function () {
    const p = pool('oracle');
    await p.run({ kind: 'square', n: 1 });
    // The task hangs for good, so only its deadline can answer it.
    const e = await rejection(p.run({ kind: 'hang' }, { deadlineMs: 200 }));
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect((e as DeadlineExceeded).deadlineMs).to.equal(200);
    // No deadline here: it would time the replacement worker's start, which a loaded machine slows.
    expect(await p.run({ kind: 'square', n: 6 })).to.equal(36);
    expect(p.state).to.equal('ready');
  });

  it('fails the task of a worker that dies with ActorCrashed and keeps serving', async function () {
    const p = pool('exit');
    const crashed = next<{ detail: string }>((fn) => p.on('crash', fn));
    const e = await rejection(p.run({ kind: 'exit' }));
    expect(e).to.be.instanceOf(ActorCrashed);
    expect((e as ActorCrashed).detail).to.contain('exited with code: 1');
    expect((await crashed).detail).to.contain('exited with code: 1');
    expect(await p.run({ kind: 'square', n: 7 })).to.equal(49);
  });

  it('reports a pool whose workers die at start down, failing tasks with ActorDown', async function () {
    // A window longer than any test: both crashes fall in it however slowly the workers start.
    const p = pool('broken', { workerData: { crashOnStart: true }, restart: { max: 1, windowMs: 3_600_000 } });
    const down = next<ActorDown>((fn) => p.on('down', fn));
    let crashes = 0;
    p.on('crash', () => { crashes++; });
    // Piscina hands a task to a starting worker at once, so an early task fails with its worker.
    const early = await rejection(p.run({ kind: 'square', n: 2 }));
    expect(early).to.satisfy((e: unknown) => e instanceof ActorCrashed || e instanceof ActorDown);
    const d = await down;
    expect([d.actor, d.restarts, d.windowMs]).to.deep.equal(['broken', 1, 3_600_000]);
    expect(crashes).to.equal(2);
    const e = await rejection(p.run({ kind: 'square', n: 2 }));
    expect(e).to.be.instanceOf(ActorDown);
    expect([(e as ActorDown).actor, (e as ActorDown).restarts]).to.deep.equal(['broken', 1]);
    expect(p.state).to.equal('down');
    expect(await rejection(p.run({ kind: 'square', n: 2 }))).to.be.instanceOf(ActorDown);
    expect(await until(() => p.threadIds.length === 0)).to.equal(true);
  });

  it('destroy() lets a worker that is still loading finish loading before it is terminated', async function () {
    // Terminating a worker mid-load can abort the whole process (v8::Module::IsGraphAsync), so the
    // pool waits; this worker takes 300 ms to load and marks the end of its loading on disk.
    const dir = mkdtempSync(join(tmpdir(), 'npuo-pool-'));
    try {
      const p = createPool<number, number>({
        name: 'slow', entry: new URL('./fixtures/slowLoad.worker.js', import.meta.url), workers: 2,
        restart: { max: 1, windowMs: 10_000 }, workerData: { dir, loadMs: 300 },
      });
      const threads = [...p.threadIds];
      expect(threads).to.have.length(2);
      await p.destroy();
      expect(readdirSync(dir).sort()).to.deep.equal(threads.map((t) => `loaded-${t}`).sort());
      expect(p.threadIds).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('destroy() fails pending tasks with EngineClosed and leaves no thread', async function () {
    const p = pool('closing');
    await p.run({ kind: 'square', n: 1 });
    const hung = rejection(p.run({ kind: 'hang' }));
    const queued = [rejection(p.run({ kind: 'hang' })), rejection(p.run({ kind: 'square', n: 2 }))];
    expect(p.threadIds.length).to.be.greaterThan(0);
    await p.destroy();
    for (const e of [await hung, ...(await Promise.all(queued))]) expect(e).to.be.instanceOf(EngineClosed);
    expect(p.threadIds).to.deep.equal([]);
    expect(await rejection(p.run({ kind: 'square', n: 1 }))).to.be.instanceOf(EngineClosed);
  });
});
