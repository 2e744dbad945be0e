import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ACTOR_YOUNG_GENERATION_MB, superviseActor, type ActorSupervisor } from '../../src/actors/supervisor.js';
import {
  ActorCrashed, ActorDown, DeadlineExceeded, DevicePoisoned, EngineClosed, IndexOutOfRange,
} from '../../src/errors/index.js';
import type { EchoApi, EchoEvents, EchoWorkerData } from './fixtures/echo.worker.js';
import { exitOnItsOwn, next, rejection, until } from './helpers.js';

const entry = new URL('./fixtures/echo.worker.js', import.meta.url);
const restart = { max: 3, windowMs: 10_000 };
// Longer than any test: a slow call that only a deadline can answer, and a restart window that a crash
// loop's restarts all fall in however slowly a loaded machine starts the workers.
const HOUR = 3_600_000;

describe('actors: superviseActor', function () {
  const started: ActorSupervisor<EchoApi, EchoEvents>[] = [];
  function actor(name: string, more: { poisonOnDeadline?: boolean; workerData?: EchoWorkerData; startTimeoutMs?: number; restart?: { max: number; windowMs: number } } = {}) {
    const a = superviseActor<EchoApi, EchoEvents>({ name, entry, restart, ...more });
    started.push(a);
    return a;
  }
  afterEach(async function () {
    await Promise.all(started.splice(0).map((a) => a.close()));
  });

  it('answers calls once ready, queueing calls made while starting', async function () {
    const a = actor('echo');
    expect(a.state).to.equal('starting');
    const [x, y] = await Promise.all([a.call('echo', [{ n: 1, s: 'x' }]), a.call('echo', [[1, 2, 3]])]);
    expect(x).to.deep.equal({ n: 1, s: 'x' });
    expect(y).to.deep.equal([1, 2, 3]);
    expect(a.state).to.equal('ready');
  });

  it('starts its thread with a small young generation (ACTOR_YOUNG_GENERATION_MB: V8 would let it grow to 48 MB per thread)', async function () {
    const a = actor('limits');
    const limits = await a.call('limits', []);
    expect(limits.maxYoungGenerationSizeMb).to.equal(ACTOR_YOUNG_GENERATION_MB);
    expect(ACTOR_YOUNG_GENERATION_MB).to.be.at.most(8);
  });

  it('rebuilds a typed error thrown in the worker as the same class with its fields', async function () {
    const a = actor('typed');
    const e = await rejection(a.call('failTyped', [9]));
    expect(e).to.be.instanceOf(IndexOutOfRange);
    const t = e as IndexOutOfRange;
    expect([t.code, t.eqn, t.index, t.extent]).to.deep.equal(['IndexOutOfRange', 3, 9, 4]);
    expect(t.message).to.equal('equation 3: index 9 is outside its axis of extent 4');
    // The actor survives a failed call.
    expect(await a.call('echo', [5])).to.equal(5);
  });

  it('answers a non-Engine throw and an uncloneable reply with ActorCrashed naming the actor', async function () {
    const a = actor('plain');
    const e = await rejection(a.call('failPlain', []));
    expect(e).to.be.instanceOf(ActorCrashed);
    expect((e as ActorCrashed).actor).to.equal('plain');
    expect((e as ActorCrashed).detail).to.contain('TypeError: plain failure');
    const c = await rejection(a.call('notCloneable', []));
    expect(c).to.be.instanceOf(ActorCrashed);
    expect((c as ActorCrashed).detail).to.contain('cannot cross threads');
    expect(await a.call('echo', ['still here'])).to.equal('still here');
  });

  it('moves ArrayBuffers both ways when asked to', async function () {
    const a = actor('bytes');
    const b = await a.call('bytes', [16]);
    expect(b).to.be.instanceOf(ArrayBuffer);
    expect([...new Uint8Array(b)]).to.deep.equal(new Array<number>(16).fill(7));
    const mine = new ArrayBuffer(32);
    expect(await a.call('byteLength', [mine], { transfer: [mine] })).to.equal(32);
    expect(mine.byteLength, 'a moved buffer is detached here').to.equal(0);
  });

  it('delivers events the actor pushes', async function () {
    const a = actor('events');
    const steps: number[] = [];
    a.on('progress', (p) => { steps.push(p.step); });
    expect(await a.call('progress', [3])).to.equal(3);
    expect(await until(() => steps.length === 3)).to.equal(true);
    expect(steps).to.deep.equal([1, 2, 3]);
  });

  it('rejects a late call with DeadlineExceeded without poisoning an ordinary actor', async function () {
    const a = actor('late');
    await a.call('echo', [0]);
    // The slow call would answer only after an hour, so the deadline alone can settle it (no race with
    // a stopwatch, which a loaded machine loses); close() in afterEach ends the sleeping worker.
    const e = await rejection(a.call('slow', [HOUR], { deadlineMs: 100 }));
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect((e as DeadlineExceeded).deadlineMs).to.equal(100);
    expect(a.state).to.equal('ready');
    expect(await a.call('echo', ['after'])).to.equal('after');
  });

  it('poisons a device actor whose call hangs past its deadline, then serves again after the restart', async function () {
    const a = actor('device', { poisonOnDeadline: true });
    const before = await a.call('threadId', []);
    const poisoned = next<{ since: string }>((fn) => a.on('poisoned', fn));
    // In flight for an hour, so it is still in flight when the deadline poisons the actor, however late
    // a loaded machine fires that deadline; the hung call can only be answered by its deadline.
    const other = rejection(a.call('slow', [HOUR]));
    const e = await rejection(a.call('hang', [], { deadlineMs: 200 }));
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect((e as DeadlineExceeded).deadlineMs).to.equal(200);
    const { since } = await poisoned;
    expect(new Date(since).toISOString()).to.equal(since);

    // The other in-flight call and every later call answer DevicePoisoned at once.
    const o = await other;
    expect(o).to.be.instanceOf(DevicePoisoned);
    expect((o as DevicePoisoned).since).to.equal(since);
    expect(a.state).to.equal('poisoned');
    const ready = next<{ threadId: number }>((fn) => a.on('ready', fn));
    const later = await rejection(a.call('echo', [1]));
    expect(later).to.be.instanceOf(DevicePoisoned);
    expect((later as DevicePoisoned).since).to.equal(since);

    const { threadId } = await ready;
    expect(a.state).to.equal('ready');
    expect(threadId).to.not.equal(before);
    expect(await a.call('threadId', [])).to.equal(threadId);
    expect(await a.call('echo', ['served'])).to.equal('served');
    // The wedged thread was terminated, not leaked.
    expect(await until(() => !a.threadIds.includes(before))).to.equal(true);
  });

  for (const how of ['throw', 'exit'] as const) {
    it(`fails only the in-flight calls of an actor that crashes (${how}), and restarts it`, async function () {
      const a = actor('crashy');
      const b = actor('bystander');
      await Promise.all([a.call('echo', [0]), b.call('echo', [0])]);
      const bystander = b.call('slow', [300]);
      const restarted = next<{ reason: string }>((fn) => a.on('restart', fn));
      const crashed = next<{ detail: string }>((fn) => a.on('crash', fn));
      const inFlight = [rejection(a.call('crash', [how])), rejection(a.call('slow', [2000]))];
      const [e1, e2] = await Promise.all(inFlight);
      for (const e of [e1, e2]) {
        expect(e).to.be.instanceOf(ActorCrashed);
        expect((e as ActorCrashed).actor).to.equal('crashy');
      }
      const detail = (await crashed).detail;
      expect(detail).to.contain(how === 'throw' ? 'async boom' : 'exited with code 1');
      expect((e1 as ActorCrashed).detail).to.equal(detail);
      expect((await restarted).reason).to.equal('crash');
      // A call made while the actor restarts waits for the new worker.
      expect(a.state).to.equal('restarting');
      expect(await a.call('echo', ['again'])).to.equal('again');
      expect(await bystander).to.equal(300);
    });
  }

  it('reports an actor that crashes while starting down after max restarts, failing calls with ActorDown', async function () {
    const a = actor('loop', { workerData: { crashOnStart: true }, restart: { max: 2, windowMs: HOUR } });
    let crashes = 0;
    let restarts = 0;
    a.on('crash', () => { crashes++; });
    a.on('restart', () => { restarts++; });
    const down = next<ActorDown>((fn) => a.on('down', fn));
    const e = await rejection(a.call('echo', [1]));
    expect(e).to.be.instanceOf(ActorDown);
    expect([(e as ActorDown).actor, (e as ActorDown).restarts, (e as ActorDown).windowMs]).to.deep.equal(['loop', 2, HOUR]);
    expect((await down).code).to.equal('ActorDown');
    expect([crashes, restarts]).to.deep.equal([3, 2]);
    expect(a.state).to.equal('down');
    expect(await rejection(a.call('echo', [2]))).to.be.instanceOf(ActorDown);
    expect(await until(() => a.threadIds.length === 0)).to.equal(true);
  });

  it('counts a worker that never posts ready as crashed', async function () {
    const a = actor('mute', { workerData: { neverReady: true }, startTimeoutMs: 150, restart: { max: 0, windowMs: 10_000 } });
    const crashed = next<{ detail: string }>((fn) => a.on('crash', fn));
    const e = await rejection(a.call('echo', [1]));
    expect(e).to.be.instanceOf(ActorDown);
    expect((await crashed).detail).to.equal('not ready within 150 ms');
  });

  it('close() fails pending calls with EngineClosed and leaves no thread running', async function () {
    const a = actor('closing');
    const { threadId } = await next<{ threadId: number }>((fn) => a.on('ready', fn));
    expect(a.threadIds).to.deep.equal([threadId]);
    const hung = rejection(a.call('hang', []));
    const slow = rejection(a.call('slow', [5000]));
    await a.close();
    expect(await hung).to.be.instanceOf(EngineClosed);
    expect(await slow).to.be.instanceOf(EngineClosed);
    expect(a.threadIds).to.deep.equal([]);
    expect(a.state).to.equal('closed');
    expect(await rejection(a.call('echo', [1]))).to.be.instanceOf(EngineClosed);
  });

  for (const mode of ['close', 'idle']) {
    it(`lets the process exit on its own (${mode})`, async function () {
      const script = fileURLToPath(new URL('./fixtures/exitCheck.js', import.meta.url));
      const { code, out } = await exitOnItsOwn(spawn(process.execPath, [script, mode], { stdio: ['ignore', 'pipe', 'inherit'] }));
      expect(code).to.equal(0);
      expect(out.trim()).to.equal(mode === 'close' ? 'EngineClosed,EngineClosed 0' : 'idle');
    });
  }
});
