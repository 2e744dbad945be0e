/**
 * The row kernels of a transformer step and the op table's f32 matmul, each against an f64 reference
 * within the bound docs/HOST.md derives for it, on every SIMD path: RMSNorm, softmax (fused, and as
 * its primitives exp_sub and row_scale), neox rope over position tables, dynamic_update_slice into a
 * cache (exact, refused out of range before anything is written), and matmul with batches, M = 1,
 * K = 0 and widths that are not a multiple of the panel.
 */
import { expect } from 'chai';
import type { HostKernels } from '../../../src/devices/host/native.js';
import { IndexOutOfRange, InvalidInput } from '../../../src/errors/index.js';
import { ulpDistance } from '../../../src/numerics/ulp.js';
import { Arena, Rng, U32, dotBound, eachIsa, gamma, useHost } from './helpers.js';

const fr = Math.fround;

describe('host kernels: row kernels and f32 matmul', function () {
  let h: HostKernels;
  before(function () { h = useHost(this); });

  it('rmsnorm is within (gamma(C)/2 + 4u)|y| of x / sqrt(mean(x^2) + eps) * g', () => {
    const rng = new Rng(21);
    eachIsa(h, (isa) => {
      for (const c of [1, 7, 64, 1000, 1024]) {
        const rows = 3;
        const xs = Array.from({ length: rows * c }, () => rng.f32(rng.pick([1, 50])));
        const g = Array.from({ length: c }, () => rng.f32(2));
        const eps = 1e-6;
        const arena = new Arena(4 * (2 * rows * c + c) + 1024);
        const x = arena.putF32(xs);
        const go = arena.putF32(g);
        const y = arena.alloc(rows * c * 4);
        h.run(arena.bytes, [{ op: 'rmsnorm', x, g: go, y, rows, C: c, eps }]);
        const got = arena.f32(y, rows * c);
        for (let r = 0; r < rows; r++) {
          const row = xs.slice(r * c, (r + 1) * c);
          const scale = 1 / Math.sqrt(row.reduce((p, v) => p + v * v, 0) / c + fr(eps));
          row.forEach((v, i) => {
            const want = v * scale * g[i]!;
            expect(Math.abs(got[r * c + i]! - want), `C=${c} on ${isa}`).to.be.at.most((gamma(c) / 2 + 4 * U32) * Math.abs(want) + 1e-300);
          });
        }
      }
    });
  });

  it('softmax, fused and from its primitives, is within the derived relative bound of exp(x - max) / sum', () => {
    const rng = new Rng(22);
    eachIsa(h, (isa) => {
      for (const c of [1, 5, 16, 33, 500]) {
        const rows = 4;
        const xs = Array.from({ length: rows * c }, (_, i) => (i % 11 === 3 ? fr(-1e30) : rng.f32(rng.pick([1, 10, 60]))));
        const arena = new Arena(4 * 6 * rows * c + 4096);
        const x = arena.putF32(xs);
        const y = arena.alloc(rows * c * 4);
        const m = arena.alloc(rows * 4);
        const e = arena.alloc(rows * c * 4);
        const s = arena.alloc(rows * 4);
        const inv = arena.alloc(rows * 4);
        const y2 = arena.alloc(rows * c * 4);
        h.run(arena.bytes, [
          { op: 'softmax', x, y, rows, C: c },
          { op: 'row_max', x, y: m, rows, C: c },
          { op: 'exp_sub', x, m, y: e, rows, C: c },
          { op: 'row_sum', x: e, y: s, rows, C: c },
          { op: 'unary', fn: 'recip', x: s, y: inv, n: rows },
          { op: 'row_scale', x: e, s: inv, y: y2, rows, C: c },
        ]);
        for (let r = 0; r < rows; r++) {
          const row = xs.slice(r * c, (r + 1) * c);
          const mx = Math.max(...row);
          const ex = row.map((v) => Math.exp(v - mx));
          const sum = ex.reduce((p, v) => p + v, 0);
          // e_j carries u(|d_j| + 1) (the rounded difference, then exp's rounding); the sum gamma(C-1)
          // plus its terms' error; the quotient one more u (docs/HOST.md).
          const sumErr = gamma(Math.max(c - 1, 0)) + ex.reduce((p, v, j) => p + v * U32 * (Math.abs(row[j]! - mx) + 1), 0) / sum;
          row.forEach((v, i) => {
            const want = ex[i]! / sum;
            const bound = want * (U32 * (Math.abs(v - mx) + 1) + sumErr + U32) * 1.001 + 2 ** -148; // plus subnormal rounding
            expect(Math.abs(arena.f32(y, rows * c)[r * c + i]! - want), `fused C=${c} on ${isa}`).to.be.at.most(bound);
            // The primitives round once more (1/s, then a product): two more u.
            expect(Math.abs(arena.f32(y2, rows * c)[r * c + i]! - want), `primitives C=${c} on ${isa}`).to.be.at.most(bound + 2.01 * U32 * want);
          });
          expect(arena.f32(m, rows)[r]).to.equal(mx);
          row.forEach((v, i) => expect(ulpDistance('f32', arena.f32(e, rows * c)[r * c + i]!, fr(Math.exp(fr(v - mx))))).to.be.at.most(1));
        }
      }
    });
  });

  it('rope rotates pairs (i, i + rd/2) by the position\'s table entries within gamma(2), copies dims past rd, and refuses a position outside the table', () => {
    const rng = new Rng(23);
    const [T, H, D, rd, maxPos] = [3, 2, 12, 8, 40];
    const pos = [0, 17, 39];
    const cosT: number[] = [];
    const sinT: number[] = [];
    for (let p = 0; p < maxPos; p++) for (let i = 0; i < rd / 2; i++) {
      const a = p * 10000 ** (-2 * i / rd);
      cosT.push(fr(Math.cos(a)));
      sinT.push(fr(Math.sin(a)));
    }
    const xs = Array.from({ length: T * H * D }, () => rng.f32(3));
    const arena = new Arena(8192);
    const x = arena.putF32(xs);
    const po = arena.putI32(pos);
    const co = arena.putF32(cosT);
    const so = arena.putF32(sinT);
    const y = arena.alloc(xs.length * 4);
    eachIsa(h, (isa) => {
      h.run(arena.bytes, [{ op: 'rope', x, y, T, H, D, rd, pos: po, cos: co, sin: so, maxPos }]);
      const got = arena.f32(y, xs.length);
      for (let t = 0; t < T; t++) for (let hd = 0; hd < H; hd++) {
        const o = (t * H + hd) * D;
        for (let i = 0; i < rd / 2; i++) {
          const [c, s] = [cosT[pos[t]! * rd / 2 + i]!, sinT[pos[t]! * rd / 2 + i]!];
          const [x0, x1] = [xs[o + i]!, xs[o + i + rd / 2]!];
          expect(Math.abs(got[o + i]! - (x0 * c - x1 * s)), isa).to.be.at.most(gamma(2) * (Math.abs(x0 * c) + Math.abs(x1 * s)));
          expect(Math.abs(got[o + i + rd / 2]! - (x0 * s + x1 * c)), isa).to.be.at.most(gamma(2) * (Math.abs(x0 * s) + Math.abs(x1 * c)));
        }
        for (let i = rd; i < D; i++) expect(got[o + i]).to.equal(xs[o + i]);
      }
    });
    arena.i32(po, 3)[1] = maxPos;
    expect(() => h.run(arena.bytes, [{ op: 'rope', eqn: 9, x, y, T, H, D, rd, pos: po, cos: co, sin: so, maxPos }]))
      .to.throw(IndexOutOfRange).that.satisfies((e: IndexOutOfRange) => e.eqn === 9 && e.index === maxPos && e.extent === maxPos);
  });

  it('dynamic_update_slice writes a KV row in place, exactly, and refuses a start past the window before writing', () => {
    const [L, Hk, Dh] = [6, 2, 4];
    const arena = new Arena(4096);
    const cache = arena.putF32(Array.from({ length: L * Hk * Dh }, (_, i) => i));
    const upd = arena.putF32(Array.from({ length: Hk * Dh }, (_, i) => -1 - i));
    const starts = arena.putI32([4, 0, 0]);
    h.run(arena.bytes, [{ op: 'update', dst: cache, upd, starts, elem: 4, dims: [L, Hk, Dh], update: [1, Hk, Dh] }]);
    const after = Array.from(arena.f32(cache, L * Hk * Dh));
    after.forEach((v, i) => expect(v).to.equal(Math.floor(i / (Hk * Dh)) === 4 ? -1 - (i % (Hk * Dh)) : i));
    arena.i32(starts, 3)[0] = 6;
    let e: unknown;
    try { h.run(arena.bytes, [{ op: 'update', eqn: 4, dst: cache, upd, starts, elem: 4, dims: [L, Hk, Dh], update: [1, Hk, Dh] }]); } catch (x) { e = x; }
    expect((e as IndexOutOfRange).toWire()).to.include({ code: 'IndexOutOfRange', eqn: 4, index: 6, extent: 6 });
    expect(Array.from(arena.f32(cache, L * Hk * Dh))).to.deep.equal(after);
    // A 2-byte cache (f16 bits) and an update in the middle of the last dim.
    const c16 = arena.alloc(2 * 3 * 5);
    const u16 = arena.alloc(2 * 2 * 2);
    new Uint16Array(arena.bytes.buffer, c16, 15).fill(7);
    new Uint16Array(arena.bytes.buffer, u16, 4).set([1, 2, 3, 4]);
    const st = arena.putI32([1, 2]);
    h.run(arena.bytes, [{ op: 'update', dst: c16, upd: u16, starts: st, elem: 2, dims: [3, 5], update: [2, 2] }]);
    expect(Array.from(new Uint16Array(arena.bytes.buffer, c16, 15))).to.deep.equal([7, 7, 7, 7, 7, 7, 7, 1, 2, 7, 7, 7, 3, 4, 7]);
  });

  it('f32 matmul [B, M, K] x [B, K, N] within gamma(K+2) sum|a b| on every path, with K = 0 giving +0', () => {
    const rng = new Rng(24);
    eachIsa(h, (isa) => {
      for (const [B, M, K, N] of [[1, 1, 5, 3], [2, 3, 17, 33], [1, 7, 64, 16], [3, 1, 100, 47], [1, 13, 9, 70], [2, 2, 0, 5]] as const) {
        const a = Array.from({ length: B * M * K }, () => rng.f32());
        const b = Array.from({ length: B * K * N }, () => rng.f32());
        const arena = new Arena(4 * (a.length + b.length + B * M * N) + 1024);
        const ao = arena.putF32(a);
        const bo = arena.putF32(b);
        const y = arena.alloc(B * M * N * 4);
        arena.f32(y, B * M * N).fill(NaN);
        h.run(arena.bytes, [{ op: 'matmul', a: ao, b: bo, y, batch: B, M, K, N }]);
        const got = arena.f32(y, B * M * N);
        for (let p = 0; p < B; p++) for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) {
          let s = 0;
          let abs = 0;
          for (let k = 0; k < K; k++) {
            const t = a[(p * M + i) * K + k]! * b[(p * K + k) * N + j]!;
            s += t;
            abs += Math.abs(t);
          }
          const v = got[(p * M + i) * N + j]!;
          if (K === 0) expect(Object.is(v, 0), `K=0 on ${isa}`).to.equal(true);
          else expect(Math.abs(v - s), `[${B},${M},${K}]x[${K},${N}] on ${isa}`).to.be.at.most(dotBound(K, abs));
        }
      }
    });
  });

  it('matmul_bt (b stored [batch, N, K], as keys in a cache) matches matmul of the transpose within its bound', () => {
    const rng = new Rng(25);
    eachIsa(h, (isa) => {
      for (const [B, M, K, N] of [[2, 1, 64, 9], [1, 5, 33, 40], [3, 2, 128, 17]] as const) {
        const a = Array.from({ length: B * M * K }, () => rng.f32());
        const bt = Array.from({ length: B * N * K }, () => rng.f32());
        const arena = new Arena(4 * (a.length + bt.length + B * M * N) + 1024);
        const ao = arena.putF32(a);
        const bo = arena.putF32(bt);
        const y = arena.alloc(B * M * N * 4);
        h.run(arena.bytes, [{ op: 'matmul_bt', a: ao, b: bo, y, batch: B, M, K, N }]);
        for (let p = 0; p < B; p++) for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) {
          let s = 0;
          let abs = 0;
          for (let k = 0; k < K; k++) {
            const t = a[(p * M + i) * K + k]! * bt[(p * N + j) * K + k]!;
            s += t;
            abs += Math.abs(t);
          }
          expect(Math.abs(arena.f32(y, B * M * N)[(p * M + i) * N + j]! - s), `[${B},${M},${K}]x[${N},${K}]^T on ${isa}`).to.be.at.most(dotBound(K, abs));
        }
      }
    });
  });

  it('copy_strided transposes, slices and broadcasts exactly, and refuses a span past the arena', () => {
    const arena = new Arena(4096);
    const x = arena.putF32(Array.from({ length: 24 }, (_, i) => i)); // [2, 3, 4]
    const t = arena.alloc(24 * 4);
    const sl = arena.alloc(4 * 4);
    const bc = arena.alloc(12 * 4);
    h.run(arena.bytes, [
      // transpose [2, 3, 4] -> [4, 3, 2]: y[k, j, i] = x[i, j, k]
      { op: 'copy_strided', x, y: t, elem: 4, dims: [4, 3, 2], xStrides: [1, 4, 12], yStrides: [6, 2, 1] },
      // slice x[1, 1:3, 1:3] -> [2, 2]
      { op: 'copy_strided', x: x + 4 * (12 + 4 + 1), y: sl, elem: 4, dims: [2, 2], xStrides: [4, 1], yStrides: [2, 1] },
      // broadcast row x[0, 0, 0:4] to [3, 4]
      { op: 'copy_strided', x, y: bc, elem: 4, dims: [3, 4], xStrides: [0, 1], yStrides: [4, 1] },
    ]);
    const tr = Array.from(arena.f32(t, 24));
    for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) for (let k = 0; k < 4; k++) expect(tr[k * 6 + j * 2 + i]).to.equal(i * 12 + j * 4 + k);
    expect(Array.from(arena.f32(sl, 4))).to.deep.equal([17, 18, 21, 22]);
    expect(Array.from(arena.f32(bc, 12))).to.deep.equal([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
    expect(() => h.run(arena.bytes, [{ op: 'copy_strided', x, y: t, elem: 4, dims: [2, 1000], xStrides: [1000, 1], yStrides: [1, 2] }]))
      .to.throw(InvalidInput).with.property('path', '/kernels/0/x');
  });
});
