/**
 * The NPU targets end to end through the engine's actors, on their simulators: programs that span
 * several artifacts, activation slots and carried state over changing inputs, verified against the
 * oracle under each program's numerics class.
 */
import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { planJob } from '../../src/actors/plannerActor.js';
import { BlobCache } from '../../src/cache/blobCache.js';
import { programToJson } from '../../src/ir/codec.js';
import type { CheckedProgram } from '../../src/ir/checked.js';
import { encodeTensor } from '../../src/ir/tensorCodec.js';
import { tensor } from '../../src/ir/tensor.js';
import { numel } from '../../src/ir/types.js';
import { drainedChain, freshReads, negChain, twentyEquations, wideCore } from '../compiler/aie/helpers.js';
import { tempDir } from './helpers.js';

/** Deterministic inputs for every activation and weight of a program, varying with the step. */
function inputsFor(c: CheckedProgram, steps: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fill = (name: string, dtype: string, shape: readonly number[], s: number) => {
    const n = numel(shape);
    const data = Array.from({ length: n }, (_, i) => dtype === 'i32' ? (i * 7 + s) % Math.max(1, 10) : Math.fround(Math.sin(i * 0.37 + s + name.length)));
    return encodeTensor(tensor(dtype === 'i32' ? 'i32' : 'f32', shape, data), 'b64');
  };
  for (const a of c.program.args) {
    if (a.role === 'activation') out[a.name] = Array.from({ length: steps }, (_, s) => fill(a.name, a.dtype, a.shape, s));
    else out[a.name] = fill(a.name, a.dtype, a.shape, 0);
  }
  return out;
}

const RUNNING_SUM = {
  format: 'program@1', name: 'running-sum',
  args: [
    { name: 'x', role: 'activation', dtype: 'f32', shape: [4, 64] },
    { name: 'acc', role: 'state', dtype: 'f32', shape: [4, 64] },
  ],
  eqns: [
    { op: 'add', in: ['acc', 'x'], out: 'acc2' },
    { op: 'mul', in: ['acc2', { lit: 0.25 }], out: 'q' },
    { op: 'exp', in: ['q'], out: 'e' },
    { op: 'reduce_sum', in: ['e'], out: 's', axes: [1] },
  ],
  results: ['s'], state: { acc: 'acc2' },
};

function runningInputs(steps: number) {
  return {
    acc: { dtype: 'f32', shape: [4, 64], data: Array(256).fill(0) },
    x: Array.from({ length: steps }, (_, s) => ({ dtype: 'f32', shape: [4, 64], data: Array.from({ length: 256 }, (_, i) => ((i * 13 + s * 5) % 17) - 8) })),
  };
}

describe('engine: the NPU targets on their simulators', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  // One engine for the tests that only run jobs (an engine's start, its actors' threads loading their
  // modules, is ~0.7 s of CPU, more than most of these tests); a test that counts what is loaded on a
  // device or what its cache holds has an engine and a cache folder of its own (`own`).
  before(() => { tmp = tempDir(); engine = createEngine({ cacheDir: tmp.dir }); });
  after(async () => { await engine.close(); tmp.remove(); });
  async function own(test: (engine: Engine, dir: string) => Promise<void>): Promise<void> {
    const t = tempDir();
    const e = createEngine({ cacheDir: t.dir });
    try { await test(e, t.dir); } finally { await e.close(); t.remove(); }
  }

  it('xdna2: twenty equations with twenty distinct shapes run in three hardware contexts, verified', () => own(async (engine) => {
    const c = twentyEquations();
    const job = engine.submit({ program: programToJson(c.program), target: 'xdna2', inputs: inputsFor(c, 2), steps: 2, verify: true });
    let regions = 0;
    job.on('planned', (e) => { regions = e.regions; });
    const r = await job.result;
    expect(regions).to.equal(3);
    expect(r.simulated).to.equal(true);
    expect(r.verification?.pass, JSON.stringify(r.verification?.steps.map((s) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v.reason]))))).to.equal(true);
    // The three artifacts stay loaded, one hardware context each.
    const live = await engine.device('xdna2').call('live', []);
    expect(live.contexts).to.equal(3);
  }));

  it('xdna2: activation slots and a carried running sum replay over changing inputs and match the oracle', async () => {
    const r = await engine.submit({ program: RUNNING_SUM, target: 'xdna2', inputs: runningInputs(4), steps: 4, verify: true }).result;
    expect(r.verification?.numericsClass).to.equal('Contract');
    expect(r.verification?.pass).to.equal(true);
    expect(r.steps).to.have.length(4);
    // Integer-valued inputs: the running sum is exact even through the core's truncating adder.
    const want = Array.from({ length: 256 }, (_, i) => [0, 1, 2, 3].reduce((n, s) => n + (((i * 13 + s * 5) % 17) - 8), 0));
    expect(Array.from(r.state['acc']!.data)).to.deep.equal(want);
  });

  const atBounds = [
    ['tiles', () => negChain(32)], ['streams-in', () => freshReads(16)], ['streams-out', () => drainedChain(16)],
    ['streams-per-tile', () => wideCore(2)], ['tile-local-bytes', () => negChain(1, [1, 3968])],
  ] as const;
  for (const [limit, build] of atBounds) {
    it(`xdna2: a program exactly at the ${limit} bound links and runs in one region`, async () => {
      const c = build();
      const job = engine.submit({ program: programToJson(c.program), target: 'xdna2', inputs: inputsFor(c, 1), verify: true });
      let regions = 0;
      job.on('planned', (e) => { regions = e.regions; });
      const r = await job.result;
      expect(regions).to.equal(1);
      expect(r.verification?.pass).to.equal(true);
    });
  }

  it('npu4: a running sum in FP16 over changing inputs matches the oracle, bit for bit on integers', async () => {
    const r = await engine.submit({ program: RUNNING_SUM, target: 'npu4', inputs: runningInputs(4), steps: 4, verify: true }).result;
    expect(r.simulated).to.equal(true);
    expect(r.verification?.numericsClass).to.equal('NarrowStorage');
    expect(r.verification?.pass).to.equal(true);
    const want = Array.from({ length: 256 }, (_, i) => [0, 1, 2, 3].reduce((n, s) => n + (((i * 13 + s * 5) % 17) - 8), 0));
    expect(Array.from(r.state['acc']!.data)).to.deep.equal(want);
  });

  it('npu4: a cached blob the driver refuses is recompiled and replaced', () => own(async (engine, dir) => {
    const planned = await planJob(RUNNING_SUM, 'npu4');
    const cache = BlobCache.open(dir);
    // Intact as a cache entry (its checksum is right), but not a blob this driver builds.
    cache.put(planned.units[0]!.identity, new TextEncoder().encode('not a compiled graph'));
    cache.close();
    const job = engine.submit({ program: RUNNING_SUM, target: 'npu4', inputs: runningInputs(1) });
    const r = await job.result;
    expect(job.stages.slice(0, 4)).to.deep.equal(['planned', 'cache-hit', 'compiled', 'loaded']);
    expect(r.cacheHit).to.equal(false);
    const again = engine.submit({ program: RUNNING_SUM, target: 'npu4', inputs: runningInputs(1) });
    await again.result;
    expect(again.stages).to.include('cache-hit').and.not.include('compiled');
  }));
});
