import { expect } from 'chai';
import { createEngine, type Engine } from '../../src/jobs/engine.js';
import { program } from '../../src/ops/builder.js';
import { tensor } from '../../src/ir/tensor.js';
import { rejectsWith, tempDir } from '../jobs/helpers.js';
import { loadHostKernels } from '../../src/devices/host/native.js';

/** x [2, 64]: add, mul, exp, an f32 matmul and the RMSNorm row kernel, as a model's step would. */
function smallProgram() {
  const p = program('host-small');
  const x = p.activation('x', 'f32', [2, 64]);
  const w = p.weight('w', 'f32', [64, 16]);
  const g = p.weight('g', 'f32', [64]);
  const [n] = p.rowKernel([x, g], {
    params: ['x', 'w'],
    steps: [
      { op: 'mul', in: ['x', 'x'], out: 'sq' },
      { op: 'reduce_sum', in: ['sq'], out: 'ss' },
      { op: 'div', in: ['ss', { lit: 64 }], out: 'ms' },
      { op: 'add', in: ['ms', { lit: 1e-6 }], out: 'mse' },
      { op: 'sqrt', in: ['mse'], out: 'rms' },
      { op: 'div', in: ['x', 'rms'], out: 'xn' },
      { op: 'mul', in: ['xn', 'w'], out: 'y' },
    ],
    results: ['y'],
  });
  const h = p.exp(p.mul(p.add(n!, 0.5), 0.25));
  p.results(p.matmul(h, w));
  return p.build();
}

const seq = (k: number, f: (i: number) => number) => Array.from({ length: k }, (_, i) => f(i));

function hostBuilt(): boolean {
  try { loadHostKernels(); return true; } catch { return false; }
}

