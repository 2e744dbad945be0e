import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { EngineError, type InvalidInput, type InvalidOptions, type InvalidProgram } from '../../src/errors/index.js';
import { STEP_PROGRAM, rejectsWith, stepExpected, stepInputs, tempDir } from './helpers.js';

/** The InvalidOptions createEngine throws for `opts`. */
function refusedEngine(opts: unknown): InvalidOptions {
  try {
    const e = createEngine(opts as Parameters<typeof createEngine>[0]);
    void e.close();
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(EngineError);
    expect((err as EngineError).code, (err as Error).message).to.equal('InvalidOptions');
    return err as InvalidOptions;
  }
  return expect.fail(`createEngine(${String(opts)}) did not throw`);
}

describe('engine: caller mistakes are typed refusals naming the field', function () {
  this.timeout(30_000);
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  beforeEach(() => { tmp = tempDir(); engine = createEngine({ cacheDir: tmp.dir }); });
  afterEach(async () => { await engine.close(); tmp.remove(); });

  const submit = (spec: Record<string, unknown>) =>
    engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1), ...spec }).result;

  it('createEngine refuses bad worker counts, deadlines, restart intensities, devices and maxSteps', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ workers: 0 }, 'workers'], [{ workers: -1 }, 'workers'], [{ workers: '2' }, 'workers'], [{ workers: 1.5 }, 'workers'],
      [{ oracleWorkers: 0 }, 'oracleWorkers'],
      [{ deadlineMs: -1 }, 'deadlineMs'], [{ deadlineMs: NaN }, 'deadlineMs'], [{ deadlineMs: '100' }, 'deadlineMs'],
      [{ deadlineMs: null }, 'deadlineMs'], [{ deadlineMs: 0 }, 'deadlineMs'],
      [{ cacheDir: '' }, 'cacheDir'], [{ cacheDir: 7 }, 'cacheDir'],
      [{ restart: { max: -1, windowMs: 10 } }, 'restart.max'], [{ restart: { max: 1, windowMs: 0 } }, 'restart.windowMs'],
      [{ devices: { gpu: {} } }, 'devices.gpu'], [{ devices: { cpu: { mode: 'fast' } } }, 'devices.cpu.mode'],
      [{ devices: { cpu: { maxContexts: 0 } } }, 'devices.cpu.maxContexts'],
      [{ devices: { cpu: { faults: { hangOnRun: 0 } } } }, 'devices.cpu.faults'],
      [{ maxSteps: 0 }, 'maxSteps'], [{ maxSteps: '9' }, 'maxSteps'],
    ];
    for (const [opts, field] of cases) expect(refusedEngine({ cacheDir: tmp.dir, ...opts }).field, JSON.stringify(opts)).to.equal(field);
    const getter = Object.defineProperty({ cacheDir: tmp.dir }, 'workers', { enumerable: true, get() { throw new Error('getter'); } });
    expect(refusedEngine(getter).field).to.equal('workers');
    expect(refusedEngine('fast').field).to.equal('');
  });

  it('submit refuses bad job options with InvalidOptions naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ deadlineMs: -1 }, 'deadlineMs'], [{ deadlineMs: NaN }, 'deadlineMs'], [{ deadlineMs: '100' }, 'deadlineMs'], [{ deadlineMs: null }, 'deadlineMs'],
      [{ steps: 0 }, 'steps'], [{ steps: '3' }, 'steps'], [{ steps: 1.5 }, 'steps'],
      [{ verify: 'yes' }, 'verify'], [{ keepSteps: -1 }, 'keepSteps'], [{ target: 5 }, 'target'], [{ program: undefined }, 'program'],
    ];
    for (const [spec, field] of cases) {
      const e = await rejectsWith(submit(spec), 'InvalidOptions');
      expect((e as InvalidOptions).field, JSON.stringify(spec)).to.equal(field);
    }
  });

  it('a deadline of 0 is refused the same way on a cold and on a warm engine; Infinity is no deadline', async () => {
    const cold = await rejectsWith(submit({ deadlineMs: 0 }), 'InvalidOptions');
    expect((cold as InvalidOptions).field).to.equal('deadlineMs');
    const r = await submit({ deadlineMs: Infinity });
    expect(Array.from(r.results['y']!.data)).to.deep.equal(stepExpected(1).y);
    const warm = await rejectsWith(submit({ deadlineMs: 0 }), 'InvalidOptions');
    expect((warm as InvalidOptions).field).to.equal('deadlineMs');
    // The refusal touched no device: the next job runs on the same, unpoisoned actor.
    expect(engine.device('cpu').state).to.equal('ready');
    expect(Array.from((await submit({})).results['y']!.data)).to.deep.equal(stepExpected(1).y);
  });

  it('refuses inputs with throwing getters, cycles, BigInt and Symbol values, naming the value', async () => {
    const x = stepInputs(1).x[0]!;
    const cyclic: Record<string, unknown> = { ...x };
    cyclic['meta'] = cyclic;
    const cases: [unknown, string, RegExp][] = [
      [{ acc: stepInputs(1).acc, get x() { throw new Error('boom'); } }, '/x', /reading it threw Error: boom/],
      [{ acc: stepInputs(1).acc, x: cyclic }, '/x/meta', /circular/],
      [{ acc: stepInputs(1).acc, x: { ...x, data: [1n, 0, 0, 0, 0, 0] } }, '/x/data/0', /BigInt/],
      [{ acc: stepInputs(1).acc, x: { ...x, dtype: Symbol('f32') } }, '/x/dtype', /Symbol/],
      [{ acc: stepInputs(1).acc, x: { ...x, data: () => [0] } }, '/x/data', /function/],
      // A Tensor object whose data is short is refused at its data, not at the b64 it would cross as.
      [{ acc: stepInputs(1).acc, x: [{ ...x, data: new Float64Array(2) }] }, '/x/0/data', /needs 6 elements, "data" has 2/],
    ];
    for (const [inputs, path, reason] of cases) {
      const e = await rejectsWith(submit({ inputs }), 'InvalidInput') as InvalidInput;
      expect([e.path, e.reason], path).to.satisfy(([p, r]: [string, string]) => p === path && reason.test(r));
    }
  });

  it('refuses programs with throwing getters, cycles, BigInt and Symbol values, naming the value', async () => {
    const cyclic = JSON.parse(JSON.stringify(STEP_PROGRAM)) as Record<string, unknown>;
    (cyclic['args'] as Record<string, unknown>[])[0]!['self'] = cyclic;
    const args = STEP_PROGRAM.args;
    const cases: [unknown, string, RegExp][] = [
      [{ ...STEP_PROGRAM, get eqns() { throw new Error('getter'); } }, '/eqns', /reading it threw Error: getter/],
      [cyclic, '/args/0/self', /circular reference \(back to the root\)/],
      [{ ...STEP_PROGRAM, args: [{ ...args[0], shape: [2n, 3] }, args[1]] }, '/args/0/shape/0', /BigInt/],
      [{ ...STEP_PROGRAM, name: Symbol('s') }, '/name', /Symbol/],
    ];
    for (const [program, path, reason] of cases) {
      const e = await rejectsWith(submit({ program }), 'InvalidProgram') as InvalidProgram;
      expect([e.path, e.reason], path).to.satisfy(([p, r]: [string, string]) => p === path && reason.test(r));
    }
    const c = await rejectsWith(engine.compileOnly({ ...STEP_PROGRAM, get name() { throw new Error('getter'); } }, 'cpu'), 'InvalidProgram');
    expect((c as InvalidProgram).path).to.equal('/name');
  });

  it('copies the program and inputs at submit: a change after it does not reach the job', async () => {
    const inputs = stepInputs(1);
    const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs });
    inputs.x[0]!.data[0] = 99;
    const r = await job.result;
    expect(Array.from(r.results['y']!.data)).to.deep.equal(stepExpected(1).y);
  });
});
