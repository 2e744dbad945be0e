import { expect } from 'chai';
import { createEngine } from '../../src/jobs/engine.js';
import { EngineError } from '../../src/errors/index.js';
import { CHAIN_INPUTS, STEP_PROGRAM, chainProgram, hangDeadline, stepInputs, tempDir, timed } from './helpers.js';

// Every code a job may end with under injected faults; anything else (or a plain Error) is a defect.
const EXPECTED = new Set(['DeadlineExceeded', 'DevicePoisoned', 'ActorCrashed', 'ActorDown', 'LoadFailed']);

/**
 * The soak's deadline: it must catch the injected hangs, and let normal jobs through on a loaded machine
 * (250 ms did not: normal jobs missed it and the soak ran out of successes). So a warm job of the soak's
 * kind is timed on an engine without faults, in this process, and the deadline is hangDeadline of that.
 */
async function soakDeadline(): Promise<number> {
  const tmp = tempDir();
  const engine = createEngine({ cacheDir: tmp.dir });
  try {
    const job = () => engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(2), steps: 2, verify: true }).result;
    await job();
    return hangDeadline(await timed(job));
  } finally {
    await engine.close();
    tmp.remove();
  }
}

describe('engine: soak with faults injected at random', function () {
  this.timeout(180_000);

  it('settles every one of 300 jobs with results or a typed error, and close() leaves no worker', async () => {
    const tmp = tempDir();
    const deadlineMs = await soakDeadline();
    const engine = createEngine({
      cacheDir: tmp.dir,
      restart: { max: 1000, windowMs: 1000 },
      devices: {
        cpu: {
          chaos: { seed: 20261130, hang: 0.01, crash: 0.02, failLoad: 0.05 },
          // Random faults alone may, on some run, draw no hang at all; these replays fail for sure.
          plan: { counter: new Int32Array(new SharedArrayBuffer(4)), hang: [40, 170], crash: [90, 230] },
        },
      },
    });
    const outcomes = new Map<string, number>();
    const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    try {
      const jobs = [];
      for (let i = 0; i < 300; i++) {
        const spec = i % 3 === 0
          ? { program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(2), steps: 2, deadlineMs, verify: i % 6 === 0 }
          : { program: chainProgram(5, i % 7), target: 'cpu', inputs: CHAIN_INPUTS, deadlineMs };
        jobs.push(engine.submit(spec).result.then(
          (r) => { expect(Object.keys(r.results)).to.have.length(1); count('ok'); },
          (e: unknown) => {
            expect(e, String(e)).to.be.instanceOf(EngineError);
            const code = (e as EngineError).code;
            expect(EXPECTED.has(code), `unexpected ${code}: ${(e as Error).message}`).to.equal(true);
            count(code);
          }));
        // Keep a few jobs in flight at once, as users do, without queueing all 300 behind one hang; and
        // like a user, wait out a device restart instead of spending every job on DevicePoisoned.
        if (jobs.length % 8 === 0) {
          await Promise.all(jobs.slice(-8));
          const d = engine.device('cpu');
          if (d.state === 'poisoned' || d.state === 'restarting') {
            await new Promise<void>((resolve) => { const off = d.on('ready', () => { off(); resolve(); }); });
          }
        }
      }
      await Promise.all(jobs);
      const total = [...outcomes.values()].reduce((a, b) => a + b, 0);
      expect(total).to.equal(300);
      // A hang fails its whole batch (one DeadlineExceeded, the rest DevicePoisoned), so successes are
      // fewer than faults alone would say; most work must still get done.
      expect(outcomes.get('ok') ?? 0, JSON.stringify([...outcomes])).to.be.greaterThan(120);
      if (process.env['SOAK_VERBOSE']) console.log(`      soak outcomes (deadline ${deadlineMs} ms): ${JSON.stringify(Object.fromEntries(outcomes))}`);
      // The faults really happened: a soak that injects nothing proves nothing.
      for (const code of ['ActorCrashed', 'DeadlineExceeded']) {
        expect(outcomes.get(code) ?? 0, `${code} in ${JSON.stringify([...outcomes])}`).to.be.greaterThan(0);
      }
    } finally {
      await engine.close();
      tmp.remove();
    }
    expect(engine.liveThreads()).to.equal(0);
  });
});
