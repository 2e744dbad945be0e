/**
 * Sessions kept open on a device (src/jobs/deviceSession.ts): the state stays on the device between
 * steps, is read only when asked, can be zeroed or handed to another program's session, and a device
 * restarted after a missed deadline leaves its old sessions refused with a typed error.
 */
import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { program } from '../../src/ops/builder.js';
import { tensor } from '../../src/ir/tensor.js';
import { hangDeadline, rejectsWith, tempDir, timed } from './helpers.js';

/** acc' = acc * k + x; y = acc'. */
function carry(name: string, k: number) {
  const p = program(name);
  const acc = p.state('acc', 'f32', [3]);
  const x = p.activation('x', 'f32', [3]);
  const next = p.named('y').add(p.mul(acc, k), x);
  p.carry(acc, next);
  p.results(next);
  return p.build();
}

/** A KV-cache-like state: row `pos` of cache [4, 3] is set to `row` each step; y = the row sums of the cache after it. */
function cacheProgram(name: string) {
  const p = program(name);
  const cache = p.state('cache', 'f32', [4, 3]);
  const row = p.activation('row', 'f32', [1, 3]);
  const pos = p.activation('pos', 'i32', []);
  const next = p.dynamicUpdateSlice(cache, row, [pos, 0]);
  p.carry(cache, next);
  p.results(p.named('y').reduceSum(next, [1]));
  return p.build();
}

const rowAt = (pos: number, ...v: number[]) => ({ row: tensor('f32', [1, 3], v), pos: tensor('i32', [], [pos]) });

const x = (...v: number[]) => ({ x: tensor('f32', [3], v) });
const data = (t: { data: ArrayLike<number> } | undefined) => Array.from(t!.data);

