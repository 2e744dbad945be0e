/**
 * The elementwise kernels against the op table's own scalar functions (src/ops/), over edge cases
 * (signed zeros, infinities, NaN, subnormals, the f32 extremes) and random bulk, on every SIMD path:
 * binary ops, convert and the i32 ops exactly; unary ops within the ulps docs/HOST.md publishes (0
 * for the correctly rounded ones, 1 where libm's last bit may differ from V8's); row sums within
 * gamma(C-1) sum|x| and row maxima exactly, with the op table's -0, empty-row and NaN rules.
 */
import { expect } from 'chai';
import type { HostKernels } from '../../../src/devices/host/native.js';
import { DTYPES, type DType } from '../../../src/ir/types.js';
import { convertValue } from '../../../src/ops/convert.js';
import { BINARY_OPS, UNARY_OPS, binaryScalar, unaryScalar, type UnaryOp } from '../../../src/ops/elementwise.js';
import { IntegerDivideByZero } from '../../../src/errors/index.js';
import { roundToDtype } from '../../../src/numerics/float16.js';
import { ulpDistance } from '../../../src/numerics/ulp.js';
import { Arena, Rng, eachIsa, gamma, useHost } from './helpers.js';

const ctx = { eqn: 0, fp64: false };
const F32_MAX = 3.4028234663852886e38;
const EDGES = [0, -0, 1, -1, 0.5, -0.5, 2, 3, 10, -10, 88.7, -87.3, 89, -104, 1e-45, -1e-45, 1.1754942e-38, 1e-30, 65504, 1e30,
  F32_MAX, -F32_MAX, Infinity, -Infinity, NaN, Math.PI, -Math.PI, 1e7, 123456.78, 0.1, -7.5, 20, -20];

/** Edge values and `n` random ones: bit patterns of every magnitude and moderate uniform values. */
function inputs(rng: Rng, n: number): number[] {
  const out = EDGES.map(Math.fround);
  const bits = new Uint32Array(1);
  const f = new Float32Array(bits.buffer);
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      bits[0] = Math.floor(rng.u() * 2 ** 32);
      out.push(f[0]!);
    } else {
      out.push(rng.f32(rng.pick([1, 4, 30, 1000])));
    }
  }
  return out;
}

/** Ulps each unary op may be from the oracle's f64-then-round value. */
const UNARY_ULPS: Record<UnaryOp, number> = {
  neg: 0, abs: 0, recip: 0, sqrt: 0, rsqrt: 0, exp: 1, log: 1, tanh: 1, erf: 1, logistic: 1, sin: 1, cos: 1,
};

const same = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

