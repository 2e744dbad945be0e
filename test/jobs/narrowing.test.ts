import { expect } from 'chai';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { tensor } from '../../src/ir/tensor.js';
import { EngineError, NarrowingRangeInput, NarrowingRangeResult, NarrowingRangeUpload } from '../../src/errors/index.js';
import { wholeProgramWiring } from '../../src/compiler/wiring.js';
import { compileCpu } from '../../src/compiler/cpu.js';
import { CpuDevice } from '../../src/devices/cpuDevice.js';
import type { Device } from '../../src/devices/device.js';
import { Npu4SimDevice } from '../../src/devices/npu4/simDevice.js';
import { Session } from '../../src/session/session.js';
import { npu4Artifact, openSession, rejection } from '../devices/npu4/helpers.js';

const f32 = (...data: number[]) => tensor('f32', [data.length], data);

// z = x + y over F32 [4]: the seed's sum of two in-range inputs.
function addProgram() {
  const p = program('add');
  const x = p.activation('x', 'f32', [4]);
  const y = p.activation('y', 'f32', [4]);
  p.results(p.named('z').add(x, y));
  return checkProgram(p.build());
}

// z = x * w with an F32 weight w.
function weightProgram() {
  const p = program('scale');
  const x = p.activation('x', 'f32', [3]);
  const w = p.weight('w', 'f32', [3]);
  p.results(p.named('z').mul(x, w));
  return checkProgram(p.build());
}

// acc2 = acc + x carried; the result is acc2 too.
function runningSum() {
  const p = program('running-sum');
  const x = p.activation('x', 'f32', [2]);
  const acc = p.state('acc', 'f32', [2]);
  const acc2 = p.named('acc2').add(acc, x);
  p.results(acc2);
  p.carry(acc, acc2);
  return checkProgram(p.build());
}

function expectCode(e: unknown, code: string): EngineError {
  expect(e, String(e)).to.be.instanceOf(EngineError);
  expect((e as EngineError).code).to.equal(code);
  return e as EngineError;
}

