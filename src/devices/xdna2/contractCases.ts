/**
 * The inputs contract verification runs each op on: edge cases that reach the ends of the op's domain
 * (the smallest and largest normals, both sides of the exp clamp, cancellations, near-ties, the
 * subnormal boundary, +-0, and +-inf and NaN, which a domain may exclude: then they only show that
 * nothing crashes) and a large random bulk, from a seeded generator so a failure can be replayed.
 * `edges: false` draws the bulk alone: the later rounds of a bulk drawn in rounds (engine/contracts/bulk.ts).
 */
import { F32_MAX, F32_MIN_NORMAL, bitsOf, fromBits } from './f32.js';
import { mulberry32 } from '../../numerics/random.js';

export const rng = mulberry32;

// The next f32 pattern away from zero, and toward it (x nonzero).
const up = (x: number) => fromBits((bitsOf(x) + 1) >>> 0);
const down = (x: number) => fromBits((bitsOf(x) - 1) >>> 0);

/** Values at the ends of the f32 range and around 1, each with both signs. */
export const EDGE_VALUES: readonly number[] = (() => {
  const pos = [
    0, F32_MIN_NORMAL, up(F32_MIN_NORMAL), down(F32_MIN_NORMAL), 2 * F32_MIN_NORMAL, F32_MAX, down(F32_MAX), F32_MAX / 2,
    1, up(1), down(1), 2 ** -24, 2 ** -23, 1.5, 3, Math.fround(1 / 3), Math.fround(Math.PI), 2 ** 64, 2 ** -64, Infinity,
  ];
  return [...pos, ...pos.map((v) => -v), NaN];
})();

/** A random f32 with a random sign, exponent in [lo, hi] and mantissa. */
export function randomF32(r: () => number, lo: number, hi: number, positive = false): number {
  const e = lo + Math.floor(r() * (hi - lo + 1));
  const m = Math.floor(r() * 2 ** 23);
  const sign = positive || r() < 0.5 ? 0 : 0x80000000;
  return fromBits((sign | ((e + 127) << 23) | m) >>> 0);
}

/** A uniform f32 in [lo, hi]. */
export function uniformF32(r: () => number, lo: number, hi: number): number {
  return Math.fround(lo + r() * (hi - lo));
}

/** Operand pairs of a binary op. */
export interface PairCase { readonly a: number[]; readonly b: number[] }

/** Every pair of edge values, plus the hand-picked cases of `extra`. */
function edgePairs(extra: readonly (readonly [number, number])[]): PairCase {
  const a: number[] = [];
  const b: number[] = [];
  for (const x of EDGE_VALUES) for (const y of EDGE_VALUES) { a.push(x); b.push(y); }
  for (const [x, y] of extra) { a.push(x); b.push(y); }
  return { a, b };
}

const NO_PAIRS = (): PairCase => ({ a: [], b: [] });

/** The adder's cases: directed-rounding ties, cancellations of every depth, the normal boundary. */
export function addCases(r: () => number, bulk: number, sub: boolean, edges = true): PairCase {
  const s = sub ? -1 : 1;
  const c = !edges ? NO_PAIRS() : edgePairs([
    [1, 3 * 2 ** -25], [1, 2 ** -24], [up(1), 2 ** -24], [-1, -3 * 2 ** -25], [F32_MAX / 2, F32_MAX / 2 * s],
    [1.5, -1.25 * s], [up(1), -1 * s], [2 * F32_MIN_NORMAL, -1.5 * F32_MIN_NORMAL * s], [F32_MIN_NORMAL, F32_MIN_NORMAL * s],
    [2 ** 100, -(2 ** -100) * s], [2 ** 60, 2 ** 20 * s], [down(F32_MAX), 2 ** 103 * s],
  ]);
  for (let i = 0; i < bulk; i++) {
    const x = randomF32(r, -40, 40);
    let y: number;
    const k = r();
    // A third cancel (the other operand's magnitude within a few binades of minus this one).
    if (k < 0.33) y = -x * s * uniformF32(r, 0.25, 4);
    else if (k < 0.5) y = randomF32(r, -40, 40) * s;
    else y = x * uniformF32(r, -2, 2);
    c.a.push(x);
    c.b.push(Math.fround(y));
  }
  return c;
}

/** Cases of mul, div, max and ge: edge pairs and random operands over a wide range. */
export function pairCases(r: () => number, bulk: number, range: number, extra: readonly (readonly [number, number])[] = [], edges = true): PairCase {
  const c = edges ? edgePairs(extra) : NO_PAIRS();
  for (let i = 0; i < bulk; i++) {
    const x = randomF32(r, -range, range);
    const k = r();
    // Some equal and neighbouring pairs for the compares.
    const y = k < 0.1 ? x : k < 0.2 ? up(x) : k < 0.25 ? -x : randomF32(r, -range, range);
    c.a.push(x);
    c.b.push(y);
  }
  return c;
}

