/**
 * Weight matmuls against an f64 reference over the independent dequantizer (reference.ts): every
 * weight type, the decode shape (T = 1) and the prefill shape (T > 1), K and N that are not multiples
 * of the SIMD width (and, for q4nx, of the tile), under every SIMD path this CPU has, each within the
 * bound of docs/HOST.md; the paths within twice that of each other; and a negative control: a matmul
 * that skips one block of every row fails the same check.
 */
import { expect } from 'chai';
import { HOST_WEIGHT_TYPES, type HostWeightType } from '../../../src/compiler/host/kernelList.js';
import type { HostKernels } from '../../../src/devices/host/native.js';
import { InvalidInput } from '../../../src/errors/index.js';
import { Arena, Rng, dotBound, eachIsa, useHost } from './helpers.js';
import { dropBlock, randomWeight, type TestWeight } from './reference.js';

/** Shapes per type: K a whole number of blocks (any K for float types and q4nx), N often odd. */
const SHAPES: Record<HostWeightType, [number, number][]> = {
  f32: [[1, 1], [7, 5], [33, 19], [100, 67], [257, 40]],
  f16: [[3, 2], [17, 9], [64, 33], [129, 70]],
  bf16: [[5, 3], [31, 17], [96, 41], [200, 65]],
  q4_0: [[32, 1], [96, 7], [160, 37], [512, 66]],
  q4_1: [[32, 3], [64, 13], [224, 41]],
  q8_0: [[32, 5], [128, 21], [416, 35]],
  q4_k: [[256, 1], [256, 9], [768, 37]],
  q6_k: [[256, 3], [512, 19], [768, 33]],
  q4nx_q41: [[256, 32], [100, 7], [300, 45], [512, 70], [33, 1]],
};
const TS = [1, 2, 5, 13];

interface Case { w: TestWeight; t: number; x: Float32Array }

/** y and the bound per output for x [T, K] against the exact weight. */
function reference(c: Case): { y: Float64Array; bound: Float64Array } {
  const { k, n, exact } = c.w;
  const y = new Float64Array(c.t * n);
  const bound = new Float64Array(c.t * n);
  for (let t = 0; t < c.t; t++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      let abs = 0;
      for (let i = 0; i < k; i++) {
        const p = c.x[t * k + i]! * exact[j * k + i]!;
        s += p;
        abs += Math.abs(p);
      }
      y[t * n + j] = s;
      bound[t * n + j] = dotBound(k, abs);
    }
  }
  return { y, bound };
}

/** Runs matmul_w of `bytes` (as c.w's type and shape) on c.x. */
function native(h: HostKernels, c: Case, bytes: Uint8Array = c.w.bytes): Float32Array {
  const arena = new Arena(c.t * (c.w.k + c.w.n) * 4 + 256);
  const x = arena.putF32(c.x);
  const y = arena.alloc(c.t * c.w.n * 4);
  const w = h.weightFromBytes(bytes, c.w.type, c.w.k, c.w.n);
  h.run(arena.bytes, [{ op: 'matmul_w', x, y, T: c.t, w: 0 }], [w]);
  return arena.f32(y, c.t * c.w.n).slice();
}

/** The outputs that break the bound, as "t,n: got vs want (bound)". */
function violations(got: Float32Array, ref: { y: Float64Array; bound: Float64Array }, n: number): string[] {
  const bad: string[] = [];
  for (let i = 0; i < got.length; i++) {
    if (!(Math.abs(got[i]! - ref.y[i]!) <= ref.bound[i]!)) {
      bad.push(`${Math.floor(i / n)},${i % n}: ${got[i]} vs ${ref.y[i]} (bound ${ref.bound[i]!.toExponential(2)})`);
    }
  }
  return bad;
}

describe('host kernels: weight matmul', function () {
  let h: HostKernels;
  before(function () { h = useHost(this); });

  for (const type of HOST_WEIGHT_TYPES) {
    it(`${type}: decode and prefill shapes within gamma(K+2) sum|x w| on every SIMD path`, () => {
      const rng = new Rng(0x51ed + type.length * 977);
      for (const [k, n] of SHAPES[type]) {
        const w = randomWeight(rng, type, k, n);
        for (const t of TS) {
          const c: Case = { w, t, x: Float32Array.from({ length: t * k }, () => rng.f32()) };
          const ref = reference(c);
          const byIsa: Float32Array[] = [];
          eachIsa(h, (isa) => {
            const got = native(h, c);
            const bad = violations(got, ref, n);
            expect(bad, `${type} [K=${k}, N=${n}] T=${t} on ${isa}`).to.deep.equal([]);
            byIsa.push(got);
          });
          // Each path is within the bound of the exact value, so any two are within twice it.
          for (let i = 1; i < byIsa.length; i++) {
            for (let j = 0; j < byIsa[0]!.length; j++) {
              expect(Math.abs(byIsa[i]![j]! - byIsa[0]![j]!)).to.be.at.most(2 * ref.bound[j]!);
            }
          }
        }
      }
    });
  }

  it('the bound is not vacuous: a matmul that skips one block of every row fails it, for every type', () => {
    const rng = new Rng(77);
    for (const type of HOST_WEIGHT_TYPES) {
      const [k, n] = type === 'q4_k' || type === 'q6_k' ? [512, 24] : [256, 40];
      const w = randomWeight(rng, type, k, n);
      for (const t of [1, 3]) {
        const c: Case = { w, t, x: Float32Array.from({ length: t * k }, () => rng.f32()) };
        const ref = reference(c);
        expect(violations(native(h, c), ref, n), `${type} intact`).to.deep.equal([]);
        const skipped = violations(native(h, c, dropBlock(w, 1)), ref, n);
        expect(skipped.length, `${type} T=${t} with block 1 dropped: outputs past the bound`).to.be.above(n * t / 2);
      }
    }
  });

  it('refuses a K that is not a whole number of blocks, and bytes that do not fit the shape', () => {
    for (const [type, k] of [['q4_0', 48], ['q8_0', 33], ['q4_k', 320], ['q6_k', 128], ['q4_1', 16]] as const) {
      expect(() => h.weightFromBytes(new Uint8Array(1 << 16), type, k, 2)).to.throw(InvalidInput, /not a whole number/);
    }
    // The addon refuses on its own too, whoever calls it: its constructor, past the TS check.
    const native = (h as unknown as { addon: { HostWeight: new (spec: object) => unknown } }).addon;
    for (const [type, k] of [[3, 48], [6, 320], [7, 128]] as const) {
      expect(() => new native.HostWeight({ type, k, n: 2, bytes: new Uint8Array(1 << 16) })).to.throw(InvalidInput, /not a whole number of/);
    }
    const e = (() => { try { h.weightFromBytes(new Uint8Array(100), 'q4_0', 64, 3); } catch (x) { return x; } })();
    expect(e).to.be.instanceOf(InvalidInput);
    expect((e as InvalidInput).reason).to.match(/needs 108 bytes; got 100/);
  });
});
