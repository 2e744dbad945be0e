/**
 * The exhaustive sweep's native core (src/native/sweep/) is the simulated XDNA2 core, bit for bit: its
 * scalar port against the device's own kernels (kernels.ts over CORE_MATH) on random patterns, random
 * values where each routine changes path, and the edges with their neighbours; its lane routines (what
 * the sweep runs) against the scalar port on every pattern around where the paths change; and a build without the addon answers
 * NoDevice saying how to build it. NPU_OFFLOAD_SWEEP_SAMPLES raises the random count per function (the
 * default, 2^20, keeps the file near twenty seconds).
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runExhaustive } from '../../src/contracts/exhaustive.js';
import { SWEEP_ADDON_FILE, loadSweepAddon } from '../../src/contracts/nativeSweep.js';
import type { SweepAddon } from '../../src/contracts/nativeSweep.js';
import { NATIVE_BUILD_DIR } from '../../src/devices/native.js';
import { EDGE_VALUES, randomF32, rng, uniformF32 } from '../../src/devices/xdna2/contractCases.js';
import { CORE_MATH } from '../../src/devices/xdna2/coreMath.js';
import { bitsOf } from '../../src/devices/xdna2/f32.js';
import { CORE_BINARY, CORE_UNARY, binaryKernel, unaryKernel } from '../../src/devices/xdna2/kernels.js';
import type { CoreUnary } from '../../src/devices/xdna2/kernels.js';
import { NoDevice } from '../../src/errors/index.js';

const SAMPLES = Number(process.env.NPU_OFFLOAD_SWEEP_SAMPLES ?? 2 ** 20);
const built = existsSync(join(NATIVE_BUILD_DIR, SWEEP_ADDON_FILE));

/** Where each routine changes path (clamps, saturations, series and polynomial switches), and around 1. */
const INTERESTING: Record<CoreUnary, readonly [number, number]> = {
  neg: [-4, 4], recip: [-4, 4], exp: [-95, 95], log: [0, 4], tanh: [-10, 10], erf: [-5, 5], sqrt: [0, 4],
};

/** Every edge value and its 8 neighbouring patterns either side. */
function edgePatterns(): number[] {
  const out: number[] = [];
  const extra = [88, -88, 87, -87, 0.625, -0.625, 9, -9, 0.5, -0.5, 4, -4, Math.SQRT1_2, 2 ** -126, 2 ** -149];
  for (const v of [...EDGE_VALUES, ...extra]) for (let k = -8; k <= 8; k++) out.push((bitsOf(v) + k) >>> 0);
  return out;
}

/** Patterns uniform over all 2^32 (mostly tiny or huge magnitudes), values uniform where paths change, the edges. */
function unaryPatterns(op: CoreUnary, n: number): Uint32Array {
  const r = rng(1234 + CORE_UNARY.indexOf(op));
  const [lo, hi] = INTERESTING[op];
  const out = new Uint32Array(2 * n + edgePatterns().length);
  for (let i = 0; i < n; i++) out[i] = Math.floor(r() * 2 ** 32) >>> 0;
  for (let i = 0; i < n; i++) out[n + i] = bitsOf(uniformF32(r, lo, hi)) >>> 0;
  out.set(edgePatterns(), 2 * n);
  return out;
}

/** Counts results that differ bit for bit (NaN matches NaN), keeping the first. */
function compare(got: ArrayLike<number>, want: ArrayLike<number>, inputs: (i: number) => string): { mismatches: number; first: string } {
  let mismatches = 0;
  let first = '';
  for (let i = 0; i < want.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    if (Object.is(g, w) || (Number.isNaN(g) && Number.isNaN(w))) continue;
    if (mismatches++ === 0) first = `${inputs(i)}: native ${g}, TypeScript ${w}`;
  }
  return { mismatches, first };
}

/**
 * The patterns in order of the values they hold (-NaN, -Infinity ... -0, +0 ... +Infinity, NaN), each kept
 * bit for bit (a Float32Array's sort may canonicalize NaN payloads): sorted as order-preserving integer
 * keys (a negative pattern's complement, a positive one's with the sign bit set), mapped back.
 */
function byValue(u: Uint32Array): Uint32Array {
  // Loops rather than a typed array's map with a closure: the same keys, a fraction of the time on 2^21 patterns.
  const keys = new Uint32Array(u.length);
  for (let i = 0; i < u.length; i++) { const b = u[i]!; keys[i] = ((b & 0x80000000) !== 0 ? ~b : b | 0x80000000) >>> 0; }
  keys.sort();
  for (let i = 0; i < keys.length; i++) { const k = keys[i]!; keys[i] = ((k & 0x80000000) !== 0 ? k & 0x7fffffff : ~k) >>> 0; }
  return keys;
}

const f32Of = (u: Uint32Array) => new Float32Array(u.buffer, u.byteOffset, u.length);
const bytes = (u: Uint32Array) => new Uint8Array(u.slice().buffer);

