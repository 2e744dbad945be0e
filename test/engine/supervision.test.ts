import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { EngineError, type ActorDown } from '../../src/errors.js';
import { CHAIN_INPUTS, STEP_PROGRAM, chainProgram, rejectsWith, stepInputs, tempDir } from './helpers.js';

const counter = () => new Int32Array(new SharedArrayBuffer(4));
const run = (engine: Engine, deadlineMs = 400) =>
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
    engine = createEngine({ cacheDir: tmp.dir, devices: { cpu: { plan: { counter: counter(), hang: [2] } } } });
    await run(engine);
    const restarted = readyOnce(engine);
    const t0 = performance.now();
    const e = await rejectsWith(run(engine, 300), 'DeadlineExceeded');
    expect((e as unknown as { deadlineMs: number }).deadlineMs).to.equal(300);
    expect(performance.now() - t0).to.be.lessThan(10_000);
    // Until the replacement is ready, every call on the device answers DevicePoisoned at once.
    expect(engine.device('cpu').state).to.equal('poisoned');
    const p = await rejectsWith(engine.device('cpu').call('live', []), 'DevicePoisoned');
    expect(Date.parse((p as unknown as { since: string }).since)).to.be.a('number').and.not.NaN;
    await restarted;
    const r = await run(engine);
    expect(r.results['y']!.data.length).to.equal(6);
  });

  it('an actor that crashes mid-job fails that job with a typed error, and nothing else', async () => {
    engine = createEngine({ cacheDir: tmp.dir, devices: { cpu: { plan: { counter: counter(), crash: [2] } } } });
    await run(engine);
    const crashing = run(engine);
    const other = engine.compileOnly(chainProgram(3, 7), 'cpu');
    await rejectsWith(crashing, 'ActorCrashed');
    expect((await other).hit).to.equal(false);
    const r = await run(engine);
    expect(r.results['y']).to.exist;
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
