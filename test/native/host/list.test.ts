/**
 * The kernel list as the device will replay it, and the loader: a step of several hundred kernels is
 * one native call (the counter says so); a malformed list is refused with InvalidInput naming the
 * record and field before anything runs; weights map from a file in place; and without the addon the
 * loader answers NoDevice('host') saying how to build it (that part runs in every build).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KernelCall } from '../../../src/compiler/host/kernelList.js';
import { loadHostKernels, type HostKernels } from '../../../src/devices/host/native.js';
import { InvalidInput, InvalidOptions, NoDevice } from '../../../src/errors/index.js';
import { Arena, Rng, useHost } from './helpers.js';
import { randomWeight } from './reference.js';
import { skipWith } from '../../skip.js';

function thrown(f: () => unknown): unknown {
  try { f(); } catch (e) { return e; }
  throw new Error('expected a throw');
}

describe('host kernels: the loader without the addon', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'npuo-host-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('answers NoDevice(host) saying the addon is not built and how to build it', () => {
    const e = thrown(() => loadHostKernels(join(dir, 'Release')));
    expect(e).to.be.instanceOf(NoDevice);
    expect((e as NoDevice).toWire()).to.include({ code: 'NoDevice', device: 'host' });
    expect((e as NoDevice).message).to.match(/host kernels addon is not built .*npm run build:native.*C\+\+17 compiler/);
  });

  it('quotes why the install could not build it, when the install recorded that', () => {
    mkdirSync(join(dir, 'Release'));
    writeFileSync(join(dir, 'host_kernels.failed.txt'), 'the host kernels addon was not built on install: node-gyp build failed (exit 1): g++: not found\n');
    expect((thrown(() => loadHostKernels(join(dir, 'Release'))) as NoDevice).message).to.include('g++: not found');
  });
});

describe('host kernels: one call per step', function () {
  let h: HostKernels;
  before(function () { h = useHost(this); });

  /** A transformer-block-shaped step repeated `layers` times over one arena and two weights. */
  function step(layers: number, arena: Arena): KernelCall[] {
    const [C, F, T] = [64, 96, 1];
    const x = arena.putF32(Array.from({ length: C }, (_, i) => Math.sin(i)));
    const g = arena.putF32(new Array(C).fill(1));
    const t = arena.alloc(C * 4);
    const u = arena.alloc(F * 4);
    const v = arena.alloc(F * 4);
    const scores = arena.alloc(32 * 4);
    const cache = arena.alloc(32 * C * 4);
    const starts = arena.putI32([3, 0]);
    const calls: KernelCall[] = [];
    for (let l = 0; l < layers; l++) {
      calls.push(
        { op: 'rmsnorm', x, g, y: t, rows: 1, C, eps: 1e-6 },
        { op: 'matmul_w', x: t, y: u, T, w: 0 },
        { op: 'unary', fn: 'logistic', x: u, y: v, n: F },
        { op: 'binary', fn: 'mul', a: u, b: v, y: v, n: F },
        { op: 'update', dst: cache, upd: t, starts, elem: 4, dims: [32, C], update: [1, C] },
        { op: 'matmul', a: t, b: cache, y: scores, batch: 1, M: 1, K: C, N: 32 },
        { op: 'softmax', x: scores, y: scores, rows: 1, C: 32 },
        { op: 'matmul_w', x: v, y: t, T, w: 1 },
        { op: 'binary', fn: 'add', a: x, b: t, y: x, n: C },
      );
    }
    return calls;
  }

  it('replays a step of several hundred kernels in one native call, and counts it', () => {
    const rng = new Rng(31);
    const arena = new Arena(1 << 16, true);
    const calls = step(40, arena);
    const up = h.weightFromBytes(randomWeight(rng, 'q4_0', 64, 96).bytes, 'q4_0', 64, 96);
    const down = h.weightFromBytes(randomWeight(rng, 'q8_0', 96, 64).bytes, 'q8_0', 96, 64);
    const before = h.info();
    h.run(arena.bytes, calls, [up, down]);
    const after = h.info();
    expect(calls.length).to.equal(360);
    expect(after.calls - before.calls).to.equal(1);
    expect(after.kernels - before.kernels).to.equal(360);
    expect(Array.from(arena.f32(0, 64)).every(Number.isFinite)).to.equal(true);
  });

  it('refuses a malformed list with InvalidInput at the record and field, and runs none of it', () => {
    const arena = new Arena(4096);
    const x = arena.putF32([1, 2, 3, 4]);
    const y = arena.alloc(16);
    const w = h.weightFromBytes(new Uint8Array(4 * 4 * 2), 'f32', 4, 2);
    const good: KernelCall = { op: 'unary', fn: 'neg', x, y, n: 4 };
    const cases: [KernelCall | Float64Array, RegExp, RegExp][] = [
      [{ op: 'unary', fn: 'neg', x, y: 4090, n: 4 }, /^\/kernels\/1\/y$/, /run past the arena's 4096/],
      [{ op: 'unary', fn: 'neg', x: x + 2, y, n: 4 }, /^\/kernels\/1\/x$/, /not aligned to 4 bytes/],
      [{ op: 'unary', fn: 'neg', x, y: x + 4, n: 4 }, /^\/kernels\/1\/y$/, /overlaps x without being the same range/],
      [{ op: 'matmul_w', x, y: x, T: 1, w: 0 }, /^\/kernels\/1\/y$/, /overlaps x/],
      [{ op: 'matmul_w', x, y, T: 1, w: 3 }, /^\/kernels\/1\/w$/, /not an integer in \[0, 0\]/],
      [{ op: 'unary', fn: 'neg', x, y, n: 2.5 }, /^\/kernels\/1\/n$/, /not an integer/],
      [{ op: 'rope', x, y, T: 1, H: 1, D: 4, rd: 3, pos: x, cos: x, sin: x, maxPos: 1 }, /^\/kernels\/1\/rd$/, /even/],
      // The typed kernels: f16, bf16 or i32 only, i32 unary only neg and abs, 2-byte alignment, regions in the arena.
      [{ op: 'unary_t', fn: 'exp', dtype: 'f32', x, y, n: 4 }, /^\/kernels\/1\/dtype$/, /f16, bf16 or i32/],
      [{ op: 'unary_t', fn: 'exp', dtype: 'i32', x, y, n: 4 }, /^\/kernels\/1\/fn$/, /neg or abs/],
      [{ op: 'binary_t', fn: 'add', dtype: 'f16', a: x + 1, b: x, y, n: 4 }, /^\/kernels\/1\/a$/, /not aligned to 2 bytes/],
      [{ op: 'reduce_t', max: false, dtype: 'bf16', x, y: 4094, rows: 2, C: 4 }, /^\/kernels\/1\/y$/, /run past the arena's 4096/],
      [{ op: 'matmul_t', dtype: 'i32', a: x, b: x, y: x, batch: 1, M: 2, K: 2, N: 2 }, /^\/kernels\/1\/y$/, /overlaps a/],
      [{ op: 'reduce_t', max: false, dtype: 'bool', x, y, rows: 1, C: 4 }, /^\/kernels\/1\/dtype$/, /f16, bf16 or i32/],
      // matmul_id: experts of N whole rows of the weight's 2, B 1 or S, the result apart from the ids.
      [{ op: 'matmul_id', x, ids: x, y, T: 1, S: 1, B: 1, N: 3, w: 0 }, /^\/kernels\/1\/N$/, /not an integer in \[1, 2\]/],
      [{ op: 'matmul_idq', x, ids: x, y, T: 1, S: 1, B: 2, N: 1, w: 0 }, /^\/kernels\/1\/B$/, /is 1 or S/],
      [{ op: 'matmul_id', x: y, ids: x, y: x, T: 1, S: 1, B: 1, N: 1, w: 0 }, /^\/kernels\/1\/y$/, /overlaps ids/],
      [Float64Array.of(99, -1), /^\/kernels\/1$/, /unknown kernel op 99/],
      [Float64Array.of(12, -1, 0, 0), /^\/kernels\/1$/, /ends inside the record/],
    ];
    for (const [bad, path, reason] of cases) {
      const list = bad instanceof Float64Array
        ? Float64Array.from([...h.encode([good]), ...bad])
        : h.encode([good, bad]);
      arena.f32(y, 4).fill(9);
      const e = thrown(() => h.run(arena.bytes, list, [w]));
      expect(e, String(reason)).to.be.instanceOf(InvalidInput);
      expect((e as InvalidInput).path).to.match(path);
      expect((e as InvalidInput).reason).to.match(reason);
      expect(Array.from(arena.f32(y, 4)), 'the first, valid kernel did not run').to.deep.equal([9, 9, 9, 9]);
    }
  });

  it('maps a weight from a byte range of a file and reads it in place', () => {
    const dir = mkdtempSync(join(tmpdir(), 'npuo-hostw-'));
    try {
      const wt = randomWeight(new Rng(32), 'q4_k', 256, 10);
      const file = join(dir, 'model.bin');
      const head = 4096 + 100; // not a page multiple: the mapping starts below the tensor
      writeFileSync(file, Buffer.concat([Buffer.alloc(head, 1), Buffer.from(wt.bytes), Buffer.alloc(50, 2)]));
      const mapped = h.openWeight({ path: file, offset: head, length: wt.bytes.length, type: 'q4_k', k: 256, n: 10 });
      const held = h.weightFromBytes(wt.bytes, 'q4_k', 256, 10);
      expect(mapped.describe()).to.include({ type: 'q4_k', k: 256, n: 10, mapped: true, closed: false });
      const arena = new Arena(8192);
      const x = arena.putF32(Array.from({ length: 256 }, (_, i) => Math.cos(i)));
      const [a, b] = [arena.alloc(40), arena.alloc(40)];
      h.run(arena.bytes, [{ op: 'matmul_w', x, y: a, T: 1, w: 0 }, { op: 'matmul_w', x, y: b, T: 1, w: 1 }], [mapped, held]);
      expect(Array.from(arena.f32(a, 10))).to.deep.equal(Array.from(arena.f32(b, 10)));

      const refusal = (f: () => unknown) => thrown(f) as InvalidInput;
      expect(refusal(() => h.openWeight({ path: file, offset: head + 100, length: wt.bytes.length, type: 'q4_k', k: 256, n: 10 })).reason).to.match(/run past the file's/);
      expect(refusal(() => h.openWeight({ path: join(dir, 'none'), offset: 0, length: 144, type: 'q4_k', k: 256, n: 1 })).reason).to.match(/cannot open: No such file/);
      expect(refusal(() => h.openWeight({ path: file, offset: 2, length: 64, type: 'f32', k: 16, n: 1 })).reason).to.match(/not aligned to 4 bytes/);
      expect(refusal(() => h.openWeight({ path: file, offset: 0, length: 1000, type: 'q4_k', k: 256, n: 1 })).reason).to.match(/is 144 bytes, not 1000/);
      mapped.close();
      expect(refusal(() => h.run(arena.bytes, [{ op: 'matmul_w', x, y: a, T: 1, w: 0 }], [mapped])).reason).to.match(/was closed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a weight whose buffer was transferred away since', () => {
    const bytes = new Uint8Array(64);
    const w = h.weightFromBytes(bytes, 'f32', 16, 1);
    structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
    const arena = new Arena(1024);
    const e = thrown(() => h.run(arena.bytes, [{ op: 'matmul_w', x: 0, y: 128, T: 1, w: 0 }], [w])) as InvalidInput;
    expect(e).to.be.instanceOf(InvalidInput);
    expect(e.reason).to.match(/detached/);
  });

  it('options: an unknown SIMD path or pool size is InvalidOptions; NPU_OFFLOAD_HOST_ISA forces a path at load', () => {
    expect(thrown(() => h.setIsa('sse9' as never))).to.be.instanceOf(InvalidOptions);
    expect((thrown(() => h.setThreads(0)) as InvalidOptions).field).to.equal('threads');
    const native = fileURLToPath(new URL('../../../src/devices/host/native.js', import.meta.url));
    const probe = `import(${JSON.stringify(native)}).then((m) => { try { console.log(m.loadHostKernels().info().isa); } catch (e) { console.log(e.code, e.field); } })`;
    const run = (isa: string) => execFileSync(process.execPath, ['-e', probe], { env: { ...process.env, NPU_OFFLOAD_HOST_ISA: isa }, encoding: 'utf8' }).trim();
    expect(run('scalar')).to.equal('scalar');
    expect(run('avx-9000')).to.equal('InvalidOptions NPU_OFFLOAD_HOST_ISA');
  });

  it('malloc: glibc\'s mmap threshold is fixed at 1 MiB when the addon loads, unless MALLOC_MMAP_THRESHOLD_ or NPU_OFFLOAD_MALLOC=default says otherwise', function () {
    const header = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header;
    if (header.glibcVersionRuntime === undefined) skipWith(this, 'not glibc');
    const native = fileURLToPath(new URL('../../../src/devices/host/native.js', import.meta.url));
    const probe = `import(${JSON.stringify(native)}).then((m) => console.log(m.loadHostKernels().info().mmapThreshold))`;
    const run = (env: Record<string, string>) => {
      const base = { ...process.env };
      delete base['MALLOC_MMAP_THRESHOLD_'];
      delete base['NPU_OFFLOAD_MALLOC'];
      return execFileSync(process.execPath, ['-e', probe], { env: { ...base, ...env }, encoding: 'utf8' }).trim();
    };
    expect(run({})).to.equal(String(1 << 20));
    // The controls: the user's own setting, and the opt-out, leave malloc alone.
    expect(run({ MALLOC_MMAP_THRESHOLD_: '131072' })).to.equal('0');
    expect(run({ NPU_OFFLOAD_MALLOC: 'default' })).to.equal('0');
  });
});

describe('host kernels: zeroBytes (a KV cache zeroed in the arena)', function () {
  let h: HostKernels;
  before(function () { h = useHost(this); });

  it('sets exactly the range to zero, partial pages at both ends included, and gives the whole pages inside back (resident memory falls)', () => {
    const rss = () => (process.platform === 'linux' ? Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024 : 0);
    const bytes = 64 << 20;
    const arena = new ArrayBuffer(bytes);
    const all = new Uint8Array(arena);
    all.fill(7);
    const before = rss();
    const [from, length] = [4096 * 3 + 5, bytes - 4096 * 7 - 11];
    h.zeroBytes(arena, from, length);
    expect(all[from - 1]).to.equal(7);
    expect(all[from]).to.equal(0);
    expect(all[from + length - 1]).to.equal(0);
    expect(all[from + length]).to.equal(7);
    let nonzero = 0;
    for (let i = from; i < from + length; i += 509) nonzero += all[i]!;
    expect(nonzero).to.equal(0);
    // About 64 MiB given back (Linux); a memset would keep them resident.
    if (process.platform === 'linux') expect(before - rss()).to.be.greaterThan(32 << 20);
    // Read back as zeros, written again as any memory.
    all[from + 100_000] = 3;
    expect(all[from + 100_000]).to.equal(3);
  });

  it('a short range is written; a range outside the arena is a RangeError and nothing is zeroed', () => {
    const arena = new ArrayBuffer(1000);
    const all = new Uint8Array(arena).fill(9);
    h.zeroBytes(arena, 10, 20);
    expect([all[9], all[10], all[29], all[30]]).to.deep.equal([9, 0, 0, 9]);
    for (const [o, n] of [[990, 11], [-1, 5], [1.5, 2]] as const) {
      expect(thrown(() => h.zeroBytes(arena, o, n))).to.be.instanceOf(RangeError);
    }
    expect(all[995]).to.equal(9);
  });
});

describe('host kernels: copyBytes (a KV cache moved for the positions written)', function () {
  let h: HostKernels;
  before(function () { h = useHost(this); });

  it('gives the same bytes as a plain copy, zeros included, and writes no page for a run of zeros (resident memory does not grow)', () => {
    const rss = () => (process.platform === 'linux' ? Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024 : 0);
    const bytes = 64 << 20;
    const from = new ArrayBuffer(bytes);
    const src = new Uint8Array(from);
    // Written: the first 100 KiB and a few scattered bytes (a block of them among zero blocks); the rest zeros.
    for (let i = 0; i < 100 << 10; i++) src[i] = (i * 31 + 7) & 255 || 1;
    for (const at of [5 << 20, (40 << 20) + 3, bytes - 1]) src[at] = 42;
    // The target was written all over before (a slot another cache used): its old bytes must go.
    const to = new ArrayBuffer(bytes + 4096 + 13);
    const dst = new Uint8Array(to);
    dst.fill(9);
    const at = 4096 + 13;
    const before = rss();
    h.copyBytes(to, at, from, 0, bytes);
    expect(Buffer.compare(Buffer.from(to, at, bytes), Buffer.from(from))).to.equal(0);
    expect(dst[at - 1]).to.equal(9);
    // The zero runs' pages of the target are given back, not written (Linux): resident memory falls.
    if (process.platform === 'linux') expect(before - rss()).to.be.greaterThan(32 << 20);
    // Negative control: a plain copy of the same bytes keeps every page of the target resident.
    dst.fill(9);
    const again = rss();
    dst.subarray(at, at + bytes).set(src);
    if (process.platform === 'linux') expect(again - rss()).to.be.below(8 << 20);
  });

  it('a range outside either buffer, or two overlapping ranges, is a RangeError', () => {
    const a = new ArrayBuffer(1000);
    const b = new ArrayBuffer(1000);
    for (const args of [[a, 990, b, 0, 11], [a, 0, b, 995, 10], [a, -1, b, 0, 5], [a, 0, a, 10, 100]] as const) {
      expect(thrown(() => h.copyBytes(args[0], args[1], args[2], args[3], args[4]))).to.be.instanceOf(RangeError);
    }
    h.copyBytes(a, 0, a, 0, 100);
  });
});
