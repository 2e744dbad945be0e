/**
 * Every weight type read by the kernels element for element: `dequant` (convert of a weight) and
 * `gather` (embedding rows) give exactly the f32 rounding of the independent reader's exact value
 * (reference.ts), -0 included, on random weights whose every code is drawn; an index outside the
 * table is IndexOutOfRange naming the equation, and leaves the output untouched.
 */
import { expect } from 'chai';
import { HOST_WEIGHT_TYPES } from '../../../src/compiler/host/kernelList.js';
import type { HostKernels } from '../../../src/devices/host/native.js';
import { IndexOutOfRange } from '../../../src/errors/index.js';
import { Arena, Rng, useHost } from './helpers.js';
import { randomWeight } from './reference.js';

const SHAPE = { f32: [37, 5], f16: [19, 6], bf16: [65, 3], q4_0: [96, 5], q4_1: [64, 4], q8_0: [160, 3], q4_k: [512, 3], q6_k: [256, 5], q4nx_q41: [300, 40] } as const;

/** Positions where `got` is not bit for bit the f32 of `exact` (NaN never occurs here). */
function mismatches(got: Float32Array, exact: Float64Array, from = 0): number[] {
  const bad: number[] = [];
  for (let i = 0; i < got.length; i++) if (!Object.is(got[i], Math.fround(exact[from + i]!))) bad.push(from + i);
  return bad;
}

describe('host kernels: weights element for element', function () {
  let h: HostKernels;
  before(function () { h = useHost(this); });

  for (const type of HOST_WEIGHT_TYPES) {
    it(`${type}: dequant and gather equal the independent reader exactly`, () => {
      const rng = new Rng(901 + type.charCodeAt(1));
      const [k, n] = SHAPE[type];
      const w = randomWeight(rng, type, k, n);
      const hw = h.weightFromBytes(w.bytes, type, k, n);
      const arena = new Arena((k * n + 6 * k) * 4 + 1024);
      const all = arena.alloc(k * n * 4);
      const idx = arena.putI32([n - 1, 0, Math.floor(n / 2), n - 1]);
      const rows = arena.alloc(4 * k * 4);
      const part = arena.alloc(2 * k * 4);
      h.run(arena.bytes, [
        { op: 'dequant', w: 0, row0: 0, rows: n, y: all },
        { op: 'gather', w: 0, idx, y: rows, count: 4 },
        { op: 'dequant', w: 0, row0: n - 2, rows: 2, y: part },
      ], [hw]);
      expect(mismatches(arena.f32(all, k * n), w.exact)).to.deep.equal([]);
      [n - 1, 0, Math.floor(n / 2), n - 1].forEach((r, j) => {
        expect(mismatches(arena.f32(rows + j * k * 4, k), w.exact, r * k), `gathered row ${r}`).to.deep.equal([]);
      });
      expect(mismatches(arena.f32(part, 2 * k), w.exact, (n - 2) * k)).to.deep.equal([]);
    });
  }

  it('keeps the sign of zero: a q4_0 code of 8 under a negative scale is -0', () => {
    const block = new Uint8Array(18);
    block.set([0x00, 0xbc]); // d = -1 (f16 0xbc00)
    block.fill(0x88, 2); // every code 8: (8 - 8) * -1 = -0
    const arena = new Arena(512);
    const y = arena.alloc(128);
    h.run(arena.bytes, [{ op: 'dequant', w: 0, row0: 0, rows: 1, y }], [h.weightFromBytes(block, 'q4_0', 32, 1)]);
    expect(Array.from(arena.f32(y, 32)).every((v) => Object.is(v, -0))).to.equal(true);
  });

  it('an index outside the table is IndexOutOfRange for its equation, and nothing is written', () => {
    const w = randomWeight(new Rng(3), 'q8_0', 32, 4);
    const arena = new Arena(1024);
    const idx = arena.putI32([1, 4]);
    const y = arena.alloc(2 * 32 * 4);
    arena.f32(y, 64).fill(7);
    let e: unknown;
    try {
      h.run(arena.bytes, [{ op: 'gather', eqn: 12, w: 0, idx, y, count: 2 }], [h.weightFromBytes(w.bytes, 'q8_0', 32, 4)]);
    } catch (x) { e = x; }
    expect(e).to.be.instanceOf(IndexOutOfRange);
    expect((e as IndexOutOfRange).toWire()).to.include({ code: 'IndexOutOfRange', eqn: 12, index: 4, extent: 4 });
    expect(Array.from(arena.f32(y, 64)).every((v) => v === 7)).to.equal(true);
  });
});
