/**
 * The shared device rules over a memory that is not the simulators' (as a device over a native addon
 * brings): contexts, dispatch refusals, deadlines with poisoning and live accounting hold unchanged.
 */
import { expect } from 'chai';
import { ContextLimit, DeadlineExceeded, DevicePoisoned, DispatchRefused } from '../../src/errors/index.js';
import type { ArenaId, Binding, Bindings, BufferId, LiveResources, LoadedArtifact, Memory } from '../../src/devices/device.js';
import { freshHandle, isArenaSlot } from '../../src/devices/device.js';
import type { FaultOptions } from '../../src/devices/faults.js';
import { DeviceRules, type Decoded } from '../../src/devices/rules.js';

// A "driver" memory: bytes kept as Buffers in a table of its own, handed out by handle; it counts every
// call, so the test sees the rules going through it and never around it.
class DriverMemory implements Memory {
  readonly blocks = new Map<number, Buffer>();
  calls = 0;
  private alloc(bytes: number): number { this.calls++; const h = freshHandle(); this.blocks.set(h, Buffer.alloc(bytes)); return h; }
  allocBuffer(bytes: number): BufferId { return this.alloc(bytes) as BufferId; }
  allocArena(bytes: number): ArenaId { return this.alloc(bytes) as ArenaId; }
  write(id: BufferId | ArenaId, offset: number, data: Uint8Array): void { this.calls++; this.blocks.get(id)!.set(data, offset); }
  read(id: BufferId | ArenaId, offset: number, length: number): Uint8Array { this.calls++; return new Uint8Array(this.blocks.get(id)!.subarray(offset, offset + length)); }
  free(id: BufferId | ArenaId): void { this.calls++; this.blocks.delete(id); }
  sizeOf(b: Binding): number | undefined { return isArenaSlot(b) ? undefined : this.blocks.get(b)?.length; }
  clear(): void { this.blocks.clear(); }
  counts(): Omit<LiveResources, 'contexts'> {
    let bytes = 0;
    for (const b of this.blocks.values()) bytes += b.length;
    return { buffers: this.blocks.size, arenas: 0, bytes };
  }
}

// Negates four f32 values from `x` into `y`, through the memory's own read and write.
class NegDevice extends DeviceRules<null, DriverMemory> {
  readonly kind = 'cpu' as const;
  readonly simulated = true;
  constructor(faults: FaultOptions = {}) { super({ maxContexts: 2, faults }, { name: 'neg', maxContexts: 2 }, new DriverMemory()); }
  protected decode(): Decoded<null> {
    return { name: 'neg', ctx: null, args: [
      { name: 'x', direction: 'in', dtype: 'f32', shape: [4], bytes: 16 },
      { name: 'y', direction: 'out', dtype: 'f32', shape: [4], bytes: 16 },
    ] };
  }
  protected compute(_c: null, _l: LoadedArtifact, b: Bindings): () => void {
    const x = new Float32Array(this.memory.read(b['x'] as BufferId, 0, 16).buffer);
    const y = Float32Array.from(x, (v) => -v);
    return () => this.memory.write(b['y'] as BufferId, 0, new Uint8Array(y.buffer));
  }
  get driver(): DriverMemory { return this.memory; }
}

const artifact = { target: 'cpu', bytes: new Uint8Array(1) };

describe('device rules over a memory of its own', () => {
  it('runs through that memory', async () => {
    const d = new NegDevice();
    const a = await d.load(artifact);
    const x = d.allocBuffer(16);
    const y = d.allocBuffer(16);
    d.write(x, 0, new Uint8Array(new Float32Array([1, -2, 3.5, 0]).buffer));
    const before = d.driver.calls;
    await d.run(a, { x, y }, { deadlineMs: Infinity });
    expect(d.driver.calls).to.be.greaterThan(before);
    expect([...new Float32Array(d.read(y, 0, 16).buffer)]).to.deep.equal([-1, 2, -3.5, -0]);
    expect(d.live()).to.deep.equal({ buffers: 2, arenas: 0, bytes: 32, contexts: 1 });
  });

  it('refuses past its contexts and before any driver call', async () => {
    const d = new NegDevice();
    const a = await d.load(artifact);
    await d.load(artifact);
    try { await d.load(artifact); expect.fail('a third context'); } catch (e) { expect(e).to.be.instanceOf(ContextLimit); }
    const small = d.allocBuffer(8);
    const y = d.allocBuffer(16);
    try { await d.run(a, { x: small, y }, { deadlineMs: 1000 }); expect.fail('a short buffer'); } catch (e) {
      expect(e).to.be.instanceOf(DispatchRefused);
      expect((e as DispatchRefused).reason).to.equal('shape-abi');
    }
    expect(d.runs).to.equal(0);
  });

  it('a missed deadline poisons it, and its memory stays counted until the drop', async () => {
    const d = new NegDevice({ hangOnRun: 1 });
    const a = await d.load(artifact);
    const x = d.allocBuffer(16);
    const y = d.allocBuffer(16);
    try { await d.run(a, { x, y }, { deadlineMs: 20 }); expect.fail('the hang'); } catch (e) { expect(e).to.be.instanceOf(DeadlineExceeded); }
    expect(() => d.allocBuffer(4)).to.throw(DevicePoisoned);
    expect(() => d.free(x)).to.throw(DevicePoisoned);
    expect(d.live()).to.deep.equal({ buffers: 2, arenas: 0, bytes: 32, contexts: 1 });
    d.drop();
    expect(d.live()).to.deep.equal({ buffers: 0, arenas: 0, bytes: 0, contexts: 0 });
    expect(d.driver.blocks.size).to.equal(0);
  });
});
