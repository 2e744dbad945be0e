import { expect } from 'chai';
import type { Device } from '../../../src/devices/index.js';
import { RMSNORM_BODY } from '../../../src/devices/xdna2/contracts.js';
import { Xdna2SimDevice } from '../../../src/devices/xdna2/simDevice.js';
import { Session } from '../../../src/session/session.js';
import type { Tensor } from '../../../src/ir/tensor.js';
import { deriveRowBound } from '../../../src/targets/rowBounds.js';
import { runProgram } from '../../../src/oracle/index.js';
import type { ProgramInputs, StepOutput } from '../../../src/oracle/index.js';
import type { OpContract } from '../../../src/targets/contract.js';
import { withinContract } from '../../../src/targets/contract.js';
import { XDNA2_CONTRACTS, XDNA2_STEP_CONTRACTS } from '../../../src/targets/xdna2/index.js';
import { rng, randomF32, uniformF32 } from '../../../src/devices/xdna2/contractCases.js';
import type { Compiled } from './helpers.js';
import { bindArenas, bitsOf, compileXdna2, loadAll, program, u32Bytes, u32Of } from './helpers.js';

function t(shape: number[], values: readonly number[], dtype: Tensor['dtype'] = 'f32'): Tensor {
  return { dtype, shape, data: Float64Array.from(dtype === 'f32' ? Float32Array.from(values) : values) };
}

/** Runs every step through a Session on the simulated device, as the engine records and replays. */
async function replay(dev: Device, c: Compiled, inputs: ProgramInputs): Promise<StepOutput[]> {
  const p = c.checked.program;
  const session = Session.open(dev, await loadAll(dev, c), {
    weights: inputs.weights, state: inputs.state,
    activations: p.args.filter((a) => a.role === 'activation').map((a) => a.name),
    stateNext: p.state, results: p.results,
  });
  const out: StepOutput[] = [];
  for (const acts of inputs.steps) out.push(await session.replay(acts, p.results, 10000));
  session.close();
  return out;
}

/** Checks every element of result `name` against the oracle's fp64 reference under `contract`. */
function within(got: Tensor, want: Tensor, contract: OpContract, operands: (i: number) => number[]): void {
  expect(got.shape).to.deep.equal(want.shape);
  for (let i = 0; i < got.data.length; i++) {
    const r = withinContract(contract, got.data[i]!, want.data[i]!, operands(i));
    expect(r.inDomain, `element ${i}`).to.equal(true);
    expect(r.ok, `element ${i}: got ${got.data[i]}, want ${want.data[i]}, bound ${r.bound}`).to.equal(true);
  }
}

async function single(json: unknown, inputs: ProgramInputs): Promise<{ got: StepOutput; want: StepOutput }> {
  const c = compileXdna2(json);
  const [got] = await replay(new Xdna2SimDevice(), c, inputs);
  const [want] = runProgram(c.checked, inputs, { fp64: true });
  return { got: got!, want: want! };
}