describe('engine: range checks of a narrowing device (NPU4)', () => {
  it('the simulated NPU4 declares the FP16 range; the CPU declares none', () => {
    expect(new Npu4SimDevice().narrowing).to.deep.equal({ maxMagnitude: 65504 });
    const cpu: Device = new CpuDevice();
    expect(cpu.narrowing).to.equal(undefined);
  });

  it('an F32 input of 65504 runs', async () => {
    const dev = new Npu4SimDevice();
    const s = await openSession(dev, addProgram());
    const out = await s.replay({ x: f32(65504, -65504, 1, 2), y: f32(0, 0, 3, 4) }, ['z'], 5000);
    expect([...out.results['z']!.data]).to.deep.equal([65504, -65504, 4, 6]);
    expect(dev.runs).to.equal(1);
  });

  it('an F32 input of 65520 is refused before the replay, naming the argument and element; nothing runs', async () => {
    const dev = new Npu4SimDevice();
    const s = await openSession(dev, addProgram());
    const e = expectCode(await rejection(s.replay({ x: f32(1, 2, 3, 4), y: f32(0, 0, 65520, 0) }, ['z'], 5000)), 'NarrowingRangeInput');
    expect(e).to.be.instanceOf(NarrowingRangeInput);
    expect(e.toWire()).to.include({ arg: 'y', index: 2, value: 65520 });
    expect(dev.runs, 'nothing ran').to.equal(0);
    // The session is still good: the next in-range step runs.
    const out = await s.replay({ x: f32(1, 2, 3, 4), y: f32(1, 1, 1, 1) }, ['z'], 5000);
    expect([...out.results['z']!.data]).to.deep.equal([2, 3, 4, 5]);
  });

  it('a NaN or infinite input is refused as out of range', async () => {
    const dev = new Npu4SimDevice();
    const s = await openSession(dev, addProgram());
    const nan = expectCode(await rejection(s.replay({ x: f32(0, NaN, 0, 0), y: f32(0, 0, 0, 0) }, ['z'], 5000)), 'NarrowingRangeInput');
    expect(nan.toWire()).to.include({ arg: 'x', index: 1, value: 'nan' });
    const inf = expectCode(await rejection(s.replay({ x: f32(0, 0, 0, -Infinity), y: f32(0, 0, 0, 0) }, ['z'], 5000)), 'NarrowingRangeInput');
    expect(inf.toWire()).to.include({ arg: 'x', index: 3, value: '-inf' });
    expect(dev.runs).to.equal(0);
  });

  it('a sum of two in-range inputs beyond the range comes back a finite F32 and is refused as a result', async () => {
    const dev = new Npu4SimDevice();
    const s = await openSession(dev, addProgram());
    const e = expectCode(await rejection(s.replay({ x: f32(1, 60000, 3, 4), y: f32(1, 60000, 3, 4) }, ['z'], 5000)), 'NarrowingRangeResult');
    expect(e).to.be.instanceOf(NarrowingRangeResult);
    expect(e.toWire()).to.include({ result: 'z', index: 1, value: 120000 });
    expect(Number.isFinite((e as NarrowingRangeResult).value)).to.equal(true);
    expect(dev.runs, 'the replay ran; its result was refused').to.equal(1);
  });

  it('a weight beyond the range, or NaN, is refused at upload, naming the element, before any replay exists', async () => {
    for (const [bad, wire] of [[70000, 70000], [NaN, 'nan'], [65520, 65520]] as const) {
      const dev = new Npu4SimDevice();
      const e = expectCode(await rejection(openSession(dev, weightProgram(), { weights: { w: f32(1, bad, 2) } })), 'NarrowingRangeUpload');
      expect(e).to.be.instanceOf(NarrowingRangeUpload);
      expect(e.toWire()).to.include({ arg: 'w', index: 1, value: wire });
      expect(dev.runs).to.equal(0);
      // The session never opened: every buffer it allocated is freed again.
      expect(dev.live()).to.include({ buffers: 0, arenas: 0 });
    }
  });

  it('a weight at the edge of the range uploads and replays', async () => {
    const dev = new Npu4SimDevice();
    const s = await openSession(dev, weightProgram(), { weights: { w: f32(65504, -1, 0.5) } });
    const out = await s.replay({ x: f32(1, 3, 4) }, ['z'], 5000);
    expect([...out.results['z']!.data]).to.deep.equal([65504, -3, 2]);
  });

  it('a state leaving the range is refused as a result, and the refused step does not advance it', async () => {
    const dev = new Npu4SimDevice();
    const s = await openSession(dev, runningSum(), { state: { acc: f32(60000, 0) } });
    const first = await s.replay({ x: f32(1024, 1) }, ['acc2'], 5000);
    expect([...first.state['acc']!.data]).to.deep.equal([61024, 1]);
    const r = expectCode(await rejection(s.replay({ x: f32(10016, 1) }, ['acc2'], 5000)), 'NarrowingRangeResult');
    expect(r.toWire()).to.include({ result: 'acc2', index: 0, value: 71040 });
    // The state's copy comes after the check, so the state is still the last good one.
    const next = await s.replay({ x: f32(0, 0) }, ['acc2'], 5000);
    expect([...next.state['acc']!.data]).to.deep.equal([61024, 1]);
  });

  it('an initial state beyond the range is refused before the first replay', async () => {
    const dev = new Npu4SimDevice();
    const s = await openSession(dev, runningSum(), { state: { acc: f32(0, -65520) } });
    const e = expectCode(await rejection(s.replay({ x: f32(0, 0) }, ['acc2'], 5000)), 'NarrowingRangeInput');
    expect(e.toWire()).to.include({ arg: 'acc', index: 1, value: -65520 });
    expect(dev.runs).to.equal(0);
  });

  it('a value an earlier command of the recording writes is checked as that command\'s result, not as an input', async () => {
    // Two graphs in one recording: the second reads what the first writes.
    const p1 = program('double');
    const x = p1.activation('x', 'f32', [2]);
    p1.results(p1.named('y').add(x, x));
    const first = checkProgram(p1.build());
    const p2 = program('halve');
    const y = p2.activation('y', 'f32', [2]);
    p2.results(p2.named('z').mul(y, 0.5));
    const second = checkProgram(p2.build());
    const dev = new Npu4SimDevice();
    const stages = [
      { loaded: await dev.load(npu4Artifact(first)), wiring: wholeProgramWiring(first) },
      { loaded: await dev.load(npu4Artifact(second)), wiring: wholeProgramWiring(second) },
    ];
    const s = Session.open(dev, stages, { weights: {}, state: {}, activations: ['x'], stateNext: {}, results: ['z'] });
    const ok = await s.replay({ x: f32(3, -5) }, ['z'], 5000);
    expect([...ok.results['z']!.data]).to.deep.equal([3, -5]);
    const e = expectCode(await rejection(s.replay({ x: f32(1, 40000) }, ['z'], 5000)), 'NarrowingRangeResult');
    expect(e.toWire()).to.include({ result: 'y', index: 1, value: 80000 });
    expect(dev.runs, 'the second graph never ran on it').to.equal(2 + 1);
  });

  it('the CPU path is unchanged: no narrowing, no checks', async () => {
    const checked = addProgram();
    const dev = new CpuDevice();
    const loaded = await dev.load(compileCpu(checked));
    const s = Session.open(dev, [{ loaded, wiring: wholeProgramWiring(checked) }], { weights: {}, state: {}, activations: ['x', 'y'], stateNext: {}, results: ['z'] });
    const out = await s.replay({ x: f32(1e6, NaN, 65520, 60000), y: f32(1, 0, 0, 60000) }, ['z'], 5000);
    expect([...out.results['z']!.data]).to.deep.equal([1000001, NaN, 65520, 120000]);
  });
});
