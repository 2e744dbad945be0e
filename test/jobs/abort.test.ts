import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { Aborted, InvalidOptions, connectEngine, createEngine, type Engine, type EngineError, type Job } from '../../src/index.js';
import { STEP_PROGRAM, stepExpected, stepInputs, tempDir } from './helpers.js';

const ENGINE_WORKER = new URL('./fixtures/engine.worker.js', import.meta.url);
/** Every run crawls and the cpu device has one context: a long job holds it, a second job waits for it. */
const SLOW = { workers: 1, devices: { cpu: { maxContexts: 1, faults: { slowRunMs: 50 } } } } as const;
/** Steps enough that a job not stopped by its abort outlasts any test's timeout by far (50 ms each). */
const LONG = 10_000;

async function rejection(p: Promise<unknown>): Promise<EngineError> {
  try { await p; } catch (e) { return e as EngineError; }
  throw new Error('expected a rejection');
}

function stepAt(job: Job, index: number): Promise<void> {
  return new Promise((resolve) => { job.on('step', (e) => { if (e.index === index) resolve(); }); });
}

/** A short job that must run to its end on the device after the aborted one: its results are checked. */
async function expectShortJobRuns(engine: Pick<Engine, 'submit'>): Promise<void> {
  const r = await engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(2), steps: 2 }).result;
  expect(Array.from(r.state['acc']!.data)).to.deep.equal(stepExpected(2).acc);
}

describe('jobs: submit(spec, { signal }) aborts a job', function () {
  this.timeout(120_000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => { tmp = tempDir(); });
  afterEach(() => tmp.remove());

  it('an abort during a long job rejects it with Aborted (its reason), and the device\'s one context goes to the next job', async () => {
    const engine = createEngine({ cacheDir: tmp.dir, ...SLOW });
    try {
      const ac = new AbortController();
      const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(LONG), steps: LONG, deadlineMs: 60_000 }, { signal: ac.signal });
      // Once it has failed, a job says nothing more, though the step in flight runs to its end: the
      // abort comes once step 1 is out and the job has sent step 2 (as in the hang test below).
      let failed = false;
      const late: number[] = [];
      job.on('failed', () => { failed = true; });
      job.on('step', (x) => {
        if (failed) late.push(x.index);
        else if (x.index === 1) setImmediate(() => ac.abort('the client went away'));
      });
      const e = await rejection(job.result);
      expect(e).to.be.instanceOf(Aborted);
      expect((e as Aborted).reason).to.equal('the client went away');
      expect(e.message).to.equal('aborted: the client went away');
      const stagesAtFailure = job.stages.length;
      // The next job has the device's one context: the aborted job's last step has ended by then.
      await expectShortJobRuns(engine);
      expect(late).to.deep.equal([]);
      expect(job.stages.length).to.equal(stagesAtFailure);
      const s = await engine.status();
      expect(s.devices.map((d) => [d.kind, d.running, d.waiting, d.sessions])).to.deep.equal([['cpu', 0, 0, 0]]);
      expect([s.jobs.submitted, s.jobs.succeeded, s.jobs.failed]).to.deep.equal([2, 1, 1]);
      expect(s.lastErrors.map((x) => x.code)).to.deep.equal(['Aborted']);
    } finally {
      await engine.close();
    }
  });

  it('an abort while a step hangs on the device rejects at once, not at the step\'s deadline', async () => {
    // The second run never completes; only its 10-minute deadline would end it.
    const engine = createEngine({ cacheDir: tmp.dir, workers: 1, devices: { cpu: { faults: { hangOnRun: 2 } } } });
    try {
      const ac = new AbortController();
      const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(3), steps: 3, deadlineMs: 600_000 }, { signal: ac.signal });
      // Once step 0 is out, the job goes straight on to send step 1 (the hanging run): abort after that.
      job.on('step', (e) => { if (e.index === 0) setImmediate(() => ac.abort('stop waiting')); });
      const e = await rejection(job.result);
      expect(e).to.be.instanceOf(Aborted);
      expect((e as Aborted).reason).to.equal('stop waiting');
    } finally {
      await engine.close();
    }
  });

  it('a job aborted while it waits for the device leaves the queue without loading', async () => {
    const engine = createEngine({ cacheDir: tmp.dir, ...SLOW });
    try {
      const first = new AbortController();
      const a = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(LONG), steps: LONG, deadlineMs: 60_000 }, { signal: first.signal });
      await stepAt(a, 0);
      const second = new AbortController();
      const b = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(2), steps: 2 }, { signal: second.signal });
      await new Promise<void>((resolve) => { b.once('planned', () => resolve()); });
      expect((await engine.status()).devices[0]!.waiting).to.equal(1);
      second.abort();
      const e = await rejection(b.result);
      expect(e).to.be.instanceOf(Aborted);
      expect((e as Aborted).reason).to.equal('AbortError: This operation was aborted');
      expect(b.stages).to.deep.equal(['planned']);
      expect((await engine.status()).devices[0]!.waiting).to.equal(0);
      first.abort();
      expect(await rejection(a.result)).to.be.instanceOf(Aborted);
      await expectShortJobRuns(engine);
    } finally {
      await engine.close();
    }
  });

  it('an already-aborted signal rejects at once with no stage; a signal that is not an AbortSignal is InvalidOptions', async () => {
    const engine = createEngine({ cacheDir: tmp.dir });
    try {
      const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) }, { signal: AbortSignal.abort('too late') });
      const e = await rejection(job.result);
      expect(e).to.be.instanceOf(Aborted);
      expect((e as Aborted).reason).to.equal('too late');
      expect(job.stages).to.deep.equal([]);
      expect(engine.liveThreads()).to.equal(0);
      const bad = await rejection(engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) }, { signal: 'stop' as unknown as AbortSignal }).result);
      expect(bad).to.be.instanceOf(InvalidOptions);
      expect((bad as InvalidOptions).field).to.equal('signal');
    } finally {
      await engine.close();
    }
  });

  it('across a port: the abort rejects the job with Aborted, the far engine stops it, and the next job runs', async () => {
    const worker = new Worker(ENGINE_WORKER, { workerData: { cacheDir: tmp.dir, ...SLOW } });
    const engine = connectEngine(worker);
    try {
      const ac = new AbortController();
      const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(LONG), steps: LONG, deadlineMs: 60_000 }, { signal: ac.signal });
      await stepAt(job, 1);
      ac.abort('enough');
      const e = await rejection(job.result);
      expect(e).to.be.instanceOf(Aborted);
      expect((e as Aborted).reason).to.equal('enough');
      await expectShortJobRuns(engine);
      const s = await engine.status();
      expect(s.lastErrors.map((x) => [x.code, x.message])).to.deep.equal([['Aborted', 'aborted: enough']]);
      expect(await rejection(engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1) }, { signal: AbortSignal.abort('x') }).result)).to.be.instanceOf(Aborted);
    } finally {
      await engine.close();
    }
  });
});
