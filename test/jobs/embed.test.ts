import { once } from 'node:events';
import { MessageChannel, Worker, type MessagePort, type Transferable } from 'node:worker_threads';
import { expect } from 'chai';
import {
  ActorCrashed, DeadlineExceeded, EngineClosed, EngineError, InvalidInput, InvalidOptions, InvalidProgram,
  connectEngine, createEngine, exposeEngine, program, tensor, type Job, type JobEvents, type JobResult, type JobSpec,
} from '../../src/index.js';
import { CHAIN_INPUTS, STEP_PROGRAM, chainProgram, hangDeadline, stepInputs, tempDir, timed } from './helpers.js';

const ENGINE_WORKER = new URL('./fixtures/engine.worker.js', import.meta.url);
const PORT_WORKER = new URL('./fixtures/port.worker.js', import.meta.url);
const EVENTS = ['planned', 'cache-hit', 'compiled', 'loaded', 'step', 'verified', 'done', 'failed'] as const;
const VERIFIED: JobSpec = { program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(2), steps: 2, verify: true };
/** Every replay hangs, so a job stays in flight after 'loaded' until something ends it. */
const HANGING = { workers: 1, devices: { cpu: { faults: { hangOnRun: 'always' } } } } as const;

/** The first payload of a job's event `name` (node:events' once does not take an eventemitter3 emitter). */
function nextEvent<K extends 'loaded' | 'failed'>(job: Job, name: K): Promise<Parameters<JobEvents[K]>[0]> {
  return new Promise((resolve) => { job.once(name, (e: Parameters<JobEvents[K]>[0]) => resolve(e)); });
}

type Listener = (...a: any[]) => void;

/** A port as Electron's MessagePortMain is: an emitter whose 'message' listeners get `{ data, ports }`. */
function electronStyle(port: MessagePort) {
  const wrapped = new Map<Listener, Listener>();
  return {
    postMessage: (m: unknown) => port.postMessage(m),
    on(event: string, l: Listener) {
      const w: Listener = event === 'message' ? (data: unknown) => l({ data, ports: [] }) : l;
      wrapped.set(l, w);
      port.on(event, w);
    },
    off(event: string, l: Listener) { port.off(event, wrapped.get(l) ?? l); },
  };
}

/** A port as a web page (an Electron renderer) holds it: addEventListener only, MessageEvents. */
function domStyle(port: MessagePort) {
  return {
    postMessage: (m: unknown, t?: readonly Transferable[]) => port.postMessage(m, t),
    addEventListener: (event: string, l: (e: unknown) => void) => port.addEventListener(event, l),
    removeEventListener: (event: string, l: (e: unknown) => void) => port.removeEventListener(event, l),
    start: () => port.start(),
  };
}

async function rejection(p: Promise<unknown>): Promise<EngineError> {
  try {
    await p;
  } catch (e) {
    expect(e, String(e)).to.be.instanceOf(EngineError);
    return e as EngineError;
  }
  return expect.fail('expected a typed rejection, but it resolved');
}