describe('host kernels: elementwise ops and reductions', function () {
  let h: HostKernels;
  before(function () { h = useHost(this); });

  it('unary ops are within their published ulps of the oracle on every path', () => {
    const xs = inputs(new Rng(11), 6000);
    const arena = new Arena(xs.length * 8 + 1024);
    const x = arena.putF32(xs);
    const y = arena.alloc(xs.length * 4);
    eachIsa(h, (isa) => {
      for (const fn of UNARY_OPS) {
        h.run(arena.bytes, [{ op: 'unary', fn, x, y, n: xs.length }]);
        const got = arena.f32(y, xs.length);
        const want = unaryScalar(fn, 'f32', ctx);
        const worst = xs.reduce((m, v, i) => Math.max(m, ulpDistance('f32', got[i]!, want(v))), 0);
        expect(worst, `${fn} on ${isa}: worst ulps`).to.be.at.most(UNARY_ULPS[fn]);
        // -0 and +0 are 0 ulps apart; the sign rules are checked on their own.
        for (const z of [0, 1]) expect(Object.is(got[z], want(xs[z]!)), `${fn}(${Object.is(xs[z], -0) ? '-0' : '0'}) on ${isa}`).to.equal(true);
      }
    });
  });

  it('exp and logistic stay within 1 ulp over a dense sweep of the range where exp is neither 0 nor inf', () => {
    const xs: number[] = [];
    for (let i = 0; i <= 60000; i++) xs.push(Math.fround(-104 + (193 * i) / 60000));
    for (const b of [-103.972, -87.336, 88.7228, -0.5, 0.5]) for (let j = -50; j <= 50; j++) xs.push(Math.fround(b + j * 1e-5));
    const arena = new Arena(xs.length * 8 + 1024);
    const x = arena.putF32(xs);
    const y = arena.alloc(xs.length * 4);
    eachIsa(h, (isa) => {
      for (const fn of ['exp', 'logistic'] as const) {
        h.run(arena.bytes, [{ op: 'unary', fn, x, y, n: xs.length }]);
        const got = arena.f32(y, xs.length);
        const want = unaryScalar(fn, 'f32', ctx);
        const off = xs.filter((v, i) => got[i] !== want(v)).length;
        const worst = xs.reduce((m, v, i) => Math.max(m, ulpDistance('f32', got[i]!, want(v))), 0);
        expect(worst, `${fn} on ${isa}`).to.be.at.most(1);
        // Rounded from an f64 within 2^-47, a result is off by one only next to a rounding tie.
        expect(off / xs.length, `${fn} on ${isa}: share not equal to the oracle`).to.be.below(1e-3);
      }
    });
  });

  it('binary f32 ops equal the oracle bit for bit, scalar operands on either side, on every path', () => {
    const rng = new Rng(12);
    const a = inputs(rng, 3000);
    const b = [...a].reverse().map((v, i) => (i % 7 === 0 ? v : rng.pick(EDGES.map(Math.fround))));
    const arena = new Arena(a.length * 16 + 1024);
    const ao = arena.putF32(a);
    const bo = arena.putF32(b);
    const y = arena.alloc(a.length * 4);
    eachIsa(h, (isa) => {
      for (const fn of BINARY_OPS) {
        const want = binaryScalar(fn, 'f32', ctx);
        for (const [aScalar, bScalar] of [[false, false], [true, false], [false, true]] as const) {
          h.run(arena.bytes, [{ op: 'binary', fn, a: ao, b: bo, y, n: a.length, aScalar, bScalar }]);
          const got = fn === 'ge' ? arena.u8(y, a.length) : arena.f32(y, a.length);
          const bad = a.findIndex((_, i) => !same(got[i]!, want(aScalar ? a[0]! : a[i]!, bScalar ? b[0]! : b[i]!)));
          expect(bad, `${fn}${aScalar ? ' (scalar a)' : bScalar ? ' (scalar b)' : ''} on ${isa}: first mismatch`).to.equal(-1);
        }
      }
    });
  });

  it('i32 ops wrap exactly, divide toward zero, and refuse a division by zero naming the equation', () => {
    const vals = [0, 1, -1, 7, -7, 2 ** 31 - 1, -(2 ** 31), 65536, -65537, 3, 1234567, -99];
    const a: number[] = [];
    const b: number[] = [];
    for (const p of vals) for (const q of vals) if (q !== 0) { a.push(p); b.push(q); }
    const arena = new Arena(a.length * 16 + 1024);
    const ao = arena.putI32(a);
    const bo = arena.putI32(b);
    const y = arena.alloc(a.length * 4);
    for (const fn of BINARY_OPS) {
      h.run(arena.bytes, [{ op: 'binary_i32', fn, a: ao, b: bo, y, n: a.length }]);
      const got = fn === 'ge' ? arena.u8(y, a.length) : arena.i32(y, a.length);
      const want = binaryScalar(fn, 'i32', ctx);
      a.forEach((p, i) => expect(got[i], `${p} ${fn} ${b[i]}`).to.equal(want(p, b[i]!)));
    }
    arena.i32(bo, 1)[0] = 0;
    expect(() => h.run(arena.bytes, [{ op: 'binary_i32', eqn: 5, fn: 'div', a: ao, b: bo, y, n: 1 }]))
      .to.throw(IntegerDivideByZero).with.property('eqn', 5);
  });

  it('convert between every pair of dtypes equals the oracle, rounding once', () => {
    const rng = new Rng(13);
    const raw = [...inputs(rng, 2000), 2 ** 31, -(2 ** 31) - 1e3, 65519.99, 65520, 2.5, -3.5, 1e-8, 6e-8, 3e-8];
    const arena = new Arena(raw.length * 4 * 31 + 8192);
    for (const from of DTYPES) {
      // Values of the source dtype: f32 values rounded to it (i32 truncated into range, bools 0/1).
      const src = raw.map((v) => from === 'bool' ? (v !== 0 ? 1 : 0) : from === 'i32' ? convertValue(v, 'f32', 'i32', ctx) : roundToDtype(from, v));
      const x = arena.alloc(src.length * 4);
      writeAs(arena, from, x, src);
      for (const to of DTYPES) {
        const y = arena.alloc(src.length * 4);
        h.run(arena.bytes, [{ op: 'convert', from, to, x, y, n: src.length }]);
        const got = readAs(arena, to, y, src.length);
        const bad = src.findIndex((v, i) => !same(got[i]!, convertValue(v, from, to, ctx)));
        expect(bad, `${from} -> ${to}: first mismatch at ${src[bad]}`).to.equal(-1);
      }
    }
  });

  it('row sums within gamma(C-1) sum|x| and row maxima exact, with the op table\'s rules for -0, empty rows and NaN', () => {
    const rng = new Rng(14);
    eachIsa(h, (isa) => {
      for (const c of [1, 3, 16, 17, 100, 1000]) {
        const rows = 5;
        const xs = Array.from({ length: rows * c }, () => rng.f32(rng.pick([1, 100])));
        const arena = new Arena(rows * c * 4 + 1024);
        const x = arena.putF32(xs);
        const s = arena.alloc(rows * 4);
        const m = arena.alloc(rows * 4);
        h.run(arena.bytes, [{ op: 'row_sum', x, y: s, rows, C: c }, { op: 'row_max', x, y: m, rows, C: c }]);
        for (let r = 0; r < rows; r++) {
          const row = xs.slice(r * c, (r + 1) * c);
          const exact = row.reduce((p, v) => p + v, 0);
          const abs = row.reduce((p, v) => p + Math.abs(v), 0);
          expect(Math.abs(arena.f32(s, rows)[r]! - exact), `sum C=${c} on ${isa}`).to.be.at.most(gamma(c) * abs);
          expect(arena.f32(m, rows)[r], `max C=${c} on ${isa}`).to.equal(Math.max(...row));
        }
      }
      const arena = new Arena(4096);
      const rowsOf = (vals: number[][]) => arena.putF32(vals.flat());
      const cases = [[-0, -0, -0], [-0, 0, -0], [1, NaN, 2], [-Infinity, -Infinity, -Infinity]];
      const x = rowsOf(cases);
      const s = arena.alloc(16);
      const m = arena.alloc(16);
      const e = arena.alloc(8);
      h.run(arena.bytes, [
        { op: 'row_sum', x, y: s, rows: 4, C: 3 }, { op: 'row_max', x, y: m, rows: 4, C: 3 },
        { op: 'row_sum', x, y: e, rows: 1, C: 0 }, { op: 'row_max', x, y: e + 4, rows: 1, C: 0 },
      ]);
      const sums = Array.from(arena.f32(s, 4));
      const maxes = Array.from(arena.f32(m, 4));
      expect([Object.is(sums[0], -0), Object.is(sums[1], 0), Number.isNaN(sums[2])], `sums on ${isa}`).to.deep.equal([true, true, true]);
      expect([Object.is(maxes[0], -0), Object.is(maxes[1], 0), Number.isNaN(maxes[2]), maxes[3]], `maxes on ${isa}`).to.deep.equal([true, true, true, -Infinity]);
      expect(Array.from(arena.f32(e, 2)), `empty rows on ${isa}`).to.deep.equal([0, -Infinity]);
    });
  });
});