for (const target of ['cpu', 'host'] as const) {
  describe(`jobs/deviceSession on ${target}: a session stays on its device`, function () {
    this.timeout(30_000);
    let tmp: ReturnType<typeof tempDir>;
    let engine: Engine;
    // One engine for the describe's tests: each opens its own sessions; an engine's start (its actors'
    // threads loading their modules) cost more than most of these tests (~0.7 s of CPU).
    before(() => { tmp = tempDir(); engine = createEngine({ cacheDir: tmp.dir }); });
    after(async () => { await engine.close(); tmp.remove(); });

    it('carries the state from step to step on the device, reading it only when asked', async () => {
      const s = await engine.openSession({ program: carry('c1', 1), target, zeroState: true });
      expect(s.target).to.equal(target);
      const a = await s.step(x(1, 2, 3));
      expect(a.state).to.equal(undefined);
      expect(data(a.results['y'])).to.deep.equal([1, 2, 3]);
      const b = await s.step(x(10, 10, 10), { state: true });
      expect(data(b.results['y'])).to.deep.equal([11, 12, 13]);
      expect(data(b.state!['acc'])).to.deep.equal([11, 12, 13]);
      expect(data((await s.state())['acc'])).to.deep.equal([11, 12, 13]);
      await s.zeroState();
      expect(data((await s.step(x(5, 5, 5))).results['y'])).to.deep.equal([5, 5, 5]);
      await s.close();
      await rejectsWith(s.step(x(1, 1, 1)), 'InvalidOptions');
    });

    it('hands its state to another program\'s session on the same device, and starts from a given state', async () => {
      const first = await engine.openSession({ program: carry('c1', 1), target, inputs: { acc: tensor('f32', [3], [1, 1, 1]) } });
      await first.step(x(1, 2, 3));
      const second = await engine.openSession({ program: carry('c2', 2), target, zeroState: true });
      await second.takeStateFrom(first);
      // (2, 3, 4) * 2 + 1
      expect(data((await second.step(x(1, 1, 1))).results['y'])).to.deep.equal([5, 7, 9]);
      // The first session's state is its own: the handover copied it.
      expect(data((await first.state())['acc'])).to.deep.equal([2, 3, 4]);
    });

    it('a cache updated in place: each step sees the rows before it; reading, zeroing and handing over see the latest cache', async () => {
      const s = await engine.openSession({ program: cacheProgram('k1'), target, zeroState: true });
      expect(data((await s.step(rowAt(0, 1, 1, 1))).results['y'])).to.deep.equal([3, 0, 0, 0]);
      expect(data((await s.step(rowAt(2, 2, 2, 2))).results['y'])).to.deep.equal([3, 0, 6, 0]);
      expect(data((await s.state())['cache'])).to.deep.equal([1, 1, 1, 0, 0, 0, 2, 2, 2, 0, 0, 0]);
      expect(data((await s.step(rowAt(1, 1, 2, 3), { state: true })).state!['cache'])).to.deep.equal([1, 1, 1, 1, 2, 3, 2, 2, 2, 0, 0, 0]);
      const other = await engine.openSession({ program: cacheProgram('k2'), target, zeroState: true });
      await other.takeStateFrom(s);
      expect(data((await other.step(rowAt(3, 5, 5, 5))).results['y'])).to.deep.equal([3, 6, 6, 15]);
      // The session handed from keeps its own cache; zeroing it starts again from nothing.
      expect(data((await s.step(rowAt(3, 1, 0, 0))).results['y'])).to.deep.equal([3, 6, 6, 1]);
      await s.zeroState();
      expect(data((await s.step(rowAt(0, 0, 0, 1))).results['y'])).to.deep.equal([1, 0, 0, 0]);
      expect(data((await other.state())['cache'])).to.deep.equal([1, 1, 1, 1, 2, 3, 2, 2, 2, 5, 5, 5]);
    });

    it('reads and writes a range of positions along an axis (the prefix cache\'s), checking every piece before writing any', async () => {
      const s = await engine.openSession({ program: cacheProgram('k3'), target, zeroState: true });
      for (let r = 0; r < 4; r++) await s.step(rowAt(r, 3 * r + 1, 3 * r + 2, 3 * r + 3));
      const whole = data((await s.state())['cache']);
      // Axis 0 (rows): positions 1 and 2, one run.
      const [rows] = await s.readPositions({ cache: 0 }, [[1, 3]]);
      expect(rows!['cache']!.shape).to.deep.equal([2, 3]);
      expect(Array.from(new Float32Array(rows!['cache']!.bytes.slice().buffer))).to.deep.equal([4, 5, 6, 7, 8, 9]);
      // Axis 1 (columns): a run per row, two adjacent ranges read as one.
      const cols = await s.readPositions({ cache: 1 }, [[0, 1], [1, 3]]);
      expect(Array.from(new Float32Array(cols[1]!['cache']!.bytes.slice().buffer))).to.deep.equal([2, 3, 5, 6, 8, 9, 11, 12]);
      const t = await engine.openSession({ program: cacheProgram('k3'), target, zeroState: true });
      await t.writePositions({ cache: 1 }, [{ from: 1, state: cols[1]! }]);
      expect(data((await t.state())['cache'])).to.deep.equal([0, 2, 3, 0, 5, 6, 0, 8, 9, 0, 11, 12]);
      await t.writePositions({ cache: 1 }, [{ from: 0, state: cols[0]! }]);
      expect(data((await t.state())['cache'])).to.deep.equal(whole);
      // A piece past the end refuses the whole write: the first piece is not written either.
      await t.zeroState();
      await rejectsWith(t.writePositions({ cache: 1 }, [{ from: 0, state: cols[0]! }, { from: 2, state: cols[1]! }]), 'InvalidInput');
      expect(data((await t.state())['cache'])).to.deep.equal(new Array(12).fill(0));
      await rejectsWith(s.readPositions({ cache: 0 }, [[3, 5]]), 'InvalidInput');
      await rejectsWith(s.readPositions({ other: 0 }, [[0, 1]]), 'InvalidInput');
    });

    it('moves its state to another program\'s session: the taker goes on from it, the giver is zeroed', async () => {
      const s = await engine.openSession({ program: cacheProgram('k1'), target, zeroState: true });
      await s.step(rowAt(0, 1, 1, 1));
      await s.step(rowAt(2, 2, 2, 2));
      const other = await engine.openSession({ program: cacheProgram('k2'), target, zeroState: true });
      await other.takeStateFrom(s, { move: true });
      expect(data((await other.step(rowAt(3, 5, 5, 5))).results['y'])).to.deep.equal([3, 0, 6, 15]);
      expect(data((await s.state())['cache'])).to.deep.equal(Array(12).fill(0));
      expect(data((await s.step(rowAt(1, 1, 0, 0))).results['y'])).to.deep.equal([0, 1, 0, 0]);
      // And back: the first session takes it again, and the second's is zeroed.
      await s.takeStateFrom(other, { move: true });
      expect(data((await s.state())['cache'])).to.deep.equal([1, 1, 1, 0, 0, 0, 2, 2, 2, 5, 5, 5]);
      expect(data((await other.step(rowAt(0, 0, 0, 1))).results['y'])).to.deep.equal([1, 0, 0, 0]);
    });

    it('moves a state into a named arg of another session (a slot), leaving its other args as they were; an arg it does not carry is refused', async () => {
      // Two slots, each a cache as cacheProgram's: y = the row sums of both after the step.
      const p = program('slots');
      const slots = ['slot0.cache', 'slot1.cache'].map((n) => p.state(n, 'f32', [4, 3]));
      const rows = [0, 1].map((i) => p.activation(`row${i}`, 'f32', [1, 3]));
      const pos = p.activation('pos', 'i32', []);
      const next = slots.map((c, i) => p.dynamicUpdateSlice(c, rows[i]!, [pos, 0]));
      slots.forEach((c, i) => p.carry(c, next[i]!));
      p.results(p.named('y').concat(next.map((n) => p.reduceSum(n, [1])), 0));
      const both = await engine.openSession({ program: p.build(), target, zeroState: true });
      const zero = tensor('f32', [1, 3], [0, 0, 0]);
      await both.step({ row0: tensor('f32', [1, 3], [1, 0, 0]), row1: tensor('f32', [1, 3], [0, 0, 7]), pos: tensor('i32', [], [3]) });
      const one = await engine.openSession({ program: cacheProgram('k1'), target, zeroState: true });
      await one.step(rowAt(0, 1, 1, 1));
      await one.step(rowAt(1, 2, 2, 2));
      await both.takeStateFrom(one, { move: true, names: { 'slot1.cache': 'cache' } });
      // Slot 1 holds the moved cache (its row 3 of the step before gone), slot 0 its own.
      expect(data((await both.step({ row0: zero, row1: zero, pos: tensor('i32', [], [2]) })).results['y'])).to.deep.equal([0, 0, 0, 1, 3, 6, 0, 0]);
      expect(data((await one.state())['cache'])).to.deep.equal(Array(12).fill(0));
      await rejectsWith(both.takeStateFrom(one, { names: { 'slot2.cache': 'cache' } }), 'InvalidInput');
      await rejectsWith(both.takeStateFrom(one, { names: { 'slot0.cache': 'nothing' } }), 'InvalidInput');
    });

    it('a cache read through a reshape after its update sees the cache before it (no update in place under it)', async () => {
      const p = program('alias');
      const cache = p.state('cache', 'f32', [4, 3]);
      const flat = p.reshape(cache, [12]);
      const next = p.dynamicUpdateSlice(cache, p.activation('row', 'f32', [1, 3]), [p.activation('pos', 'i32', []), 0]);
      p.carry(cache, next);
      // Read after the update: the old cache's sum, then the new one's.
      const old = p.reduceSum(p.mul(flat, 1), [0]);
      p.results(p.named('y').concat([p.reshape(old, [1]), p.reshape(p.reduceSum(p.reshape(next, [12]), [0]), [1])], 0));
      const s = await engine.openSession({ program: p.build(), target, zeroState: true });
      expect(data((await s.step(rowAt(0, 1, 1, 1))).results['y'])).to.deep.equal([0, 3]);
      expect(data((await s.step(rowAt(1, 2, 2, 2))).results['y'])).to.deep.equal([3, 9]);
      expect(data((await s.state())['cache'])).to.deep.equal([1, 1, 1, 2, 2, 2, 0, 0, 0, 0, 0, 0]);
    });

    it('refuses an activation at open, a missing state without zeroState, and a state of another shape', async () => {
      await rejectsWith(engine.openSession({ program: carry('c1', 1), target, inputs: { x: tensor('f32', [3], [1, 2, 3]) }, zeroState: true }), 'InvalidInput');
      const e = await rejectsWith(engine.openSession({ program: carry('c1', 1), target }), 'InvalidInput');
      expect(e.message).to.contain('acc');
      const p = program('wide');
      const acc = p.state('acc', 'f32', [4]);
      p.carry(acc, p.add(acc, p.activation('x', 'f32', [4])));
      p.results(acc);
      const wide = await engine.openSession({ program: p.build(), target, zeroState: true });
      const narrow = await engine.openSession({ program: carry('c1', 1), target, zeroState: true });
      await rejectsWith(wide.takeStateFrom(narrow), 'InvalidInput');
    });
  });
}

