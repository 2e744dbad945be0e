/** engine.status(): devices and actors as they run, job counts, the cache's counters, the last failures. */
import { expect } from 'chai';
import { tensor } from '../../src/ir/tensor.js';
import { createEngine } from '../../src/jobs/engine.js';
import { program } from '../../src/ops/builder.js';
import { STEP_PROGRAM, hangDeadline, rejectsWith, stepInputs, tempDir, timed } from './helpers.js';

describe('jobs/status: the engine as it runs', function () {
  this.timeout(30_000);

  it('counts jobs, shows the cache filling, and a poisoned device after a hang, then healthy with one restart', async () => {
    const tmp = tempDir();
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const engine = createEngine({ cacheDir: tmp.dir, devices: { cpu: { plan: { counter, hang: [3] } } } });
    const job = (deadlineMs?: number) => engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1), ...(deadlineMs !== undefined ? { deadlineMs } : {}) }).result;
    try {
      const empty = await engine.status();
      expect(empty.devices).to.deep.equal([]);
      expect(empty.jobs).to.deep.equal({ submitted: 0, succeeded: 0, failed: 0, running: 0 });
      await job();
      const one = await engine.status();
      expect(one.devices).to.have.length(1);
      expect(one.devices[0]).to.include({ kind: 'cpu', state: 'ready', restarts: 0, poisonedSince: null, running: 0, waiting: 0, sessions: 0 });
      expect(one.cache).to.include({ entries: 1, stored: 1, misses: 1 });
      expect(one.cache!.bytes).to.be.above(0);
      expect(one.actors.map((a) => a.name)).to.include.members(['planner', 'cache']);

      // A warm job, timed: the hung job's deadline must let its normal calls through on a loaded machine.
      const deadlineMs = hangDeadline(await timed(() => job()));
      const ready = new Promise<void>((resolve) => { const off = engine.device('cpu').on('ready', () => { off(); resolve(); }); });
      await rejectsWith(job(deadlineMs), 'DeadlineExceeded');
      const hung = await engine.status();
      expect(hung.devices[0]!.state).to.equal('poisoned');
      expect(hung.devices[0]!.poisonedSince).to.be.a('string');
      expect(hung.lastErrors.map((e) => [e.code, e.target])).to.deep.equal([['DeadlineExceeded', 'cpu']]);
      await ready;
      await job();
      const after = await engine.status();
      expect(after.devices[0]).to.include({ state: 'ready', restarts: 1, poisonedSince: null });
      expect(after.jobs).to.deep.equal({ submitted: 4, succeeded: 3, failed: 1, running: 0 });
      expect(after.cache!.hitRate).to.be.within(0.5, 1);
    } finally {
      await engine.close();
      tmp.remove();
    }
  });

  it('counts the sessions open on each device: opened, closed, and gone with a restarted device', async () => {
    const tmp = tempDir();
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const engine = createEngine({ cacheDir: tmp.dir, devices: { cpu: { plan: { counter, hang: [3] } } } });
    try {
      const p = program('acc');
      const acc = p.state('acc', 'f32', [2]);
      const next = p.add(acc, p.activation('x', 'f32', [2]));
      p.carry(acc, next);
      p.results(next);
      const prog = p.build();
      // A cold session warms the device, then a warm one is timed: the sessions' deadline must let their
      // normal calls (open, close) through on a loaded machine, and catch the hang.
      const used = async () => {
        const s = await engine.openSession({ program: prog, target: 'cpu', zeroState: true });
        await s.step({ x: tensor('f32', [2], [0, 0]) });
        await s.close();
      };
      await used();
      const deadlineMs = hangDeadline(await timed(used));
      const a = await engine.openSession({ program: prog, target: 'cpu', zeroState: true, deadlineMs });
      const b = await engine.openSession({ program: prog, target: 'cpu', zeroState: true, deadlineMs });
      const sessionsOf = async () => (await engine.status()).devices.find((d) => d.kind === 'cpu')!.sessions;
      expect(await sessionsOf()).to.equal(2);
      await b.close();
      expect(await sessionsOf()).to.equal(1);
      // The first replay hangs: the device restarts and its sessions are gone with it.
      const ready = new Promise<void>((resolve) => { const off = engine.device('cpu').on('ready', () => { off(); resolve(); }); });
      await rejectsWith(a.step({ x: tensor('f32', [2], [1, 2]) }), 'DeadlineExceeded');
      await ready;
      expect(await sessionsOf()).to.equal(0);
    } finally {
      await engine.close();
      tmp.remove();
    }
  });
});
