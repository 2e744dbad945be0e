import { expect } from 'chai';
import { DeadlineExceeded } from '../../src/errors/index.js';
import { parseProgram } from '../../src/ir/codec.js';
import { decodeInputs } from '../../src/ir/inputsCodec.js';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { runPartitioned } from '../../src/jobs/partitioned.js';
import { checkProgram } from '../../src/ops/validate.js';
import { runProgram } from '../../src/oracle/index.js';
import { CARRY, SMALL, smallInputs } from '../planner/partitionFixture.js';
import { STEP_PROGRAM, hangDeadline, stepExpected, stepInputs, tempDir, timed } from './helpers.js';

const counter = () => new Int32Array(new SharedArrayBuffer(4));

// Every step chains exp (XDNA2: abs 2e-6 + rel 1e-5), a K=8 matmul on the host (f32 accumulation) and
// two adds into a state of magnitude ~10 after three steps: 1e-5 relative plus 1e-5 absolute holds them
// all with margin. h is that state rounded to f16, so it may differ by one f16 ulp (rel 2^-10).
function expectClose(got: ArrayLike<number>, want: ArrayLike<number>, abs: number, rel: number, what: string): void {
  expect(got.length, what).to.equal(want.length);
  for (let i = 0; i < got.length; i++) {
    const w = want[i]!;
    expect(Math.abs(got[i]! - w), `${what}[${i}]: ${got[i]} vs ${w}`).to.be.at.most(abs + rel * Math.abs(w));
  }
}