/** Cases of a unary op: the edge values, `extra`, and `bulk` values from `gen`. */
export function unaryCases(r: () => number, bulk: number, gen: (r: () => number) => number, extra: readonly number[] = [], edges = true): number[] {
  const out = edges ? [...EDGE_VALUES, ...extra] : [];
  for (let i = 0; i < bulk; i++) out.push(gen(r));
  return out;
}

/** The argument cases of exp: both sides of the clamp and of the domain, ties of the range reduction. */
export const EXP_EXTRA = [-87, 88, -88, 88.5, -88.5, 89, 100, -100, 87.5, -87.5, Math.fround(Math.LN2 / 2), Math.fround(-Math.LN2 / 2), 1e-30, -1e-30, down(88), up(-87)];
/** The argument cases of log: the normal boundary, the split at sqrt(1/2), and 1's neighbours. */
export const LOG_EXTRA = [up(F32_MIN_NORMAL), Math.fround(Math.SQRT1_2), up(Math.fround(Math.SQRT1_2)), down(Math.fround(Math.SQRT1_2)), down(2), 2, 0.5];
/** The argument cases of tanh and erf: the branch points and the saturation thresholds. */
export const SAT_EXTRA = [0.5, 0.625, up(0.625), down(0.625), 4, down(4), 9, down(9), 3.9, 8.9, 20, 1e-20, -1e-20, 1e-38, 6, -6].flatMap((v) => [v, -v]);

/** Rows for the last-axis reductions: each group is `rows` rows of `cols` columns. */
export interface RowGroup { readonly rows: number; readonly cols: number; readonly data: number[] }

/** Groups of rows: long random rows (4096 columns), cancelling rows, non-negative rows, tiny rows. */
export function rowCases(r: () => number, bulk: number, edges = true): RowGroup[] {
  const groups: RowGroup[] = [];
  const long = (rows: number, gen: () => number): RowGroup => {
    const data: number[] = [];
    for (let i = 0; i < rows * 4096; i++) data.push(gen());
    return { rows, cols: 4096, data };
  };
  const longRows = Math.max(1, Math.floor(bulk / 4096 / 3));
  groups.push(long(longRows, () => randomF32(r, -20, 20)));
  groups.push(long(longRows, () => randomF32(r, -20, 20, true)));
  groups.push(long(longRows, () => uniformF32(r, -1, 1)));
  if (!edges) return groups;
  // Rows that cancel to a small or zero sum, and rows at the ends of the range. Every partial sum stays
  // finite: an in-order sum whose partial overflows is outside what the per-addition bound covers.
  const edge = [
    [1, -1, 2 ** -20], [F32_MAX / 2, F32_MAX / 2, -F32_MAX / 2], [-0, -0, -0], [0, -0, 0], [3 * 2 ** -25, 1, -1],
    [F32_MIN_NORMAL, F32_MIN_NORMAL, -F32_MIN_NORMAL], [1, 2 ** -24, 2 ** -24], [-Infinity, 1, 2], [Infinity, -Infinity, 0],
    [NaN, 1, 2], [F32_MAX, -F32_MAX, F32_MAX], [-1, -2, -3], [-0, 0, -Infinity],
  ];
  groups.push({ rows: edge.length, cols: 3, data: edge.flat() });
  groups.push({ rows: 5, cols: 1, data: [1, -0, Infinity, F32_MIN_NORMAL, -F32_MAX] });
  return groups;
}

/** A gather source with NaN payloads and -0 among ordinary values, and in-range indices. */
export function gatherCase(r: () => number, bulk: number, edges = true): { src: Uint32Array; idx: Int32Array } {
  const n = 1024;
  const src = new Uint32Array(n);
  for (let i = 0; i < n; i++) src[i] = Math.floor(r() * 2 ** 32) >>> 0;
  // Quiet and signalling NaNs with payloads, both zeros, infinities.
  src.set([0x7fc00001, 0xffc12345, 0x7f800001, 0xff8abcde, 0x80000000, 0x00000000, 0x7f800000, 0xff800000, 0x00000001, 0x807fffff], 0);
  // The edges read every source element once, in order; the bulk reads random ones.
  const first = edges ? n : 0;
  const idx = new Int32Array(bulk + first);
  for (let i = 0; i < first; i++) idx[i] = i;
  for (let i = first; i < idx.length; i++) idx[i] = Math.floor(r() * n);
  return { src, idx };
}
