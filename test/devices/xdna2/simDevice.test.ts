import { expect } from 'chai';
import { decodeAieArtifact, encodeAieArtifact } from '../../../src/compiler/aie/link.js';
import type { AieManifest } from '../../../src/compiler/aie/artifact.js';
import { openDevice } from '../../../src/devices/index.js';
import type { Bindings, Device, LoadedArtifact } from '../../../src/devices/index.js';
import { Xdna2SimDevice } from '../../../src/devices/xdna2/simDevice.js';
import { ContextLimit, DeadlineExceeded, DevicePoisoned, DispatchRefused, LoadFailed, NoDevice } from '../../../src/errors/index.js';
import type { DispatchReason } from '../../../src/errors/index.js';
import { rejection, thrown } from '../helpers.js';
import { bindArenas, compileXdna2, f32Bytes, f32Of, program } from './helpers.js';

// y = exp(x + w) over f32 [2, 3]: one region, two cores, one fifo between them.
const ADD_EXP = program('add-exp', { x: { shape: [2, 3] }, w: { shape: [2, 3], role: 'weight' } }, [
  { op: 'add', in: ['x', 'w'], out: 's' },
  { op: 'exp', in: ['s'], out: 'y' },
], ['y']);
const compiled = compileXdna2(ADD_EXP);
const unit = compiled.units[0]!;
const SENTINEL = [9, 9, 9, 9, 9, 9];

async function ready(dev: Device = new Xdna2SimDevice()) {
  const loaded = await dev.load(unit.artifact);
  const { bindings } = bindArenas(dev, unit.wiring);
  const at = (n: string) => bindings[n]!;
  dev.write(at('x').arena, at('x').offset, f32Bytes([0, 1, -1, 2, -2, 0.5]));
  dev.write(at('w').arena, at('w').offset, f32Bytes([0, 0, 0, 0, 0, 0]));
  dev.write(at('y').arena, at('y').offset, f32Bytes(SENTINEL));
  const y = () => f32Of(dev.read(at('y').arena, at('y').offset, 24));
  return { dev, loaded, bindings, y };
}

async function expectRefused(dev: Device, loaded: LoadedArtifact, b: Bindings, reason: DispatchReason, grid?: number[]) {
  const before = dev.runs;
  const e = await rejection(dev.run(loaded, b, { deadlineMs: 5000, ...(grid ? { grid } : {}) }));
  expect(e).to.be.instanceOf(DispatchRefused);
  expect((e as DispatchRefused).toWire()).to.include({ code: 'DispatchRefused', reason });
  expect(dev.runs, 'a refused dispatch reaches no driver').to.equal(before);
}

function damaged(edit: (m: AieManifest) => AieManifest) {
  return { target: 'xdna2', bytes: encodeAieArtifact(edit(decodeAieArtifact(unit.artifact.bytes))) };
}