describe('devices/host: the host target through the engine', function () {
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  // One engine for the tests (an engine's start, its actors' threads loading their modules, is ~0.7 s of
  // CPU); the test that counts a cache miss then a hit has its own engine and cache folder.
  before(function () {
    if (!hostBuilt()) this.skip();
    tmp = tempDir(); engine = createEngine({ cacheDir: tmp.dir });
  });
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- both are unset when before() skipped (no addon built)
  after(async () => { await engine?.close(); tmp?.remove(); });

  it('equals the oracle within the target tolerance (verify passes)', async () => {
    const inputs = {
      x: tensor('f32', [2, 64], seq(128, (i) => Math.sin(i) * 2)),
      w: tensor('f32', [64, 16], seq(1024, (i) => Math.cos(i * 0.37) / 8)),
      g: tensor('f32', [64], seq(64, (i) => 1 + i / 64)),
    };
    const r = await engine.submit({ program: smallProgram(), target: 'host', inputs, verify: true }).result;
    expect(r.target).to.equal('host');
    expect(r.simulated).to.equal(false);
    expect(r.verification?.pass, JSON.stringify(r.verification)).to.equal(true);
  });

  it('moves data as the oracle does: transpose, broadcast, strided slice, concat (f32 and i32)', async () => {
    for (const dtype of ['f32', 'i32'] as const) {
      const p = program('move');
      const x = p.activation('x', dtype, [2, 3, 4]);
      const r = p.activation('r', dtype, [3]);
      const t = p.transpose(x, [2, 0, 1]);
      const b = p.broadcast(r, [2, 3, 4], [1]);
      const s = p.slice(x, [0, 1, 0], [2, 3, 4], [1, 1, 2]);
      const c = p.concat([x, b, x], 2);
      p.results(t, s, c, p.add(b, x));
      const inputs = { x: tensor(dtype, [2, 3, 4], seq(24, (i) => i * 3 - 7)), r: tensor(dtype, [3], [5, -6, 7]) };
      const host = await engine.submit({ program: p.build(), target: 'host', inputs, verify: true }).result;
      expect(host.verification?.pass, dtype).to.equal(true);
      const cpu = await engine.submit({ program: p.build(), target: 'cpu', inputs }).result;
      for (const k of Object.keys(cpu.results)) expect(Array.from(host.results[k]!.data), `${dtype} ${k}`).to.deep.equal(Array.from(cpu.results[k]!.data));
    }
  });

  it('writes a KV-cache row with dynamic_update_slice and carries it from step to step, as the oracle', async () => {
    const p = program('kv');
    const kv = p.state('kv', 'f32', [4, 3]);
    const row = p.activation('row', 'f32', [1, 3]);
    const pos = p.activation('pos', 'i32', []);
    const kv2 = p.dynamicUpdateSlice(kv, p.mul(row, 2), [pos, 0]);
    p.results(kv2);
    p.carry(kv, kv2);
    const inputs = {
      kv: tensor('f32', [4, 3], seq(12, () => 0)),
      row: [tensor('f32', [1, 3], [1, 2, 3]), tensor('f32', [1, 3], [4, 5, 6])],
      pos: [tensor('i32', [], [2]), tensor('i32', [], [0])],
    };
    const host = await engine.submit({ program: p.build(), target: 'host', inputs, steps: 2, verify: true }).result;
    expect(host.verification?.pass).to.equal(true);
    expect(Array.from(host.state['kv']!.data)).to.deep.equal([8, 10, 12, 0, 0, 0, 2, 4, 6, 0, 0, 0]);
    const bad = { ...inputs, pos: tensor('i32', [], [4]), row: tensor('f32', [1, 3], [1, 2, 3]) };
    await rejectsWith(engine.submit({ program: p.build(), target: 'host', inputs: bad }).result, 'IndexOutOfRange');
  });

  it('compiles through the blob cache: the second job of the same program is a cache hit', async () => {
    const inputs = {
      x: tensor('f32', [2, 64], seq(128, (i) => i / 100)),
      w: tensor('f32', [64, 16], seq(1024, (i) => (i % 7) / 8)),
      g: tensor('f32', [64], seq(64, () => 1)),
    };
    const own = tempDir();
    const fresh = createEngine({ cacheDir: own.dir });
    let first, second;
    try {
      first = await fresh.submit({ program: smallProgram(), target: 'host', inputs }).result;
      second = await fresh.submit({ program: smallProgram(), target: 'host', inputs }).result;
    } finally {
      await fresh.close();
      own.remove();
    }
    expect([first.cacheHit, second.cacheHit]).to.deep.equal([false, true]);
    const data = (r: typeof first) => Array.from(Object.values(r.results)[0]!.data);
    expect(data(second)).to.deep.equal(data(first));
    expect(data(first).some((v) => v !== 0)).to.equal(true);
  });

  it('runs iota and composed row-kernel bodies (scaled masked softmax, SwiGLU, a shared row, two results) as the oracle does', async () => {
    const p = program('rows');
    const x = p.activation('x', 'f32', [3, 8]);
    const u = p.activation('u', 'f32', [3, 8]);
    const g = p.weight('g', 'f32', [8]);
    // The mask of a causal attention: column index against a per-row position.
    const bias = p.mul(p.convert(p.ge(p.iota([3, 8], 1, 'f32'), p.add(p.iota([3, 8], 0, 'f32'), 5)), 'f32'), -1e30);
    const [sm] = p.rowKernel([x, bias], (b, s, m) => {
      const t = b.add(b.mul(s, 0.5), m);
      const e = b.exp(b.sub(t, b.reduceMax(t)));
      return b.div(e, b.reduceSum(e));
    });
    const [sw] = p.rowKernel([x, u], (b, a, c) => b.mul(b.mul(a, b.logistic(a)), c));
    const [sh, mx] = p.rowKernel([x, g], (b, a, w) => [b.sub(w, 1), b.reduceMax(b.mul(a, w))]);
    p.results(sm!, sw!, sh!, mx!, p.iota([2, 3], 0, 'i32'));
    const inputs = {
      x: tensor('f32', [3, 8], seq(24, (i) => Math.sin(i) * 3)),
      u: tensor('f32', [3, 8], seq(24, (i) => Math.cos(i))),
      g: tensor('f32', [8], seq(8, (i) => i / 4)),
    };
    const host = await engine.submit({ program: p.build(), target: 'host', inputs }).result;
    const cpu = await engine.submit({ program: p.build(), target: 'cpu', inputs }).result;
    for (const [name, want] of Object.entries(cpu.results)) {
      const got = host.results[name]!;
      expect(got.shape, name).to.deep.equal(want.shape);
      Array.from(want.data).forEach((w, i) => expect(Math.abs(got.data[i]! - w), `${name}[${i}]`).to.be.at.most(2e-6 + 1e-5 * Math.abs(w)));
    }
    // The mask hides columns 5.. of row 0: their probabilities are exactly 0.
    expect(Array.from(Object.values(host.results)[0]!.data.slice(5, 8))).to.deep.equal([0, 0, 0]);
  });

  it('gathers rows of an f32 or f16 table in the arena as the oracle does, and refuses an index past the table', async () => {
    const p = program('rows-of');
    const i = p.activation('i', 'i32', [3]);
    const t = p.weight('t', 'f32', [4, 3]);
    const h = p.weight('h', 'f16', [4, 2]);
    p.results(p.gather(t, i, 0), p.gather(h, i, 0));
    const inputs = (idx: number[]) => ({ i: tensor('i32', [3], idx), t: tensor('f32', [4, 3], seq(12, (k) => k / 2)), h: tensor('f16', [4, 2], seq(8, (k) => k - 3)) });
    const r = await engine.submit({ program: p.build(), target: 'host', inputs: inputs([3, 0, 3]) }).result;
    const [a, b] = Object.values(r.results);
    expect(Array.from(a!.data)).to.deep.equal([4.5, 5, 5.5, 0, 0.5, 1, 4.5, 5, 5.5]);
    expect([b!.dtype, ...Array.from(b!.data)]).to.deep.equal(['f16', 3, 4, -3, -2, 3, 4]);
    const e = await rejectsWith(engine.submit({ program: p.build(), target: 'host', inputs: inputs([0, 4, 1]) }).result, 'IndexOutOfRange');
    expect(e.toWire()).to.deep.include({ index: 4, extent: 4 });
  });

  it('refuses an op it has no kernel for with a host capability', async () => {
    const p = program('no');
    const x = p.activation('x', 'f32', [1, 2, 1, 3, 1]);
    p.results(p.reduceSum(x, [0, 2, 4]));
    const e = await rejectsWith(engine.submit({ program: p.build(), target: 'host', inputs: { x: tensor('f32', [1, 2, 1, 3, 1], seq(6, (k) => k)) } }).result, 'CapabilityMissing');
    expect(e.toWire()).to.deep.include({ capability: 'host.reduce_sum.rank' });
  });
});

describe('devices/host: threads', () => {
  before(function () { if (!hostBuilt()) this.skip(); });
  it('a device opened with threads resizes the addon\'s pool; the engine refuses a count it cannot take', async () => {
    const { HostDevice } = await import('../../src/devices/host/device.js');
    const d = new HostDevice({ threads: 1 });
    expect(d.kernels.info().threads).to.equal(1);
    new HostDevice({ threads: 2 });
    expect(d.kernels.info().threads).to.equal(2);
    const { InvalidOptions } = await import('../../src/errors/index.js');
    expect(() => createEngine({ devices: { host: { threads: 0 } } })).to.throw(InvalidOptions).with.property('field', 'devices.host.threads');
    expect(() => createEngine({ devices: { host: { threads: 5000 } } })).to.throw(InvalidOptions).with.property('field', 'devices.host.threads');
  });
});
