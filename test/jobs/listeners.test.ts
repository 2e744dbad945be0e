import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { ListenerError } from '../../src/jobs/job.js';
import type { InvalidProgram } from '../../src/errors/index.js';
import { STEP_PROGRAM, rejectsWith, stepExpected, stepInputs, tempDir } from './helpers.js';

describe('engine: a listener that throws never changes its job', function () {
  this.timeout(30_000);
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  let reported: ListenerError[];
  // One engine for the tests (each submits its own job and starts with nothing reported): an engine's
  // start, its actors' threads loading their modules, is ~0.7 s of CPU, more than these tests.
  before(() => {
    tmp = tempDir();
    engine = createEngine({ cacheDir: tmp.dir });
    engine.on('error', (e) => { reported.push(e); });
  });
  beforeEach(() => { reported = []; });
  after(async () => { await engine.close(); tmp.remove(); });

  const boom = (what: string) => () => { throw new Error(`listener ${what}`); };

  for (const event of ['planned', 'loaded', 'step', 'verified', 'done'] as const) {
    it(`on '${event}': the job succeeds with its results and the error is reported on the engine`, async () => {
      const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(2), verify: true });
      const after: string[] = [];
      job.on(event, boom(event));
      // A listener after the one that throws still hears the event.
      job.on(event, () => { after.push(event); });
      const r = await job.result;
      expect(Array.from(r.results['y']!.data)).to.deep.equal(stepExpected(2).y);
      expect(r.verification?.pass).to.equal(true);
      expect(after.length).to.equal(event === 'step' ? 2 : 1);
      expect(reported.length).to.equal(event === 'step' ? 2 : 1);
      expect(reported[0]).to.be.instanceOf(ListenerError);
      expect([reported[0]!.jobId, reported[0]!.event, (reported[0]!.cause as Error).message]).to.deep.equal([job.id, event, `listener ${event}`]);
    });
  }

  it("on 'failed': the job fails with its own typed error, and the listener's is reported", async () => {
    const bad = { ...STEP_PROGRAM, eqns: [{ op: 'exp', in: ['nope'], out: 'e' }] };
    const job = engine.submit({ program: bad, target: 'cpu' });
    job.on('failed', boom('failed'));
    const e = await rejectsWith(job.result, 'InvalidProgram');
    expect((e as InvalidProgram).path).to.equal('/eqns/0/in/0');
    expect(reported.map((r) => r.event)).to.deep.equal(['failed']);
  });

  it('an async listener that rejects is reported too, and a once listener hears the event once', async () => {
    const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(3) });
    let once = 0;
    job.once('step', () => { once++; throw new Error('once'); });
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- an async listener that rejects is the case under test
    job.on('done', async () => { await Promise.resolve(); throw new Error('async done'); });
    const r = await job.result;
    expect(r.stepCount).to.equal(3);
    await new Promise((resolve) => setImmediate(resolve));
    expect(once).to.equal(1);
    expect(reported.map((x) => [x.event, (x.cause as Error).message])).to.deep.equal([['step', 'once'], ['done', 'async done']]);
  });

  it('with no error listener, the engine reports a listener error as a process warning', async () => {
    const quiet = createEngine({ cacheDir: tmp.dir });
    const warned: unknown[] = [];
    // eslint-disable-next-line @typescript-eslint/unbound-method -- saved to be put back on the same object, never called detached
    const original = process.emitWarning;
    process.emitWarning = ((w: unknown) => { warned.push(w); });
    try {
      const job = quiet.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) });
      job.on('done', boom('done'));
      const r = await job.result;
      expect(Array.from(r.results['y']!.data)).to.deep.equal(stepExpected(1).y);
    } finally {
      process.emitWarning = original;
      await quiet.close();
    }
    expect(warned).to.have.length(1);
    expect(warned[0]).to.be.instanceOf(ListenerError);
    expect((warned[0] as ListenerError).event).to.equal('done');
  });
});