describe('xdna2 simulated device: programs compiled by the XDNA2 backend', () => {
  const r = rng(21);
  const x = Array.from({ length: 64 }, () => randomF32(r, -8, 8));
  const y = Array.from({ length: 64 }, () => randomF32(r, -8, 8));

  it('add (with a literal operand) within 2 x 2^-23 of the larger operand', async () => {
    const p = program('add', { x: { shape: [8, 8] }, y: { shape: [8, 8] } }, [
      { op: 'add', in: ['x', 'y'], out: 's' }, { op: 'add', in: ['s', { lit: 0.1 }], out: 'z' },
    ], ['s', 'z']);
    const { got, want } = await single(p, { weights: {}, state: {}, steps: [{ x: t([8, 8], x), y: t([8, 8], y) }] });
    within(got.results['s']!, want.results['s']!, XDNA2_CONTRACTS.add, (i) => [Math.fround(x[i]!), Math.fround(y[i]!)]);
    // z is one more core: checked against the exact sum of the device's own s and the f32 literal.
    const s = got.results['s']!.data;
    const exactZ: Tensor = { dtype: 'f32', shape: [8, 8], data: s.map((v) => v + Math.fround(0.1)) };
    within(got.results['z']!, exactZ, XDNA2_CONTRACTS.add, (i) => [s[i]!, Math.fround(0.1)]);
  });

  it('exp within abs 2e-6 + rel 1e-5, and saturating past the clamp', async () => {
    const xs = [...Array.from({ length: 60 }, () => uniformF32(r, -87, 88)), -87, 88, 0, -0];
    const p = program('exp', { x: { shape: [64] } }, [{ op: 'exp', in: ['x'], out: 'e' }], ['e']);
    const { got, want } = await single(p, { weights: {}, state: {}, steps: [{ x: t([64], xs) }] });
    within(got.results['e']!, want.results['e']!, XDNA2_CONTRACTS.exp, (i) => [xs[i]!]);
    const sat = await single(p, { weights: {}, state: {}, steps: [{ x: t([64], Array.from({ length: 64 }, (_, i) => 88 + i * 10)) }] });
    expect(new Set(sat.got.results['e']!.data).size).to.equal(1);
    expect(Number.isFinite(sat.got.results['e']!.data[0]!)).to.equal(true);
  });

  it('reduce_sum over the last axis within 2 x cols x 2^-23 of the row magnitudes', async () => {
    const rows = Array.from({ length: 4 * 512 }, () => randomF32(r, -10, 10));
    const p = program('sum', { x: { shape: [4, 512] } }, [{ op: 'reduce_sum', in: ['x'], out: 's', axes: [1] }], ['s']);
    const { got, want } = await single(p, { weights: {}, state: {}, steps: [{ x: t([4, 512], rows) }] });
    within(got.results['s']!, want.results['s']!, XDNA2_CONTRACTS.reduce_sum, (i) => rows.slice(i * 512, (i + 1) * 512).map(Math.fround));
  });

  it('an RMSNorm row kernel within its derived bound', async () => {
    const xs = Array.from({ length: 8 * 64 }, () => uniformF32(r, -3, 3));
    const w = Array.from({ length: 64 }, () => uniformF32(r, 0.5, 1.5));
    const p = program('rms', { x: { shape: [8, 64] }, w: { shape: [64], role: 'weight' } }, [
      { op: 'row_kernel', in: ['x', 'w'], out: 'z', body: RMSNORM_BODY },
    ], ['z']);
    const { got, want } = await single(p, { weights: { w: t([64], w) }, state: {}, steps: [{ x: t([8, 64], xs) }] });
    const b = deriveRowBound(RMSNORM_BODY, 64, XDNA2_STEP_CONTRACTS);
    if (!b.ok) throw new Error(b.bound);
    within(got.results['z']!, want.results['z']!, { error: { kind: 'rel', rel: b.rel }, domain: { kind: 'row-steps' } }, (i) => [xs[i]!]);
  });

  it('gather returns source patterns bit for bit: NaN payloads and -0 included', async () => {
    const p = program('gather', { src: { shape: [6] }, idx: { dtype: 'i32', shape: [5] } }, [
      { op: 'gather', in: ['src', 'idx'], out: 'g', axis: 0 },
    ], ['g']);
    const c = compileXdna2(p);
    const dev = new Xdna2SimDevice();
    const [stage] = await loadAll(dev, c);
    const { bindings } = bindArenas(dev, stage!.wiring);
    const src = [0x7fc0beef, 0xff812345, 0x80000000, bitsOf(2.5), 0x7f800000, 0x00000001];
    const put = (n: string, b: Uint8Array) => dev.write(bindings[n]!.arena, bindings[n]!.offset, b);
    put('src', u32Bytes(src));
    put('idx', u32Bytes([0, 1, 2, 5, 0]));
    await dev.run(stage!.loaded, bindings, { deadlineMs: 5000 });
    expect(u32Of(dev.read(bindings['g']!.arena, bindings['g']!.offset, 20))).to.deep.equal([src[0], src[1], src[2], src[5], src[0]]);
  });

  it('a two-region program: values cross regions, activation slots and a running-sum state replay over changing inputs', async () => {
    // s = acc + x carries as the state; 34 more adds of 1 and a row sum: 36 cores, more than one region's 32 tiles.
    const eqns: unknown[] = [{ op: 'add', in: ['acc', 'x'], out: 'c0' }];
    for (let i = 1; i <= 34; i++) eqns.push({ op: 'add', in: [`c${i - 1}`, { lit: 1 }], out: `c${i}` });
    eqns.push({ op: 'reduce_sum', in: ['c34'], out: 'r', axes: [1] });
    const p = program('chain', { x: { shape: [4, 8] }, acc: { shape: [4, 8], role: 'state' } }, eqns, ['r', 'c34'], { acc: 'c0' });
    const c = compileXdna2(p);
    expect(c.units.length).to.be.at.least(2);
    // c31 leaves the first region and enters the second: a value crossing regions through host memory.
    expect(c.units[0]!.wiring.some((w) => w.direction === 'out' && w.value === 'c31')).to.equal(true);
    expect(c.units[1]!.wiring.some((w) => w.direction === 'in' && w.value === 'c31')).to.equal(true);
    // Integer values: every sum is exact, so the truncating adder must match the oracle bit for bit.
    const ints = (k: number) => t([4, 8], Array.from({ length: 32 }, (_, i) => ((i * 7 + k * 3) % 17) - 8));
    const inputs: ProgramInputs = { weights: {}, state: { acc: ints(100) }, steps: [ints(1), ints(2), ints(3)].map((x) => ({ x })) };
    const dev = new Xdna2SimDevice();
    const got = await replay(dev, c, inputs);
    const want = runProgram(c.checked, inputs);
    expect(got).to.have.length(3);
    got.forEach((g, k) => {
      expect([...g.results['r']!.data], `step ${k}`).to.deep.equal([...want[k]!.results['r']!.data]);
      expect([...g.results['c34']!.data], `step ${k}`).to.deep.equal([...want[k]!.results['c34']!.data]);
      expect([...g.state['acc']!.data], `step ${k}`).to.deep.equal([...want[k]!.state['acc']!.data]);
    });
    // The state really carried: the last step's state differs from the first's.
    expect([...got[2]!.state['acc']!.data]).to.not.deep.equal([...got[0]!.state['acc']!.data]);
    expect(dev.runs).to.equal(3 * c.units.length);
  });
});
