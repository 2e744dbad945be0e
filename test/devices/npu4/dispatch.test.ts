import { expect } from 'chai';
import { program } from '../../../src/ops/builder.js';
import { checkProgram } from '../../../src/ops/validate.js';
import { tensor } from '../../../src/ir/tensor.js';
import { DeadlineExceeded, DevicePoisoned, DispatchRefused, NoDevice, type DispatchReason } from '../../../src/errors/index.js';
import { tensorFromBytes, tensorToBytes } from '../../../src/ir/bytes.js';
import type { Bindings, BufferId, LoadedArtifact, RunOptions } from '../../../src/devices/device.js';
import { CpuDevice } from '../../../src/devices/cpuDevice.js';
import { compileCpu } from '../../../src/compiler/cpu.js';
import { Npu4SimDevice } from '../../../src/devices/npu4/simDevice.js';
import { npu4Artifact, openSession, rejection, thrown } from './helpers.js';

// z = x + y, F16 [2, 2].
function addProgram(name = 'add') {
  const p = program(name);
  const x = p.activation('x', 'f16', [2, 2]);
  const y = p.activation('y', 'f16', [2, 2]);
  p.results(p.named('z').add(x, y));
  return checkProgram(p.build());
}

const f16 = (...v: number[]) => tensorToBytes(tensor('f16', [2, 2], v));
const SENTINEL = [7, 7, 7, 7];

async function ready(dev = new Npu4SimDevice()) {
  const loaded = await dev.load(npu4Artifact(addProgram()));
  const b: Record<string, BufferId> = {};
  for (const a of loaded.args) b[a.name] = dev.allocBuffer(a.bytes);
  dev.write(b['x']!, 0, f16(1, 2, 3, 4));
  dev.write(b['y']!, 0, f16(10, 20, 30, 40));
  dev.write(b['result:z']!, 0, f16(...SENTINEL));
  const z = () => [...tensorFromBytes('f16', [2, 2], dev.read(b['result:z']!, 0, 8)).data];
  return { dev, loaded, b, z };
}

async function expectRefused(dev: Npu4SimDevice, loaded: LoadedArtifact, bindings: Bindings, reason: DispatchReason, opts: RunOptions = { deadlineMs: 5000 }) {
  const before = dev.runs;
  const e = await rejection(dev.run(loaded, bindings, opts));
  expect(e).to.be.instanceOf(DispatchRefused);
  expect((e as DispatchRefused).toWire()).to.include({ code: 'DispatchRefused', reason });
  expect(dev.runs, 'a refused dispatch reaches no driver').to.equal(before);
  expect(dev.poisoned).to.equal(null);
}

describe('devices/npu4: dispatch refusals and deadlines', () => {
  it('runs one replay of the graph over its bindings', async () => {
    const { dev, loaded, b, z } = await ready();
    await dev.run(loaded, b, { deadlineMs: 5000 });
    expect(z()).to.deep.equal([11, 22, 33, 44]);
    expect(dev.runs).to.equal(1);
  });

  it('grid-launch: any grid but [1] is refused before Level Zero is touched', async () => {
    const { dev, loaded, b, z } = await ready();
    for (const grid of [[4], [1, 1], [2, 2], []]) await expectRefused(dev, loaded, b, 'grid-launch', { deadlineMs: 5000, grid });
    expect(z()).to.deep.equal(SENTINEL);
  });

  it('foreign-graph: another device\'s graph, another graph unloaded, or an unload of a foreign graph', async () => {
    const { dev, loaded, b, z } = await ready();
    const other = await new Npu4SimDevice().load(npu4Artifact(addProgram('other')));
    await expectRefused(dev, other, b, 'foreign-graph');
    const cpuLoaded = await new CpuDevice().load(compileCpu(addProgram()));
    await expectRefused(dev, cpuLoaded, b, 'foreign-graph');
    expect(thrown(() => dev.unload(other))).to.be.instanceOf(DispatchRefused);
    dev.unload(loaded);
    await expectRefused(dev, loaded, b, 'foreign-graph');
    expect(z()).to.deep.equal(SENTINEL);
  });

  it('not-an-argument and shape-abi: a buffer that is not the graph\'s argument, or not its size', async () => {
    const { dev, loaded, b, z } = await ready();
    await expectRefused(dev, loaded, { ...b, 'result:w': dev.allocBuffer(8) }, 'not-an-argument');
    await expectRefused(dev, loaded, { ...b, x: dev.allocBuffer(16) }, 'shape-abi');
    const { y: _y, ...missing } = b;
    await expectRefused(dev, loaded, missing, 'shape-abi');
    await expectRefused(dev, loaded, { ...b, y: new Npu4SimDevice().allocBuffer(8) }, 'shape-abi');
    expect(z()).to.deep.equal(SENTINEL);
  });

  it('a replay that misses its deadline poisons the device and keeps the recording\'s buffers until drop', async () => {
    const dev = new Npu4SimDevice({ faults: { hangOnRun: 2 } });
    const s = await openSession(dev, addProgram());
    const acts = { x: tensor('f16', [2, 2], [1, 2, 3, 4]), y: tensor('f16', [2, 2], [1, 1, 1, 1]) };
    await s.replay(acts, ['z'], 5000);
    const held = dev.live();
    expect(held.buffers + held.arenas).to.be.greaterThan(0);
    const e = await rejection(s.replay(acts, ['z'], 50));
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect(dev.poisoned).to.not.equal(null);
    // Closing the session frees nothing on a poisoned device: the hardware may still write there.
    s.close();
    expect(dev.live()).to.deep.equal(held);
    expect(thrown(() => dev.allocBuffer(4))).to.be.instanceOf(DevicePoisoned);
    expect(await rejection(s.replay(acts, ['z'], 5000))).to.be.instanceOf(DevicePoisoned);
    dev.drop();
    expect(dev.live()).to.deep.equal({ buffers: 0, arenas: 0, bytes: 0, contexts: 0 });
    expect(thrown(() => dev.allocBuffer(4))).to.be.instanceOf(NoDevice);
  });

  it('a slow replay past its deadline poisons too; its context and buffers stay counted until drop', async () => {
    const slow = new Npu4SimDevice({ faults: { slowRunMs: 80 } });
    const r = await ready(slow);
    const held = slow.live();
    const e = await rejection(slow.run(r.loaded, r.b, { deadlineMs: 20 }));
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect((e as DeadlineExceeded).toWire()).to.include({ deadlineMs: 20 });
    expect(slow.poisoned).to.not.equal(null);
    expect(thrown(() => slow.unload(r.loaded))).to.be.instanceOf(DevicePoisoned);
    expect(slow.live()).to.deep.equal(held);
    slow.drop();
    expect(slow.live().contexts).to.equal(0);
  });
});
