import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { EngineError, type ActorDown } from '../../src/errors/index.js';
import { STEP_PROGRAM, chainProgram, hangDeadline, rejectsWith, stepExpected, stepInputs, tempDir, timed } from './helpers.js';

const counter = () => new Int32Array(new SharedArrayBuffer(4));
// A normal job gets no deadline: its calls include a device worker's (re)start, which a loaded machine
// slows past any small number of ms. Only the job meant to hang gets one (see hangDeadline).
const run = (engine: Engine, deadlineMs = Infinity) =>
  engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1), deadlineMs }).result;

function readyOnce(engine: Engine): Promise<void> {
  return new Promise((resolve) => { const off = engine.device('cpu').on('ready', () => { off(); resolve(); }); });
}

describe('engine: supervision of device actors with real workers', function () {
  this.timeout(30_000);
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine | undefined;
  beforeEach(() => { tmp = tempDir(); });
  afterEach(async () => { await engine?.close(); engine = undefined; tmp.remove(); });

  it('a hung run misses its deadline, poisons the device until its restart, and the restart runs the next job', async () => {
    engine = createEngine({ cacheDir: tmp.dir, devices: { cpu: { plan: { counter: counter(), hang: [3] } } } });
    await run(engine);
    const deadlineMs = hangDeadline(await timed(() => run(engine!)));
    const restarted = readyOnce(engine);
    const e = await rejectsWith(run(engine, deadlineMs), 'DeadlineExceeded');
    expect((e as unknown as { deadlineMs: number }).deadlineMs).to.equal(deadlineMs);
    // Until the replacement is ready, every call on the device answers DevicePoisoned at once.
    expect(engine.device('cpu').state).to.equal('poisoned');
    const p = await rejectsWith(engine.device('cpu').call('live', []), 'DevicePoisoned');
    expect(Date.parse((p as unknown as { since: string }).since)).to.be.a('number').and.not.NaN;
    await restarted;
    const r = await run(engine);
    expect(Array.from(r.results['y']!.data)).to.deep.equal(stepExpected(1).y);
    expect(Array.from(r.state['acc']!.data)).to.deep.equal(stepExpected(1).acc);
  });

  it('an actor that crashes mid-job fails that job with a typed error, and nothing else', async () => {
    engine = createEngine({ cacheDir: tmp.dir, devices: { cpu: { plan: { counter: counter(), crash: [2] } } } });
    await run(engine);
    const crashing = run(engine);
    const other = engine.compileOnly(chainProgram(3, 7), 'cpu');
    await rejectsWith(crashing, 'ActorCrashed');
    expect((await other).hit).to.equal(false);
    const r = await run(engine);
    expect(Array.from(r.results['y']!.data)).to.deep.equal(stepExpected(1).y);
  });

  it('the restart intensity limit ends a crash loop: the device is reported down and its jobs fail typed', async () => {
    engine = createEngine({
      cacheDir: tmp.dir, restart: { max: 2, windowMs: 60_000 },
      devices: { cpu: { plan: { counter: counter(), crash: Array.from({ length: 50 }, (_, i) => i + 1) } } },
    });
    const downEvent = new Promise<ActorDown>((resolve) => { engine!.device('cpu').on('down', resolve); });
    const codes: string[] = [];
    for (let i = 0; i < 6; i++) {
      try { await run(engine); codes.push('ok'); } catch (e) { codes.push((e as EngineError).code); }
    }
    expect(codes.slice(0, 3)).to.deep.equal(['ActorCrashed', 'ActorCrashed', 'ActorCrashed']);
    expect(codes.slice(3)).to.deep.equal(['ActorDown', 'ActorDown', 'ActorDown']);
    expect((await downEvent).code).to.equal('ActorDown');
    expect(engine.device('cpu').state).to.equal('down');
    // The rest of the engine still serves: compiling does not need the device.
    expect((await engine.compileOnly(chainProgram(2, 1), 'cpu')).hit).to.equal(false);
  });
});

describe('device actor: a poisoned device keeps the failed run\'s buffers until it is dropped', function () {
  this.timeout(30_000);

  it('counts live buffers after a missed deadline, and none once the supervisor drops and restarts it', async () => {
    const { superviseActor } = await import('../../src/actors/supervisor.js');
    const { compileCpu } = await import('../../src/compiler/cpu.js');
    const { wholeProgramWiring } = await import('../../src/compiler/wiring.js');
    const { checkProgram } = await import('../../src/ops/validate.js');
    const { parseProgram } = await import('../../src/ir/codec.js');
    const { decodeInputs } = await import('../../src/ir/inputsCodec.js');
    type Api = import('../../src/actors/deviceActor.js').DeviceApi;
    const checked = checkProgram(parseProgram(STEP_PROGRAM));
    const inputs = decodeInputs(stepInputs(1), checked);
    // The device's own timer catches this hang (the thread stays free), so the worker answers, and
    // its device, poisoned, still reports what it holds.
    const actor = superviseActor<Api>({
      name: 'device:cpu', entry: new URL('../../src/workers/device.worker.js', import.meta.url),
      workerData: { kind: 'cpu', faults: { hangOnRun: 1, hangMode: 'async' } },
      restart: { max: 3, windowMs: 60_000 }, poisonOnDeadline: true,
    });
    try {
      const opened = await actor.call('open', [{
        target: 'cpu', weights: inputs.weights, state: inputs.state, activations: ['x'],
        stateNext: checked.program.state, results: checked.program.results,
        units: [{ key: 'k', artifact: compileCpu(checked).bytes, wiring: wholeProgramWiring(checked) }],
      }]);
      if ('needArtifacts' in opened) throw new Error('the artifact was given');
      await rejectsWith(actor.call('replay', [opened.session, inputs.steps[0]!, ['y'], 150, true], { deadlineMs: 10_000 }), 'DeadlineExceeded');
      const held = await actor.call('live', []);
      expect(held.poisoned).to.not.equal(null);
      expect(held.buffers + held.arenas).to.be.greaterThan(0);
      expect(held.bytes).to.be.greaterThan(0);
      expect(held.contexts).to.equal(1);
      const ready = new Promise<void>((resolve) => { const off = actor.on('ready', () => { off(); resolve(); }); });
      actor.recycle();
      await rejectsWith(actor.call('live', []), 'DevicePoisoned');
      await ready;
      const fresh = await actor.call('live', []);
      expect(fresh).to.include({ buffers: 0, arenas: 0, bytes: 0, contexts: 0, poisoned: null });
    } finally {
      await actor.close();
    }
  });
});
