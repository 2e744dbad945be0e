import { expect } from 'chai';
import { DispatchRefused, type DispatchReason } from '../../src/errors/index.js';
import { CpuDevice, type Bindings, type Device, type LoadedArtifact, type RunOptions } from '../../src/devices/index.js';
import { ADD_EXP, artifactOf, bindAll, f32Bytes, f32Of, readAll, rejection } from './helpers.js';

const SENTINEL = [9, 9, 9, 9, 9, 9];

// A device with a loaded artifact, a complete binding whose inputs are valid, and a sentinel in the
// result buffer, so a refused dispatch can be shown to have run nothing.
async function ready() {
  const dev = new CpuDevice();
  const loaded = await dev.load(artifactOf(ADD_EXP));
  const b = bindAll(dev, loaded);
  for (const n of ['x', 'w', 'acc']) dev.write(b[n]!, 0, f32Bytes([1, 2, 3, 4, 5, 6]));
  dev.write(b['result:y']!, 0, f32Bytes(SENTINEL));
  return { dev, loaded, b };
}

async function expectRefused(dev: Device, loaded: LoadedArtifact, bindings: Bindings, reason: DispatchReason, opts: RunOptions = { deadlineMs: 5000 }) {
  const before = dev.runs;
  const e = await rejection(dev.run(loaded, bindings, opts));
  expect(e).to.be.instanceOf(DispatchRefused);
  expect((e as DispatchRefused).toWire()).to.include({ code: 'DispatchRefused', reason });
  expect(dev.runs, 'a refused dispatch reaches no driver').to.equal(before);
  expect(dev.poisoned).to.equal(null);
}

describe('devices: dispatch refusals come before any driver call', () => {
  it('shape-abi: a buffer of the wrong size', async () => {
    const { dev, loaded, b } = await ready();
    await expectRefused(dev, loaded, { ...b, x: dev.allocBuffer(20) }, 'shape-abi');
    await expectRefused(dev, loaded, { ...b, 'result:y': dev.allocBuffer(28) }, 'shape-abi');
    expect(f32Of(readAll(dev, loaded, b, 'result:y'))).to.deep.equal(SENTINEL);
  });

  it('shape-abi: a missing binding, a freed buffer, another device\'s buffer, an arena slot past its end', async () => {
    const { dev, loaded, b } = await ready();
    const { w: _w, ...missing } = b;
    await expectRefused(dev, loaded, missing, 'shape-abi');
    const freed = dev.allocBuffer(24);
    dev.free(freed);
    await expectRefused(dev, loaded, { ...b, w: freed }, 'shape-abi');
    await expectRefused(dev, loaded, { ...b, w: new CpuDevice().allocBuffer(24) }, 'shape-abi');
    const arena = dev.allocArena(40);
    await expectRefused(dev, loaded, { ...b, w: { arena, offset: 20 } }, 'shape-abi');
    expect(f32Of(readAll(dev, loaded, b, 'result:y'))).to.deep.equal(SENTINEL);
  });

  it('not-an-argument: a binding name the artifact has no argument for', async () => {
    const { dev, loaded, b } = await ready();
    await expectRefused(dev, loaded, { ...b, 'result:z': dev.allocBuffer(24) }, 'not-an-argument');
    await expectRefused(dev, loaded, { ...b, 'state:x': dev.allocBuffer(24) }, 'not-an-argument');
    expect(f32Of(readAll(dev, loaded, b, 'result:y'))).to.deep.equal(SENTINEL);
  });

  it('foreign-graph: an artifact loaded on another device, or unloaded', async () => {
    const { dev, loaded, b } = await ready();
    const other = await new CpuDevice().load(artifactOf(ADD_EXP));
    await expectRefused(dev, other, b, 'foreign-graph');
    dev.unload(loaded);
    await expectRefused(dev, loaded, b, 'foreign-graph');
    expect(f32Of(readAll(dev, loaded, b, 'result:y'))).to.deep.equal(SENTINEL);
  });

  it('grid-launch: any grid but [1] on serialized cores', async () => {
    const { dev, loaded, b } = await ready();
    for (const grid of [[4], [1, 1], [2, 2], [], [0]]) {
      await expectRefused(dev, loaded, b, 'grid-launch', { deadlineMs: 5000, grid });
    }
    expect(f32Of(readAll(dev, loaded, b, 'result:y'))).to.deep.equal(SENTINEL);
    // The same bindings run once the grid is gone: the refusals above were about the dispatch only.
    await dev.run(loaded, b, { deadlineMs: 5000, grid: [1] });
    expect(dev.runs).to.equal(1);
    expect(f32Of(readAll(dev, loaded, b, 'result:y'))).to.not.deep.equal(SENTINEL);
  });
});
