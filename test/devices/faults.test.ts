import { expect } from 'chai';
import { Worker } from 'node:worker_threads';
import { DeadlineExceeded, DevicePoisoned, LoadFailed } from '../../src/errors/index.js';
import { CpuDevice, type FaultOptions } from '../../src/devices/index.js';
import { ADD_EXP, artifactOf, bindAll, f32Bytes, f32Of, readAll, rejection, thrown } from './helpers.js';

async function prepared(faults: FaultOptions) {
  const dev = new CpuDevice({ faults });
  const loaded = await dev.load(artifactOf(ADD_EXP));
  const b = bindAll(dev, loaded);
  const arena = dev.allocArena(64);
  dev.write(b['x']!, 0, f32Bytes([1, 2, 3, 4, 5, 6]));
  return { dev, loaded, b, arena };
}

function expectPoisonedEverywhere(dev: CpuDevice, since: string, p: Awaited<ReturnType<typeof prepared>>) {
  const calls: (() => unknown)[] = [
    () => dev.allocBuffer(4), () => dev.allocArena(4), () => dev.write(p.b['x']!, 0, new Uint8Array(4)),
    () => dev.read(p.b['x']!, 0, 4), () => dev.free(p.b['x']!), () => dev.unload(p.loaded),
  ];
  for (const c of calls) {
    const e = thrown(c);
    expect(e).to.be.instanceOf(DevicePoisoned);
    expect((e as DevicePoisoned).toWire()).to.include({ code: 'DevicePoisoned', since });
  }
}

describe('devices: deadlines, poisoning and fault injection', () => {
  it('an async hang misses its deadline, poisons the device, and keeps its memory until drop()', async () => {
    const p = await prepared({ hangOnRun: 'always' });
    const { dev, loaded, b } = p;
    const liveBefore = dev.live();
    expect(liveBefore).to.deep.equal({ buffers: 5, arenas: 1, bytes: 5 * 24 + 64, contexts: 1 });
    const t0 = Date.now();
    const e = await rejection(dev.run(loaded, b, { deadlineMs: 50 }));
    // Not before its deadline; how long after it depends on the machine's load, and only the deadline can
    // answer a run that hangs for good, so no upper bound is checked.
    expect(Date.now() - t0).to.be.at.least(40);
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect((e as DeadlineExceeded).toWire()).to.include({ code: 'DeadlineExceeded', deadlineMs: 50 });

    const since = dev.poisoned?.since;
    expect(since).to.be.a('string');
    expect(new Date(since!).toISOString()).to.equal(since);
    expect(Date.parse(since!)).to.be.within(t0, Date.now());

    expectPoisonedEverywhere(dev, since!, p);
    for (const q of [dev.load(artifactOf(ADD_EXP)), dev.run(loaded, b, { deadlineMs: 50 })]) {
      const r = await rejection(q);
      expect(r).to.be.instanceOf(DevicePoisoned);
      expect((r as DevicePoisoned).since).to.equal(since);
    }
    expect(dev.runs, 'a call on a poisoned device reaches no driver').to.equal(1);
    expect(dev.live(), 'the failed run\'s buffers, arena and context stay allocated').to.deep.equal(liveBefore);
    dev.drop();
    expect(dev.live()).to.deep.equal({ buffers: 0, arenas: 0, bytes: 0, contexts: 0 });
  });

  it('hangs only the Nth run when hangOnRun is a number', async () => {
    const { dev, loaded, b } = await prepared({ hangOnRun: 2 });
    // The first run is a normal one: no deadline for a loaded machine to make it miss.
    await dev.run(loaded, b, { deadlineMs: Infinity });
    expect(dev.poisoned).to.equal(null);
    expect(await rejection(dev.run(loaded, b, { deadlineMs: 30 }))).to.be.instanceOf(DeadlineExceeded);
    expect(dev.poisoned).to.not.equal(null);
  });

  it('a slow run within its deadline succeeds with the right values', async () => {
    const { dev, loaded, b } = await prepared({ slowRunMs: 40 });
    const t0 = Date.now();
    await dev.run(loaded, b, { deadlineMs: 3000 });
    expect(Date.now() - t0).to.be.at.least(35);
    // w and acc are zero: y = exp(0 + x) * 0 = 0, acc2 = x.
    expect(f32Of(readAll(dev, loaded, b, 'state:acc'))).to.deep.equal([1, 2, 3, 4, 5, 6]);
    expect(dev.poisoned).to.equal(null);
  });

  it('a slow run past its deadline is answered at the deadline and poisons', async () => {
    // The run would take an hour: the device's own timer answers it, not the slow run (which a stopwatch
    // could not tell apart on a loaded machine); the missed deadline cancels the slow run's timer.
    const { dev, loaded, b } = await prepared({ slowRunMs: 3_600_000 });
    const e = await rejection(dev.run(loaded, b, { deadlineMs: 60 }));
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect(dev.poisoned).to.not.equal(null);
    expect(dev.live().buffers).to.equal(5);
    expect(thrown(() => dev.read(b['state:acc']!, 0, 24))).to.be.instanceOf(DevicePoisoned);
  });

  it("a blocking slow run is noticed past its deadline when the driver call returns ('block')", async () => {
    const { dev, loaded, b } = await prepared({ slowRunMs: 120, hangMode: 'block' });
    const e = await rejection(dev.run(loaded, b, { deadlineMs: 30 }));
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect(dev.poisoned).to.not.equal(null);
  });

  it('failLoad: true fails every load with LoadFailed and takes no context', async () => {
    const dev = new CpuDevice({ name: 'cpu0', faults: { failLoad: true } });
    const e = await rejection(dev.load(artifactOf(ADD_EXP)));
    expect(e).to.be.instanceOf(LoadFailed);
    expect((e as LoadFailed).toWire()).to.include({ code: 'LoadFailed', device: 'cpu0' });
    expect(dev.live().contexts).to.equal(0);
    expect(dev.poisoned).to.equal(null);
  });

  it('failLoad: N fails only the Nth load', async () => {
    const dev = new CpuDevice({ faults: { failLoad: 2 } });
    const art = artifactOf(ADD_EXP);
    await dev.load(art);
    expect(await rejection(dev.load(art))).to.be.instanceOf(LoadFailed);
    await dev.load(art);
    expect(dev.live().contexts).to.equal(2);
  });

  it('refuses malformed fault options rather than ignoring them', () => {
    expect(() => new CpuDevice({ faults: { hangOnRun: 0 } })).to.throw(RangeError);
    expect(() => new CpuDevice({ faults: { slowRunMs: -1 } })).to.throw(RangeError);
    expect(() => new CpuDevice({ faults: { hangMode: 'sync' as 'block' } })).to.throw(RangeError);
  });

  it("a 'block' hang stalls its worker thread past the deadline until a supervisor terminates it", async function () {
    const worker = new Worker(new URL('./fixtures/blockingRun.worker.js', import.meta.url));
    const messages: string[] = [];
    worker.on('message', (m: string) => messages.push(m));
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        worker.once('error', reject);
        const poll = setInterval(() => { if (messages.includes('running')) { clearInterval(poll); resolve(); } }, 5);
      });
      // The run's deadline is 50 ms. Blocked, the worker can neither reject the run nor answer a ping.
      await new Promise((r) => setTimeout(r, 400));
      worker.postMessage('ping');
      await new Promise((r) => setTimeout(r, 100));
      expect(messages).to.deep.equal(['running']);
    } finally {
      // The supervisor's part: only terminating the thread ends a blocked driver call.
      await worker.terminate();
    }
    expect(await exited).to.equal(1);
  });
});