function writeAs(a: Arena, d: DType, off: number, v: readonly number[]): void {
  const dv = new DataView(a.bytes.buffer, a.bytes.byteOffset);
  v.forEach((x, i) => {
    if (d === 'f32') dv.setFloat32(off + 4 * i, x, true);
    else if (d === 'i32') dv.setInt32(off + 4 * i, x, true);
    else if (d === 'bool') dv.setUint8(off + i, x);
    else dv.setUint16(off + 2 * i, bits16(d, x), true);
  });
}

function readAs(a: Arena, d: DType, off: number, n: number): number[] {
  const dv = new DataView(a.bytes.buffer, a.bytes.byteOffset);
  return Array.from({ length: n }, (_, i) => {
    if (d === 'f32') return dv.getFloat32(off + 4 * i, true);
    if (d === 'i32') return dv.getInt32(off + 4 * i, true);
    if (d === 'bool') return dv.getUint8(off + i);
    return value16(d, dv.getUint16(off + 2 * i, true));
  });
}

/** f16/bf16 bits of a value already of that dtype, and back: through f32 (bf16) or exactly (f16). */
function bits16(d: DType, x: number): number {
  if (d === 'bf16') {
    const b = new Uint32Array(new Float32Array([x]).buffer)[0]!;
    return Number.isNaN(x) ? 0x7fc0 : b >>> 16;
  }
  if (Number.isNaN(x)) return 0x7e00;
  const s = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a === Infinity) return s | 0x7c00;
  if (a < 2 ** -14) return s | Math.round(a / 2 ** -24);
  const e = Math.floor(Math.log2(a));
  const E = 2 ** e > a ? e - 1 : 2 ** (e + 1) <= a ? e + 1 : e;
  return s | ((E + 15) << 10) | Math.round((a / 2 ** E - 1) * 1024);
}

function value16(d: DType, b: number): number {
  if (d === 'bf16') return new Float32Array(new Uint32Array([b << 16]).buffer)[0]!;
  const s = b & 0x8000 ? -1 : 1;
  const e = (b >> 10) & 31;
  const m = b & 1023;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