describe('jobs/deviceSession: a state handed between devices through shared memory', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  // One engine for both tests (see above).
  before(() => { tmp = tempDir(); engine = createEngine({ cacheDir: tmp.dir }); });
  after(async () => { await engine.close(); tmp.remove(); });

  it('host to npu4 and npu4 to cpu: each session goes on from the state the other left, which stays its own', async () => {
    const host = await engine.openSession({ program: carry('c1', 1), target: 'host', inputs: { acc: tensor('f32', [3], [1, 1, 1]) } });
    await host.step(x(1, 2, 3));
    const npu = await engine.openSession({ program: carry('c2', 2), target: 'npu4', zeroState: true });
    await npu.takeStateFrom(host);
    // (2, 3, 4) * 2 + 1, exact in FP16 too.
    expect(data((await npu.step(x(1, 1, 1))).results['y'])).to.deep.equal([5, 7, 9]);
    expect(data((await host.state())['acc'])).to.deep.equal([2, 3, 4]);
    const cpu = await engine.openSession({ program: carry('c3', 1), target: 'cpu', zeroState: true });
    await cpu.takeStateFrom(npu);
    expect(data((await cpu.step(x(0.5, 0.5, 0.5))).results['y'])).to.deep.equal([5.5, 7.5, 9.5]);
    expect([host.deviceName, npu.deviceName, cpu.deviceName].every((d, i, all) => all.indexOf(d) === i)).to.equal(true);
  });

  it('refuses a state of another shape from another device, naming it, and leaves the taker\'s state as it was', async () => {
    const p = program('wide');
    const acc = p.state('acc', 'f32', [4]);
    p.carry(acc, p.add(acc, p.activation('x', 'f32', [4])));
    p.results(acc);
    const wide = await engine.openSession({ program: p.build(), target: 'host', inputs: { acc: tensor('f32', [4], [1, 2, 3, 4]) } });
    const narrow = await engine.openSession({ program: carry('c1', 1), target: 'npu4', zeroState: true });
    const e = await rejectsWith(wide.takeStateFrom(narrow), 'InvalidInput');
    expect(e.message).to.contain('acc');
    expect(data((await wide.state())['acc'])).to.deep.equal([1, 2, 3, 4]);
  });
});

