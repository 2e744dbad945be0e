import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { DEFAULT_MAX_STEPS } from '../../src/ir/inputsCodec.js';
import type { ResourceLimit } from '../../src/errors/index.js';
import { STEP_PROGRAM, rejectsWith, stepExpected, stepInputs, tempDir } from './helpers.js';

/** acc += x each step, y = acc: every step's value is known exactly. */
const COUNTER = {
  format: 'program@1', name: 'counter',
  args: [
    { name: 'x', role: 'activation', dtype: 'f32', shape: [2] },
    { name: 'acc', role: 'state', dtype: 'f32', shape: [2] },
  ],
  eqns: [{ op: 'add', in: ['acc', 'x'], out: 'y' }],
  results: ['y'], state: { acc: 'y' },
};
const COUNTER_INPUTS = { x: { dtype: 'f32', shape: [2], data: [1, 0.5] }, acc: { dtype: 'f32', shape: [2], data: [0, 0] } };

describe('engine: steps are streamed and their count bounded', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  // One engine for the tests (each submits its own jobs): an engine's start (its actors' threads loading
  // their modules) is ~0.7 s of CPU, more than most of these tests.
  before(() => { tmp = tempDir(); engine = createEngine({ cacheDir: tmp.dir }); });
  after(async () => { await engine.close(); tmp.remove(); });

  it('refuses more steps than the maximum with ResourceLimit steps, before running any', async () => {
    const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1), steps: DEFAULT_MAX_STEPS + 1 });
    const e = await rejectsWith(job.result, 'ResourceLimit') as ResourceLimit;
    expect([e.what, e.needed, e.max]).to.deep.equal(['steps', DEFAULT_MAX_STEPS + 1, 1_000_000]);
    expect(job.stages).to.deep.equal([]);
  });

  it('takes its maximum from the engine option maxSteps, for steps asked and for activation arrays', async () => {
    const small = createEngine({ cacheDir: tmp.dir, maxSteps: 3 });
    try {
      const asked = await rejectsWith(small.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1), steps: 4 }).result, 'ResourceLimit') as ResourceLimit;
      expect([asked.what, asked.needed, asked.max]).to.deep.equal(['steps', 4, 3]);
      const given = await rejectsWith(small.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(4) }).result, 'ResourceLimit') as ResourceLimit;
      expect([given.what, given.needed, given.max]).to.deep.equal(['steps', 4, 3]);
      const r = await small.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(3) }).result;
      expect(Array.from(r.state['acc']!.data)).to.deep.equal(stepExpected(3).acc);
    } finally {
      await small.close();
    }
  });

  it('keeps the results of the last keepSteps steps, streams every step, and says how many ran', async () => {
    const job = engine.submit({ program: COUNTER, target: 'cpu', inputs: COUNTER_INPUTS, steps: 40, keepSteps: 5 });
    const seen: number[] = [];
    job.on('step', (s) => { seen.push(s.results['y']!.data[0]!); });
    const r = await job.result;
    expect(seen).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(r.stepCount).to.equal(40);
    expect(r.steps.map((s) => Array.from(s['y']!.data))).to.deep.equal([36, 37, 38, 39, 40].map((n) => [n, n / 2]));
    expect(Array.from(r.results['y']!.data)).to.deep.equal([40, 20]);
    expect(Array.from(r.state['acc']!.data)).to.deep.equal([40, 20]);
  });

  it('keeps every step of a modest run by default, as before', async () => {
    const r = await engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(3) }).result;
    expect(r.stepCount).to.equal(3);
    expect(r.steps.map((s) => Array.from(s['y']!.data))).to.deep.equal([1, 2, 3].map((n) => stepExpected(n).y));
  });

  it('verifies a run of many oracle chunks, each started from the state the last one left', async () => {
    // 600 steps are three of the oracle's chunks (256 steps at most for a program this small).
    const r = await engine.submit({ program: COUNTER, target: 'cpu', inputs: COUNTER_INPUTS, steps: 600, verify: true, keepSteps: 2 }).result;
    expect(r.verification?.pass).to.equal(true);
    expect(r.verification?.steps).to.have.length(2);
    expect(r.verification?.steps[1]!['y']!.pass).to.equal(true);
    expect(Array.from(r.state['acc']!.data)).to.deep.equal([600, 300]);
    expect(r.steps).to.have.length(2);
  });

  it('runs 20 000 steps keeping 1000 results by default', async () => {
    const r = await engine.submit({ program: COUNTER, target: 'cpu', inputs: COUNTER_INPUTS, steps: 20_000 }).result;
    expect(r.stepCount).to.equal(20_000);
    expect(r.steps).to.have.length(1000);
    expect(Array.from(r.steps[0]!['y']!.data)).to.deep.equal([19_001, 19_001 / 2]);
    expect(Array.from(r.state['acc']!.data)).to.deep.equal([20_000, 10_000]);
  });
});
