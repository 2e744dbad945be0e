import { expect } from 'chai';
import { CapabilityMissing, LoadFailed, NoDevice } from '../../src/errors/index.js';
import { CPU_COMPILER, compileCpu, loadCpuArtifact } from '../../src/compiler/cpu.js';
import { crc32 } from '../../src/compiler/frame.js';
import { programToJson } from '../../src/ir/codec.js';
import { CpuDevice, openDevice } from '../../src/devices/index.js';
import { ADD_EXP, artifactOf, checked, rejection, thrown } from './helpers.js';

describe('compiler/cpu: the CPU artifact', () => {
  it('round-trips the program and names its compiler', () => {
    const art = artifactOf(ADD_EXP);
    expect(art.target).to.equal('cpu');
    expect(new TextDecoder().decode(art.bytes.subarray(0, 8))).to.equal('NPUOCPU1');
    expect(programToJson(loadCpuArtifact(art.bytes).program)).to.deep.equal(programToJson(checked(ADD_EXP).program));
    expect(CPU_COMPILER).to.deep.equal({ name: 'cpu-oracle', version: '1' });
  });

  it('refuses to compile a collective the CPU target does not admit', () => {
    const p = checked({
      format: 'program@1', name: 'ar', state: {}, results: ['y'],
      args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [4] }],
      eqns: [{ op: 'all_reduce', in: ['x'], out: 'y', reduce: 'sum' }],
    });
    expect(() => compileCpu(p)).to.throw(CapabilityMissing);
  });

  const good = artifactOf(ADD_EXP).bytes;
  const damaged: [string, Uint8Array][] = [
    ['empty', new Uint8Array(0)],
    ['truncated header', good.slice(0, 10)],
    ['truncated payload', good.slice(0, good.length - 5)],
    ['bad magic', Uint8Array.from(good, (v, i) => (i === 0 ? v ^ 0xff : v))],
    ['a flipped payload byte', Uint8Array.from(good, (v, i) => (i === good.length - 30 ? v ^ 0x01 : v))],
    ['another format version', Uint8Array.from(good, (v, i) => (i === 8 ? 9 : v))],
    ['random bytes', Uint8Array.from({ length: 200 }, (_, i) => (i * 7919 + 13) & 0xff)],
  ];
  for (const [what, bytes] of damaged) {
    it(`a damaged artifact (${what}) fails to load with LoadFailed on the device`, async () => {
      expect(() => loadCpuArtifact(bytes)).to.throw(LoadFailed);
      const dev = new CpuDevice({ name: 'cpu7' });
      const e = await rejection(dev.load({ target: 'cpu', bytes }));
      expect(e).to.be.instanceOf(LoadFailed);
      expect((e as LoadFailed).device).to.equal('cpu7');
      expect(dev.live().contexts).to.equal(0);
      expect(dev.poisoned).to.equal(null);
    });
  }

  it('a payload that checksums but does not check is LoadFailed, not a crash', () => {
    // Rebuild an artifact around a program that validation refuses (an unknown op).
    const bad = new TextEncoder().encode(JSON.stringify({ ...ADD_EXP, eqns: [{ op: 'frobnicate', in: ['x'], out: 'y' }] }));
    const head = artifactOf(ADD_EXP).bytes.slice(0, 20);
    const view = new DataView(head.buffer);
    view.setUint32(12, bad.length, true);
    const withCrc = new Uint8Array(20 + bad.length);
    withCrc.set(head);
    withCrc.set(bad, 20);
    // A correct checksum, so only re-checking the program can catch it.
    new DataView(withCrc.buffer).setUint32(16, crc32(bad), true);
    const e = thrown(() => loadCpuArtifact(withCrc));
    expect(e).to.be.instanceOf(LoadFailed);
    expect((e as LoadFailed).detail).to.match(/does not check/);
  });

  it('an artifact for another target fails to load on the CPU', async () => {
    const e = await rejection(new CpuDevice().load({ target: 'xdna2', bytes: good }));
    expect(e).to.be.instanceOf(LoadFailed);
  });
});

describe('devices: openDevice', () => {
  it('opens the CPU, with its faults and context count', async () => {
    const dev = openDevice('cpu', { maxContexts: 3, faults: { failLoad: true } });
    expect(dev).to.be.instanceOf(CpuDevice);
    expect(dev.maxContexts).to.equal(3);
    expect(await rejection(dev.load(artifactOf(ADD_EXP)))).to.be.instanceOf(LoadFailed);
  });

  for (const kind of ['xdna2', 'npu4'] as const) {
    it(`answers NoDevice for ${kind} hardware on a machine without it`, () => {
      const e = thrown(() => openDevice(kind));
      expect(e).to.be.instanceOf(NoDevice);
      expect((e as NoDevice).toWire()).to.include({ code: 'NoDevice', device: kind });
    });

    it(`opens the ${kind} simulator when asked, labelled as one`, () => {
      const dev = openDevice(kind, { simulate: true });
      expect(dev.kind).to.equal(kind);
      expect(dev.simulated).to.equal(true);
      dev.drop();
    });
  }
});