describe('native sweep core (src/native/sweep)', function () {
  this.timeout(120_000);

  it('answers NoDevice saying how to build it when a build directory lacks the addon', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'npuo-sweep-'));
    try {
      expect(() => loadSweepAddon(empty)).to.throw(NoDevice, /npm run build:native/);
      let e: unknown;
      await runExhaustive({ target: 'xdna2', op: 'neg', addonDir: empty }).catch((x: unknown) => { e = x; });
      expect(e).to.be.instanceOf(NoDevice);
      expect((e as NoDevice).code).to.equal('NoDevice');
      expect((e as NoDevice).message).to.include('needs only a C++ compiler');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  describe('with the addon built', () => {
    let addon: SweepAddon;
    before(function () {
      if (!built) this.skip(); // no xdna2_sweep.node in this build: `npm run build:native`
      addon = loadSweepAddon();
    });

    // Each op's inputs and the device kernel's results on them (the TypeScript core: most of this file's
    // time), computed once for both tests of the op. The inputs are in order of value, so that runs of
    // neighbours share a path and the lane routines serve most blocks; the scalar port takes them in any order.
    const references = new Map<CoreUnary, { a: Uint32Array; ts: Float32Array }>();
    const reference = (op: CoreUnary): { a: Uint32Array; ts: Float32Array } => {
      let r = references.get(op);
      if (r === undefined) {
        const a = byValue(unaryPatterns(op, SAMPLES));
        r = { a, ts: new Float32Array(unaryKernel(op, CORE_MATH, bytes(a)).buffer) };
        references.set(op, r);
      }
      return r;
    };

    for (const op of CORE_UNARY) {
      it(`${op}: the scalar port equals the device's kernel on ${2 * SAMPLES} random inputs and the edges`, () => {
        const { a, ts } = reference(op);
        const native = addon.evaluate({ op, rounded: true, a });
        const r = compare(native.got, ts, (i) => `${op}(${f32Of(a)[i]})`);
        expect(r.mismatches, r.first).to.equal(0);
      });

      it(`${op}: the lane routines (the sweep's, both kinds) equal the device's kernel on sorted random inputs`, () => {
        const { a, ts } = reference(op);
        const values = f32Of(a);
        for (const generic of [false, true]) {
          const native = addon.evaluate({ op, rounded: true, a, lanes: true, generic });
          const r = compare(native.got, ts, (i) => `${op}(${values[i]})${generic ? ' (portable lanes)' : ''}`);
          expect(r.mismatches, r.first).to.equal(0);
        }
        references.delete(op);
      });
    }

    // Every pattern within 2^19 of each place a routine changes path (and a few ordinary ones), both
    // signs: the lane routines against the scalar port, the AVX-512 ones where this CPU has them (else
    // the portable ones twice), then the portable ones.
    const AROUND: Record<string, readonly number[]> = {
      exp: [88, 1, 30, 2 ** -20], log: [Math.SQRT1_2, 1, 2 ** -126, 2 ** 127], tanh: [0.625, 9, 2, 2 ** -10],
      erf: [0.5, 4, 1.5, 2 ** -10], sqrt: [2 ** -126, 1, 2, 1e30],
    };
    for (const [op, centres] of Object.entries(AROUND)) {
      it(`${op}: both kinds of lane routines equal the scalar port on every pattern around ${centres.length} places`, () => {
        for (const generic of [false, true]) {
          for (const c of centres) {
            for (const sign of [1, -1]) {
              const from = (bitsOf(sign * c) >>> 0) - 2 ** 19;
              const r = addon.laneCheck(op, from, from + 2 ** 20, generic);
              expect(r.mismatches, `${op} around ${sign * c}${generic ? ' (portable)' : ` (${addon.isa})`}: first at 0x${r.first.toString(16)}`).to.equal(0);
              if ((op !== 'log' && op !== 'sqrt') || sign > 0) expect(r.blocks).to.be.greaterThan(0);
            }
          }
        }
      });
    }

    for (const op of CORE_BINARY) {
      it(`${op}: the port equals the device's kernel on ${SAMPLES} random pairs, cancelling pairs and the edge pairs`, () => {
        const r = rng(99 + CORE_BINARY.indexOf(op));
        const av: number[] = [];
        const bv: number[] = [];
        for (const x of EDGE_VALUES) for (const y of EDGE_VALUES) { av.push(x); bv.push(y); }
        for (let i = 0; i < SAMPLES; i++) {
          const x = randomF32(r, -126, 127);
          const k = r();
          // A third cancel or nearly (the adder's hard cases), a third far apart, a third random patterns.
          const y = k < 0.33 ? -x * uniformF32(r, 0.25, 4) : k < 0.66 ? randomF32(r, -126, 127) : new Float32Array(new Uint32Array([Math.floor(r() * 2 ** 32)]).buffer)[0]!;
          av.push(x);
          bv.push(Math.fround(y));
        }
        const a = new Uint32Array(Float32Array.from(av).buffer);
        const b = new Uint32Array(Float32Array.from(bv).buffer);
        const native = addon.evaluate({ op, rounded: true, a, b });
        const out = binaryKernel(op, CORE_MATH, bytes(a), bytes(b), a.length);
        const ts = op === 'ge' ? Float32Array.from(out) : new Float32Array(out.buffer);
        const c = compare(native.got, ts, (i) => `${op}(${av[i]}, ${bv[i]})`);
        expect(c.mismatches, c.first).to.equal(0);
      });
    }
  });
});
