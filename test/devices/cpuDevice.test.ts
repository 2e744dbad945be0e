import { expect } from 'chai';
import { IntegerDivideByZero } from '../../src/errors/index.js';
import { CpuDevice, type ArenaId } from '../../src/devices/index.js';
import { ADD_EXP, IDIV, artifactOf, bindAll, f32Bytes, f32Of, i32Bytes, i32Of, readAll, rejection } from './helpers.js';

const f = Math.fround;
const X1 = [0.5, -1.25, 2, 0, 3.5, -0.75];
const X2 = [1, 0.25, -2.5, 1.5, -3, 0.125];
const W = [1.5, -2, 0.1, 3, 0.25, -1];
const ACC0 = [0.1, 0.2, -0.3, 1, -1, 0.7];

// The step as the format defines it, computed here from Math.fround and Math.exp, not by the oracle.
function expected(acc: readonly number[], x: readonly number[]): { y: number[]; acc2: number[] } {
  const acc2 = acc.map((a, i) => f(f(a) + f(x[i]!)));
  const y = acc2.map((a, i) => f(f(Math.exp(a)) * f(W[i]!)));
  return { y, acc2 };
}

describe('devices: CpuDevice runs programs', () => {
  it('computes add + exp + mul and carries the state across two steps', async () => {
    const dev = new CpuDevice();
    expect(dev.kind).to.equal('cpu');
    expect(dev.simulated).to.equal(false);
    const loaded = await dev.load(artifactOf(ADD_EXP));
    expect(loaded.args.map((a) => `${a.name}:${a.direction}:${a.bytes}`)).to.deep.equal([
      'x:in:24', 'w:in:24', 'acc:in:24', 'result:y:out:24', 'state:acc:out:24',
    ]);
    const b = bindAll(dev, loaded);
    dev.write(b['w']!, 0, f32Bytes(W));
    dev.write(b['acc']!, 0, f32Bytes(ACC0));

    dev.write(b['x']!, 0, f32Bytes(X1));
    await dev.run(loaded, b, { deadlineMs: 5000 });
    const s1 = expected(ACC0, X1);
    expect(f32Of(readAll(dev, loaded, b, 'result:y'))).to.deep.equal(s1.y);
    expect(f32Of(readAll(dev, loaded, b, 'state:acc'))).to.deep.equal(s1.acc2);

    // The engine carries the state by copying it back into the state input between steps.
    dev.write(b['acc']!, 0, readAll(dev, loaded, b, 'state:acc'));
    dev.write(b['x']!, 0, f32Bytes(X2));
    await dev.run(loaded, b, { deadlineMs: 5000, grid: [1] });
    const s2 = expected(s1.acc2, X2);
    expect(f32Of(readAll(dev, loaded, b, 'result:y'))).to.deep.equal(s2.y);
    expect(f32Of(readAll(dev, loaded, b, 'state:acc'))).to.deep.equal(s2.acc2);
    expect(dev.runs).to.equal(2);
  });

  it('carries the state in place when its input and output share one buffer', async () => {
    const dev = new CpuDevice();
    const loaded = await dev.load(artifactOf(ADD_EXP));
    const b = bindAll(dev, loaded);
    b['state:acc'] = b['acc']!;
    dev.write(b['w']!, 0, f32Bytes(W));
    dev.write(b['acc']!, 0, f32Bytes(ACC0));
    dev.write(b['x']!, 0, f32Bytes(X1));
    await dev.run(loaded, b, { deadlineMs: 5000 });
    dev.write(b['x']!, 0, f32Bytes(X2));
    await dev.run(loaded, b, { deadlineMs: 5000 });
    const s2 = expected(expected(ACC0, X1).acc2, X2);
    expect(f32Of(readAll(dev, loaded, b, 'acc'))).to.deep.equal(s2.acc2);
    expect(f32Of(readAll(dev, loaded, b, 'result:y'))).to.deep.equal(s2.y);
  });

  it('reads and writes tensors at fixed offsets in a host arena', async () => {
    const dev = new CpuDevice();
    const loaded = await dev.load(artifactOf(ADD_EXP));
    const arena: ArenaId = dev.allocArena(5 * 24);
    const slot = (k: number) => ({ arena, offset: k * 24 });
    const bindings = { x: slot(0), w: slot(1), acc: slot(2), 'result:y': slot(3), 'state:acc': slot(4) };
    dev.write(arena, 0, f32Bytes(X1));
    dev.write(arena, 24, f32Bytes(W));
    dev.write(arena, 48, f32Bytes(ACC0));
    await dev.run(loaded, bindings, { deadlineMs: 5000 });
    const s1 = expected(ACC0, X1);
    expect(f32Of(dev.read(arena, 72, 24))).to.deep.equal(s1.y);
    expect(f32Of(dev.read(arena, 96, 24))).to.deep.equal(s1.acc2);
    expect(dev.live()).to.deep.equal({ buffers: 0, arenas: 1, bytes: 120, contexts: 1 });
  });

  it('propagates the oracle\'s typed errors as they are and writes no output', async () => {
    const dev = new CpuDevice();
    const loaded = await dev.load(artifactOf(IDIV));
    const b = bindAll(dev, loaded);
    dev.write(b['a']!, 0, i32Bytes([7, -7, 1]));
    dev.write(b['b']!, 0, i32Bytes([2, 2, 1]));
    await dev.run(loaded, b, { deadlineMs: 5000 });
    expect(i32Of(readAll(dev, loaded, b, 'result:q'))).to.deep.equal([3, -3, 1]);

    dev.write(b['b']!, 0, i32Bytes([2, 0, 1]));
    const e = await rejection(dev.run(loaded, b, { deadlineMs: 5000 }));
    expect(e).to.be.instanceOf(IntegerDivideByZero);
    expect((e as IntegerDivideByZero).code).to.equal('IntegerDivideByZero');
    expect((e as IntegerDivideByZero).eqn).to.equal(0);
    // Not a missed deadline: the device stays usable and the previous result is untouched.
    expect(dev.poisoned).to.equal(null);
    expect(i32Of(readAll(dev, loaded, b, 'result:q'))).to.deep.equal([3, -3, 1]);
  });

  it('frees buffers and arenas one by one and counts their bytes', () => {
    const dev = new CpuDevice();
    const buf = dev.allocBuffer(10);
    const arena = dev.allocArena(100);
    expect(dev.live()).to.deep.equal({ buffers: 1, arenas: 1, bytes: 110, contexts: 0 });
    dev.free(buf);
    expect(dev.live()).to.deep.equal({ buffers: 0, arenas: 1, bytes: 100, contexts: 0 });
    dev.free(arena);
    expect(dev.live()).to.deep.equal({ buffers: 0, arenas: 0, bytes: 0, contexts: 0 });
    expect(() => dev.read(buf, 0, 1)).to.throw(RangeError);
  });
});