describe('jobs: an engine embedded behind a port (comlink)', function () {
  this.timeout(30_000);
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => { tmp = tempDir('npuo-embed-'); });
  afterEach(() => tmp.remove());

  it('runs a job in a worker thread as the README shows: stages in order, the in-process results, and close lets the worker exit', async () => {
    const worker = new Worker(ENGINE_WORKER, { workerData: { cacheDir: tmp.dir, workers: 1 } });
    const exited = once(worker, 'exit');
    const engine = connectEngine(worker);
    const job = engine.submit(VERIFIED);
    const seen: string[] = [];
    for (const name of EVENTS) job.on(name, () => seen.push(name));
    const indices: number[] = [];
    job.on('step', (s) => indices.push(s.index));
    const remote = await job.result;
    expect(seen).to.deep.equal(['planned', 'compiled', 'loaded', 'step', 'step', 'verified', 'done']);
    expect(job.stages).to.deep.equal(['planned', 'compiled', 'loaded', 'step', 'step', 'verified', 'done']);
    expect(indices).to.deep.equal([0, 1]);

    const here = tempDir('npuo-embed-local-');
    const local = createEngine({ cacheDir: here.dir, workers: 1 });
    let inProcess: JobResult;
    try {
      inProcess = await local.submit(VERIFIED).result;
    } finally {
      await local.close();
      here.remove();
    }
    expect(remote.results['y']!.data).to.be.instanceOf(Float64Array);
    expect(remote.results).to.deep.equal(inProcess.results);
    expect(remote.state).to.deep.equal(inProcess.state);
    expect(remote.steps).to.deep.equal(inProcess.steps);
    expect(remote.verification).to.deep.equal(inProcess.verification);
    expect(remote.verification!.pass).to.equal(true);
    // The wire form too: each result tensor writes the format's tensor, as in-process.
    expect(JSON.stringify(remote)).to.equal(JSON.stringify(inProcess));

    // compileOnly reaches the same cache the job filled.
    expect((await engine.compileOnly(STEP_PROGRAM, 'cpu')).hit).to.equal(true);
    // The status crosses too: the job counted, the cpu device actor ready, the cache holding the program.
    const status = await engine.status();
    expect(status.jobs).to.include({ submitted: 1, succeeded: 1, failed: 0 });
    expect(status.devices.map((d) => [d.kind, d.state])).to.deep.include(['cpu', 'ready']);
    expect(status.cache?.entries).to.be.greaterThan(0);
    await engine.close();
    // The worker's engine is closed and its threads gone: nothing keeps the worker alive.
    expect(await exited).to.deep.equal([0]);
    const after = await rejection(engine.submit(VERIFIED).result);
    expect(after).to.be.instanceOf(EngineClosed);
    expect(await rejection(engine.status())).to.be.instanceOf(EngineClosed);
  });

  it('a missed deadline in the worker arrives as DeadlineExceeded with its fields', async () => {
    const worker = new Worker(ENGINE_WORKER, { workerData: { cacheDir: tmp.dir, workers: 1, devices: { cpu: { faults: { hangOnRun: 3 } } } } });
    const exited = once(worker, 'exit');
    const engine = connectEngine(worker);
    // Two jobs of another program warm the device (run 1) and time a warm job (run 2), so the hung job
    // (run 3) still compiles and its deadline lets its normal calls through on a loaded machine.
    await engine.submit({ program: chainProgram(3, 1), target: 'cpu', inputs: CHAIN_INPUTS }).result;
    const deadlineMs = hangDeadline(await timed(() => engine.submit({ program: chainProgram(3, 2), target: 'cpu', inputs: CHAIN_INPUTS }).result));
    const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1), deadlineMs });
    const failed = nextEvent(job, 'failed');
    const e = await rejection(job.result);
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect((e as DeadlineExceeded).deadlineMs).to.equal(deadlineMs);
    expect(e.code).to.equal('DeadlineExceeded');
    expect(e.message).to.contain(`deadline of ${deadlineMs} ms`);
    expect(await failed).to.equal(e);
    expect(job.stages).to.deep.equal(['planned', 'compiled', 'loaded']);
    await engine.close();
    expect(await exited).to.deep.equal([0]);
  });

  it('terminating the worker mid-job settles the job with ActorCrashed naming the worker', async () => {
    const worker = new Worker(ENGINE_WORKER, { workerData: { cacheDir: tmp.dir, ...HANGING } });
    const engine = connectEngine(worker);
    const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1), deadlineMs: 60_000 });
    await nextEvent(job, 'loaded');
    const thread = worker.threadId;
    await worker.terminate();
    const e = await rejection(job.result);
    expect(e).to.be.instanceOf(ActorCrashed);
    expect((e as ActorCrashed).actor).to.equal(`engine in worker thread ${thread}`);
    expect(e.message).to.contain('exited with code 1');
    // Later calls fail at once, with the same reason; close still settles.
    expect(await rejection(engine.submit(VERIFIED).result)).to.be.instanceOf(ActorCrashed);
    expect(await rejection(engine.compileOnly(STEP_PROGRAM, 'cpu'))).to.be.instanceOf(ActorCrashed);
    await engine.close();
  });

  it('a worker whose module throws at import fails every pending call with ActorCrashed saying why, and this process lives', async () => {
    const worker = new Worker(new URL('./fixtures/broken.worker.js', import.meta.url));
    const engine = connectEngine(worker);
    const job = engine.submit(VERIFIED);
    const status = engine.status();
    const [e, s] = [await rejection(job.result), await rejection(status)];
    for (const x of [e, s]) {
      expect(x).to.be.instanceOf(ActorCrashed);
      expect(x.message).to.contain('it failed: Error: this engine worker cannot load');
    }
    expect(await rejection(engine.submit(VERIFIED).result)).to.be.instanceOf(ActorCrashed);
    await engine.close();
  });

  it('a MessagePort that closes mid-job settles the job, and the engine behind it closes and lets its thread exit', async () => {
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(PORT_WORKER, { workerData: { port: port2, options: { cacheDir: tmp.dir, ...HANGING } }, transferList: [port2] });
    const exited = once(worker, 'exit');
    const engine = connectEngine(port1);
    const job = engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: stepInputs(1), deadlineMs: 60_000 });
    await nextEvent(job, 'loaded');
    port1.close();
    const e = await rejection(job.result);
    expect(e).to.be.instanceOf(ActorCrashed);
    expect((e as ActorCrashed).actor).to.equal('engine in a MessagePort');
    expect(e.message).to.contain('port closed');
    expect(await exited).to.deep.equal([0]);
    await engine.close();
  });

  it('carries builders, Tensor inputs and typed refusals across Electron- and web-style ports, and refuses what cannot cross', async () => {
    const { port1, port2 } = new MessageChannel();
    const behind = exposeEngine(electronStyle(port1), { cacheDir: tmp.dir, workers: 1 });
    const engine = connectEngine(domStyle(port2));
    const p = program('built');
    const x = p.activation('x', 'i32', [3]);
    p.results(p.named('y').mul(x, 3));
    const r = await engine.submit({ program: p, target: 'cpu', inputs: { x: tensor('i32', [3], [1, -2, 0x40000000]) } }).result;
    expect(Array.from(r.results['y']!.data)).to.deep.equal([3, -6, -1073741824]);

    const bad = { ...STEP_PROGRAM, eqns: [{ op: 'exp', in: ['nope'], out: 'e' }] };
    const e = await rejection(engine.submit({ program: bad, target: 'cpu' }).result);
    expect(e).to.be.instanceOf(InvalidProgram);
    expect((e as InvalidProgram).path).to.equal('/eqns/0/in/0');

    const unsendable = await rejection(engine.submit({ program: STEP_PROGRAM, target: 'cpu', inputs: { x: () => 1 } }).result);
    expect(unsendable).to.be.instanceOf(InvalidInput);
    expect(unsendable.message).to.contain('cannot be sent');

    await engine.close();
    expect(behind.liveThreads()).to.equal(0);
    expect(await rejection(engine.compileOnly(STEP_PROGRAM, 'cpu'))).to.be.instanceOf(EngineClosed);
  });

  it('refuses what is not a port with InvalidOptions', () => {
    expect(() => exposeEngine(null)).to.throw(InvalidOptions, /not a port/);
    expect(() => connectEngine({} as never)).to.throw(InvalidOptions, /not a port/);
  });
});