describe('engine: partitioned programs, one session per segment across devices', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine | undefined;
  beforeEach(() => { tmp = tempDir(); });
  afterEach(async () => { await engine?.close(); engine = undefined; tmp.remove(); });
  // One engine for the tests that only run programs (an engine's start, its actors' threads loading their
  // modules, is ~0.7 s of CPU); the one whose device hangs has its own.
  let commonTmp: ReturnType<typeof tempDir>;
  let common: Engine;
  before(() => { commonTmp = tempDir(); common = createEngine({ cacheDir: commonTmp.dir, workers: 1 }); });
  after(async () => { await common.close(); commonTmp.remove(); });

  it('xdna2,host: three steps equal the cpu oracle within the segments\' bounds, each transfer recorded', async () => {
    const engine = common;
    const inputs = smallInputs(3);
    const r = await runPartitioned(engine, { program: SMALL, target: 'xdna2,host', inputs });
    const checked = checkProgram(parseProgram(SMALL));
    const want = runProgram(checked, decodeInputs(inputs, checked));
    expect(r.stepCount).to.equal(3);
    expect(r.segments.map((s) => s.target)).to.deep.equal(['xdna2', 'host', 'xdna2', 'host']);
    expect(r.segments.filter((s) => s.target === 'xdna2').every((s) => s.simulated)).to.equal(true);
    for (const [k, step] of r.steps.entries()) {
      expectClose(step['c']!.data, want[k]!.results['c']!.data, 1e-5, 1e-5, `step ${k} c`);
      expectClose(step['h']!.data, want[k]!.results['h']!.data, 1e-5, 2 ** -10, `step ${k} h`);
    }
    expectClose(r.state['acc']!.data, want[2]!.state['acc']!.data, 1e-5, 1e-5, 'acc');
    // a, b and acc2 cross devices once per step, 128 bytes each.
    expect(r.transfers.map((t) => `${t.step}:${t.value}:${t.fromDevice}->${t.toDevice}:${t.bytes}`)).to.deep.equal(
      [0, 1, 2].flatMap((s) => [`${s}:a:xdna2->host:128`, `${s}:b:host->xdna2:128`, `${s}:acc2:xdna2->host:128`]),
    );
  });

  it('a state read on the NPU and made on the host crosses back before every later step', async () => {
    const engine = common;
    const inputs = smallInputs(3);
    const r = await runPartitioned(engine, { program: CARRY, target: 'xdna2,host', inputs, keepSteps: Infinity });
    const checked = checkProgram(parseProgram(CARRY));
    const want = runProgram(checked, decodeInputs(inputs, checked));
    for (const [k, step] of r.steps.entries()) expectClose(step['a']!.data, want[k]!.results['a']!.data, 1e-5, 1e-5, `step ${k} a`);
    expectClose(r.state['acc']!.data, want[2]!.state['acc']!.data, 1e-5, 1e-5, 'acc');
    expect(r.transfers.map((t) => `${t.step}:${t.value}:${t.fromDevice}->${t.toDevice}${t.carried ? `:${t.carried}` : ''}`)).to.deep.equal([
      '0:a:xdna2->host', '1:acc2:host->xdna2:acc', '1:a:xdna2->host', '2:acc2:host->xdna2:acc', '2:a:xdna2->host',
    ]);
  });

  it('engine.submit with a list of targets runs the same partition as a job: its stages, its transfers', async () => {
    const engine = common;
    const job = engine.submit({ program: SMALL, target: 'xdna2,host', inputs: smallInputs(2) });
    const seen: number[] = [];
    job.on('step', (e) => seen.push(e.index));
    const r = await job.result;
    expect(job.stages).to.deep.equal(['planned', 'step', 'step', 'done']);
    expect(seen).to.deep.equal([0, 1]);
    expect(r.target).to.equal('xdna2');
    expect(r.partition!.segments.map((s) => s.target)).to.deep.equal(['xdna2', 'host', 'xdna2', 'host']);
    expect(r.partition!.transfers.map((t) => t.value)).to.deep.equal(['a', 'b', 'acc2', 'a', 'b', 'acc2']);
    const alone = await runPartitioned(engine, { program: SMALL, target: 'xdna2,host', inputs: smallInputs(2) });
    expect(Array.from(r.results['c']!.data)).to.deep.equal(Array.from(alone.results['c']!.data));
    const v = await engine.submit({ program: SMALL, target: 'xdna2,host', inputs: smallInputs(1), verify: true }).result.then(() => undefined, (x: unknown) => x);
    expect(v).to.have.property('code', 'InvalidOptions');
  });

  it('a single-target list runs as that target alone: the same values as a job', async () => {
    const engine = common;
    const r = await runPartitioned(engine, { program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(2) });
    expect(r.segments.map((s) => s.target)).to.deep.equal(['cpu']);
    expect(Array.from(r.results['y']!.data)).to.deep.equal(stepExpected(2).y);
    expect(Array.from(r.state['acc']!.data)).to.deep.equal(stepExpected(2).acc);
    expect(r.transfers).to.deep.equal([]);
  });

  it('refuses a program no listed target admits whole, with the first target\'s refusal', async () => {
    const engine = common;
    const p = { ...SMALL, eqns: [...SMALL.eqns, { op: 'all_reduce', in: ['c'], out: 'r', reduce: 'sum' }], results: ['r'] };
    const e = await runPartitioned(engine, { program: p, target: 'xdna2,host', inputs: smallInputs(1) }).then(() => undefined, (x: unknown) => x);
    expect(e).to.have.property('code', 'CapabilityMissing');
    expect(e).to.have.property('eqn', 5);
    const dup = await runPartitioned(engine, { program: SMALL, target: 'host,host' }).then(() => undefined, (x: unknown) => x);
    expect(dup).to.have.property('code', 'InvalidOptions');
  });

  it('an NPU segment that hangs: DeadlineExceeded naming the NPU, its actor alone poisoned, the host healthy, the next job runs', async () => {
    // SMALL has two NPU segments: a cold job warms both devices (runs 1, 2), a warm one is timed (3, 4),
    // and the third job's first NPU run hangs. Its deadline must let the normal calls before the hang
    // through on a loaded machine.
    engine = createEngine({ cacheDir: tmp.dir, workers: 1, devices: { xdna2: { plan: { counter: counter(), hang: [5] } } } });
    const e0 = engine;
    const normal = () => runPartitioned(e0, { program: SMALL, target: 'xdna2,host', inputs: smallInputs(1) });
    await normal();
    const deadlineMs = hangDeadline(await timed(normal));
    const npu = engine.device('xdna2');
    let poisoned = false;
    npu.on('poisoned', () => { poisoned = true; });
    const restarted = new Promise<void>((resolve) => { const off = npu.on('ready', () => { if (poisoned) { off(); resolve(); } }); });
    const e = await runPartitioned(engine, { program: SMALL, target: 'xdna2,host', inputs: smallInputs(1), deadlineMs }).then(() => undefined, (x: unknown) => x);
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect((e as DeadlineExceeded).deadlineMs).to.equal(deadlineMs);
    expect((e as DeadlineExceeded).device).to.match(/xdna2/);
    expect((e as DeadlineExceeded).message).to.match(/^the run on \S*xdna2/);
    expect(npu.state).to.equal('poisoned');
    expect(engine.device('host').state).to.equal('ready');
    // The host's actor was never restarted: a host job runs now, and so does the partitioned job.
    const host = await engine.submit({ program: STEP_PROGRAM, target: 'host', inputs: stepInputs(1) }).result;
    expect(Array.from(host.results['y']!.data)).to.deep.equal(stepExpected(1).y);
    await restarted;
    const again = await runPartitioned(engine, { program: SMALL, target: 'xdna2,host', inputs: smallInputs(1) });
    expect(again.stepCount).to.equal(1);
    expect(again.transfers).to.have.length(3);
  });
});