describe('jobs/deviceSession: a missed deadline', function () {
  this.timeout(30_000);
  it('fails the step with DeadlineExceeded; the restarted device refuses the old session (LoadFailed) and serves a new one', async () => {
    const tmp = tempDir();
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const engine = createEngine({ cacheDir: tmp.dir, devices: { cpu: { plan: { counter, hang: [4] } } } });
    try {
      // A cold session warms the device, then a warm one is timed: the deadline must let a session's
      // normal calls through on a loaded machine (runs 1 and 2), and catch the hang (run 4).
      const used = async () => {
        const w = await engine.openSession({ program: carry('c1', 1), target: 'cpu', zeroState: true });
        await w.step(x(0, 0, 0));
        await w.close();
      };
      await used();
      const deadlineMs = hangDeadline(await timed(used));
      const s = await engine.openSession({ program: carry('c1', 1), target: 'cpu', zeroState: true, deadlineMs });
      await s.step(x(1, 1, 1));
      const ready = new Promise<void>((resolve) => { const off = engine.device('cpu').on('ready', () => { off(); resolve(); }); });
      await rejectsWith(s.step(x(1, 1, 1)), 'DeadlineExceeded');
      await ready;
      await rejectsWith(s.step(x(1, 1, 1)), 'LoadFailed');
      const again = await engine.openSession({ program: carry('c1', 1), target: 'cpu', zeroState: true, deadlineMs });
      expect(data((await again.step(x(4, 5, 6))).results['y'])).to.deep.equal([4, 5, 6]);
    } finally {
      await engine.close();
      tmp.remove();
    }
  });
});