describe('xdna2 simulated device', () => {
  it('is what openDevice gives for xdna2 with simulate, and NoDevice without (no native addon yet)', () => {
    const dev = openDevice('xdna2', { simulate: true });
    expect(dev).to.be.instanceOf(Xdna2SimDevice);
    expect(dev).to.include({ kind: 'xdna2', simulated: true, name: 'xdna2-sim', maxContexts: 16 });
    const e = thrown(() => openDevice('xdna2'));
    expect(e).to.be.instanceOf(NoDevice);
    expect((e as NoDevice).toWire()).to.include({ device: 'xdna2' });
  });

  it('runs the artifact: exp(x + w) through a fifo, within the exp contract', async () => {
    const { dev, loaded, bindings, y } = await ready();
    await dev.run(loaded, bindings, { deadlineMs: 5000 });
    const got = y();
    [0, 1, -1, 2, -2, 0.5].forEach((x, i) => expect(Math.abs(got[i]! - Math.exp(x))).to.be.at.most(2e-6 + 1e-5 * Math.exp(x)));
    expect(dev.runs).to.equal(1);
  });

  it('takes one context per loaded artifact: the 17th is ContextLimit until one is unloaded', async () => {
    const dev = new Xdna2SimDevice();
    const loaded: LoadedArtifact[] = [];
    for (let i = 0; i < 16; i++) loaded.push(await dev.load(unit.artifact));
    const e = await rejection(dev.load(unit.artifact));
    expect(e).to.be.instanceOf(ContextLimit);
    expect((e as ContextLimit).toWire()).to.include({ needed: 17, max: 16 });
    expect(dev.live().contexts).to.equal(16);
    dev.unload(loaded[3]!);
    dev.unload(loaded[3]!);
    await dev.load(unit.artifact);
    expect(dev.live().contexts).to.equal(16);
  });

  it('refuses dispatches before any driver call: shape-abi, not-an-argument, foreign-graph, grid-launch', async () => {
    const { dev, loaded, bindings, y } = await ready();
    const { x: _x, ...missing } = bindings;
    await expectRefused(dev, loaded, missing, 'shape-abi');
    await expectRefused(dev, loaded, { ...bindings, x: dev.allocBuffer(20) }, 'shape-abi');
    const small = dev.allocArena(30);
    await expectRefused(dev, loaded, { ...bindings, w: { arena: small, offset: 8 } }, 'shape-abi');
    await expectRefused(dev, loaded, { ...bindings, s: dev.allocBuffer(24) }, 'not-an-argument');
    await expectRefused(dev, loaded, bindings, 'grid-launch', [4]);
    const other = await new Xdna2SimDevice().load(unit.artifact);
    await expectRefused(dev, other, bindings, 'foreign-graph');
    dev.unload(loaded);
    await expectRefused(dev, loaded, bindings, 'foreign-graph');
    expect(y(), 'nothing ran').to.deep.equal(SENTINEL);
    expect(dev.poisoned).to.equal(null);
  });

  it('a hung run misses its deadline, poisons the device and keeps its memory counted until drop()', async () => {
    const dev = new Xdna2SimDevice({ faults: { hangOnRun: 1 } });
    const { loaded, bindings, y } = await ready(dev);
    const before = dev.live();
    const e = await rejection(dev.run(loaded, bindings, { deadlineMs: 30 }));
    expect(e).to.be.instanceOf(DeadlineExceeded);
    expect(dev.poisoned).to.not.equal(null);
    expect(thrown(() => y())).to.be.instanceOf(DevicePoisoned);
    expect(thrown(() => dev.unload(loaded))).to.be.instanceOf(DevicePoisoned);
    expect(thrown(() => dev.free(bindings['x']!.arena))).to.be.instanceOf(DevicePoisoned);
    expect(await rejection(dev.run(loaded, bindings, { deadlineMs: 30 }))).to.be.instanceOf(DevicePoisoned);
    expect(dev.live()).to.deep.equal(before);
    expect(before.arenas).to.be.greaterThan(0);
    expect(before.contexts).to.equal(1);
    dev.drop();
    expect(dev.live()).to.deep.equal({ buffers: 0, arenas: 0, bytes: 0, contexts: 0 });
  });

  it('a slow run that finishes past its deadline is a miss too: it poisons', async () => {
    const dev = new Xdna2SimDevice({ faults: { slowRunMs: 60 } });
    const { loaded, bindings } = await ready(dev);
    expect(await rejection(dev.run(loaded, bindings, { deadlineMs: 20 }))).to.be.instanceOf(DeadlineExceeded);
    expect(dev.poisoned).to.not.equal(null);
  });

  it('refuses a damaged artifact with LoadFailed, and takes no context for it', async () => {
    const dev = new Xdna2SimDevice();
    const flip = unit.artifact.bytes.slice();
    flip[flip.length - 5] = flip[flip.length - 5]! ^ 0x04;
    const cases = [
      flip,
      unit.artifact.bytes.slice(0, unit.artifact.bytes.length - 3),
      unit.artifact.bytes.slice(0, 10),
      new Uint8Array([...new TextEncoder().encode('NPUOCPU1'), ...unit.artifact.bytes.slice(8)]),
    ];
    for (const bytes of cases) {
      const e = await rejection(dev.load({ target: 'xdna2', bytes }));
      expect(e).to.be.instanceOf(LoadFailed);
      expect((e as LoadFailed).toWire()).to.include({ device: 'xdna2-sim' });
    }
    expect(await rejection(dev.load({ target: 'cpu', bytes: unit.artifact.bytes }))).to.be.instanceOf(LoadFailed);
    expect(await rejection(new Xdna2SimDevice({ faults: { failLoad: 1 } }).load(unit.artifact))).to.be.instanceOf(LoadFailed);
    expect(dev.live().contexts).to.equal(0);
  });

  it('refuses at load what the array cannot run: past a bound, or a core no kernel implements', async () => {
    const dev = new Xdna2SimDevice();
    const big = damaged((m) => ({ ...m, cores: m.cores.map((c, i) => (i === 0 ? { ...c, localBytes: 64513 } : c)) }));
    expect((await rejection(dev.load(big)) as Error).message).to.match(/64513 tile-local bytes/);
    const min = damaged((m) => ({ ...m, cores: m.cores.map((c, i) => (i === 0 ? { ...c, op: 'min' } : c)) }));
    expect(await rejection(dev.load(min))).to.be.instanceOf(LoadFailed);
    const early = damaged((m) => ({ ...m, cores: [...m.cores].reverse() }));
    expect((await rejection(dev.load(early)) as Error).message).to.match(/before any earlier core writes it/);
    expect(dev.live().contexts).to.equal(0);
  });
});
