import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { program } from '../../src/ops/builder.js';
import { tensor } from '../../src/ir/tensor.js';
import { CapabilityMissing, InvalidInput, InvalidProgram } from '../../src/errors/index.js';
import { STEP_PROGRAM, rejectsWith, stepExpected, stepInputs, tempDir } from './helpers.js';

describe('engine: jobs on the CPU target through the actors', function () {
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  beforeEach(() => { tmp = tempDir(); engine = createEngine({ cacheDir: tmp.dir }); });
  afterEach(async () => { await engine.close(); tmp.remove(); });

  it('runs steps with carried state and reports every stage in order', async () => {
    const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(3), steps: 3, verify: true });
    const steps: number[] = [];
    job.on('step', (s) => steps.push(s.index));
    const r = await job.result;
    expect(job.stages).to.deep.equal(['planned', 'compiled', 'loaded', 'step', 'step', 'step', 'verified', 'done']);
    expect(steps).to.deep.equal([0, 1, 2]);
    // acc after 3 steps is the f32 sum of x over steps 0..2; y of the last step is exp(acc) * 0.5.
    const x = (s: number) => [0.25 * s, -1, 1.5, 2, -0.5, 0.125];
    const acc = [0, 0, 0, 0, 0, 0].map((_, i) => Math.fround(Math.fround(x(0)[i]! + x(1)[i]!) + x(2)[i]!));
    expect(Array.from(r.state['acc']!.data)).to.deep.equal(acc);
    const y = acc.map((a) => Math.fround(Math.fround(Math.exp(a)) * 0.5));
    expect(Array.from(r.results['y']!.data)).to.deep.equal(y);
    expect(r.steps).to.have.length(3);
    expect(r.simulated).to.equal(false);
    expect(r.verification?.pass).to.equal(true);
    expect(r.verification?.numericsClass).to.equal('Exact');
  });

  it('a job on a fresh engine fetches its artifact while the device worker starts, not after, on one compiler thread; a ready device is asked first', async () => {
    // What had started by the time the device worker was ready, for a job of a new program (on main,
    // before the fetch moved: the planner alone; the cache was asked once the device said what it lacked).
    let seen: Promise<string[]> | undefined;
    const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) });
    // 'planned' comes before the engine makes the device actor: this one is the job's, still starting.
    job.on('planned', () => {
      engine.device('cpu').on('ready', () => { seen ??= engine.status().then((s) => s.actors.map((a) => a.name).sort()); });
    });
    await job.result;
    expect(await seen).to.deep.equal(['cache', 'planner']);
    expect(job.stages).to.deep.equal(['planned', 'compiled', 'loaded', 'step', 'done']);
    // One compile needed one compiler thread of the two the pool may run: planner, cache, device, compiler.
    expect(engine.liveThreads()).to.equal(4);
    // A device that is ready may hold what a job needs: it is asked first, and what it holds is not fetched.
    const again = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) });
    await again.result;
    expect(again.stages).to.deep.equal(['planned', 'cache-hit', 'loaded', 'step', 'done']);
    expect((await engine.cacheStats()).localHits).to.equal(0);
  });

  it('a burst of jobs of one new program compiles it once', async () => {
    const jobs = Array.from({ length: 6 }, () => engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) }).result);
    const results = await Promise.all(jobs);
    for (const r of results) expect(Array.from(r.results['y']!.data)).to.deep.equal(stepExpected(1).y);
    const stats = await engine.cacheStats();
    expect(stats.stored).to.equal(1);
    const outcomes = await Promise.all([engine.compileOnly(STEP_PROGRAM, 'cpu'), engine.compileOnly(STEP_PROGRAM, 'cpu')]);
    expect(outcomes.map((o) => o.hit)).to.deep.equal([true, true]);
    expect((await engine.cacheStats()).stored).to.equal(1);
  });

  it('a result written with JSON.stringify is the format\'s tensors on the wire', async () => {
    const p = program('specials');
    const x = p.activation('x', 'f32', [4]);
    p.results(p.named('y').div(x, 0));
    const r = await engine.submit({ program: p, target: 'cpu', inputs: { x: { dtype: 'f32', shape: [4], data: [1, -1, 0, '-0'] } } }).result;
    expect(JSON.parse(JSON.stringify(r.results))).to.deep.equal({ y: { dtype: 'f32', shape: [4], data: ['inf', '-inf', 'nan', 'nan'] } });
    expect(r.results['y']!.data).to.be.instanceOf(Float64Array);
  });

  it('answers the second run of the same program from the cache without compiling', async () => {
    await engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) }).result;
    const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) });
    const r = await job.result;
    expect(r.cacheHit).to.equal(true);
    expect(job.stages).to.include('cache-hit').and.not.include('compiled');
  });

  it('takes a builder program and Tensor inputs', async () => {
    const p = program('built');
    const x = p.activation('x', 'i32', [3]);
    p.results(p.named('y').mul(x, 3));
    const r = await engine.submit({ program: p, target: 'cpu', inputs: { x: tensor('i32', [3], [1, -2, 0x40000000]) } }).result;
    expect(Array.from(r.results['y']!.data)).to.deep.equal([3, -6, -1073741824]);
  });

  it('fails a job with the typed refusal that names the place', async () => {
    const bad = { ...STEP_PROGRAM, eqns: [{ op: 'exp', in: ['nope'], out: 'e' }] };
    const e = await rejectsWith(engine.submit({ program: bad, target: 'cpu' }).result, 'InvalidProgram');
    expect((e as InvalidProgram).path).to.equal('/eqns/0/in/0');
    const ar = { ...STEP_PROGRAM, eqns: [...STEP_PROGRAM.eqns, { op: 'all_reduce', in: ['y'], out: 'z', reduce: 'sum' }], results: ['z'] };
    const c = await rejectsWith(engine.submit({ program: ar, target: 'cpu', inputs: stepInputs(1) }).result, 'CapabilityMissing');
    expect((c as CapabilityMissing).capability).to.equal('collective.all_reduce');
    const i = await rejectsWith(engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: { acc: stepInputs(1).acc } }).result, 'InvalidInput');
    expect((i as InvalidInput).path).to.match(/x/);
  });

  it('runs an NPU target on its simulator, labelled as one, when the machine has no such hardware', async () => {
    const r = await engine.submit({ program: STEP_PROGRAM, target: 'xdna2', inputs: stepInputs(2), steps: 2, verify: true }).result;
    expect(r.simulated).to.equal(true);
    expect(r.target).to.equal('xdna2');
    expect(r.verification?.pass).to.equal(true);
    await rejectsWith(engine.submit({ program: STEP_PROGRAM, target: 'gpu', inputs: stepInputs(1) }).result, 'UsageError');
  });

  it('answers NoDevice when asked for NPU hardware this machine does not have', async () => {
    const native = createEngine({ cacheDir: tmp.dir, devices: { xdna2: { mode: 'native' }, npu4: { mode: 'native' } } });
    try {
      await rejectsWith(native.submit({ program: STEP_PROGRAM, target: 'xdna2', inputs: stepInputs(1) }).result, 'NoDevice');
      await rejectsWith(native.submit({ program: STEP_PROGRAM, target: 'npu4', inputs: stepInputs(1) }).result, 'NoDevice');
    } finally {
      await native.close();
    }
  });

  it('fails the oracle errors of a run as typed errors', async () => {
    const p = {
      format: 'program@1', name: 'div0',
      args: [{ name: 'a', role: 'activation', dtype: 'i32', shape: [2] }],
      eqns: [{ op: 'div', in: ['a', { lit: 0 }], out: 'q' }], results: ['q'], state: {},
    };
    await rejectsWith(engine.submit({ program: p, target: 'cpu', inputs: { a: { dtype: 'i32', shape: [2], data: [1, 2] } } }).result, 'IntegerDivideByZero');
    // The device survives an oracle error: the next job runs.
    const r = await engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) }).result;
    expect(Array.from(r.results['y']!.data)).to.deep.equal(stepExpected(1).y);
  });

  it('releaseCompilers stops the idle compiler, planner and cache workers, keeping the cache counts; the next new program starts them again and runs (control: without it they stay)', async () => {
    const actors = async () => (await engine.status()).actors.map((a) => a.name).sort();
    await engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) }).result;
    const withCompilers = engine.liveThreads();
    // Control: a cached program's job neither starts nor stops a compiler or planner worker.
    await engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(2) }).result;
    expect(engine.liveThreads()).to.equal(withCompilers);
    expect(await actors()).to.deep.equal(['cache', 'planner']);
    const counted = await engine.cacheStats();
    expect(await engine.releaseCompilers()).to.equal(true);
    const without = engine.liveThreads();
    expect(without).to.be.below(withCompilers);
    expect(await actors()).to.deep.equal([]);
    // The stopped cache worker's counts stay in the status.
    const status = (await engine.status()).cache!;
    expect([status.misses, status.stored, status.localHits]).to.deep.equal([counted.misses, counted.stored, counted.localHits]);
    // A program planned, compiled and loaded before needs no planner, cache or compiler: none starts.
    await engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) }).result;
    expect(engine.liveThreads()).to.equal(without);
    expect(await actors()).to.deep.equal([]);
    const p = program('another');
    const x = p.activation('x', 'f32', [2]);
    p.results(p.named('y').mul(x, 3));
    const r = await engine.submit({ program: p.build(), target: 'cpu', inputs: { x: tensor('f32', [2], [1, -2]) } }).result;
    expect(Array.from(r.results['y']!.data)).to.deep.equal([3, -6]);
    expect(engine.liveThreads()).to.equal(withCompilers);
    expect(await actors()).to.deep.equal(['cache', 'planner']);
    // The restarted cache worker's counts add to the stopped one's: the new program's miss and store.
    const after = await engine.cacheStats();
    expect([after.misses, after.stored]).to.deep.equal([counted.misses + 1, counted.stored + 1]);
    expect(await engine.releaseCompilers()).to.equal(true);
    await engine.close();
    expect(engine.liveThreads()).to.equal(0);
  });

  it('settles jobs submitted after close with EngineClosed and leaves no worker', async () => {
    await engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1), verify: true }).result;
    expect(engine.liveThreads()).to.be.greaterThan(0);
    await engine.close();
    expect(engine.liveThreads()).to.equal(0);
    await rejectsWith(engine.submit({ program: STEP_PROGRAM, target: 'cpu' }).result, 'EngineClosed');
  });
});
