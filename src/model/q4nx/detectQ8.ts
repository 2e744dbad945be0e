/**
 * Telling the two Q8 code orders apart from the data, since the file does not record which one a
 * tensor uses. Two signals, each computed for both orders on a few tiles:
 *  - full-range groups: an absmax quantizer (GGUF Q8_0, which the converters carry over code for code)
 *    puts a code of magnitude 127 in every 32-column group of a row. Read in the wrong order, a group
 *    gathers halves of two true groups, so about a quarter of groups lose their full-range code.
 *  - roughness: the energy of differences between neighbouring values (across rows and columns)
 *    relative to the values' own variance; 1 for white noise, far below 1 for a smooth matrix. The
 *    wrong order interleaves distant rows and columns, so the structure is lost.
 * Random bytes carry neither signal, and then the verdict is 'undecided'.
 */
import { TILE_COLS, TILE_ROWS, TILE_VALUES, type Q8Layout } from './chunks.js';
import { decodeQ8Tile, q8CodeByte } from './decode.js';

/** layout-a: code (r, k) at k*32 + r; layout-b: at (r/16)*4096 + k*16 + r%16. */
export type Q8Verdict = 'layout-a' | 'layout-b' | 'undecided';

/** A verdict with its score in [-1, 1] (positive favours layout a; |score| is the confidence) and its evidence. */
export interface Q8Detection {
  readonly verdict: Q8Verdict;
  readonly score: number;
  readonly method: 'data' | 'reference';
  readonly tiles: number;
  /** Share of non-zero groups holding a code of magnitude >= 126, read in each order. */
  readonly fullRange?: { readonly a: number; readonly b: number };
  /** Neighbour-difference energy over twice the variance, read in each order (1 = white noise). */
  readonly roughness?: { readonly a: number; readonly b: number };
  /** Pearson correlation of tile (0, 0) with the reference, read in each order. */
  readonly correlation?: { readonly a: number; readonly b: number };
}

/** A |score| at or above this decides. */
export const DECIDE_AT = 0.35;
/** A full-range gap of this much counts fully; the wrong order loses about 0.25. */
const FULL_RANGE_SPAN = 0.2;
/** A roughness ratio of this much counts fully. */
const ROUGH_SPAN = Math.log(4);
/** Fewer non-zero groups than this leave the full-range signal out: its noise would be too large. */
const MIN_GROUPS = 64;

const clamp1 = (v: number): number => Math.max(-1, Math.min(1, v));
/** A signal this weak is sampling noise (random bytes reach about 0.1), not evidence either way. */
const NOISE_FLOOR = 0.1;
const quiet = (s: number): number => (Math.abs(s) < NOISE_FLOOR ? 0 : s);

/** `n` tile indices spread evenly over `tiles` (all of them when there are no more than `n`). */
export function sampleTiles(tiles: number, n = 8): number[] {
  if (tiles <= n) return Array.from({ length: tiles }, (_, i) => i);
  return Array.from({ length: n }, (_, i) => Math.floor((i * (tiles - 1)) / (n - 1)));
}

function fullRangeShare(chunks: readonly Uint8Array[], layout: Q8Layout): { share: number; groups: number } {
  let groups = 0;
  let full = 0;
  for (const c of chunks) {
    for (let r = 0; r < TILE_ROWS; r++) {
      for (let g = 0; g < 8; g++) {
        let max = 0;
        for (let k = g * 32; k < g * 32 + 32; k++) {
          const b = c[q8CodeByte(layout, r, k)]!;
          const a = b > 127 ? 256 - b : b;
          if (a > max) max = a;
        }
        if (max === 0) continue;
        groups++;
        if (max >= 126) full++;
      }
    }
  }
  return { share: groups === 0 ? 0 : full / groups, groups };
}

function roughness(chunks: readonly Uint8Array[], layout: Q8Layout): number {
  let diff = 0;
  let pairs = 0;
  let dev = 0;
  let count = 0;
  const t = new Float32Array(TILE_VALUES);
  for (const c of chunks) {
    decodeQ8Tile(c, layout, t);
    let mean = 0;
    for (let i = 0; i < TILE_VALUES; i++) mean += t[i]!;
    mean /= TILE_VALUES;
    let v = 0;
    for (let i = 0; i < TILE_VALUES; i++) v += (t[i]! - mean) ** 2;
    // A constant tile (padding) says nothing either way; a non-finite one is not data.
    if (!(v > 0) || !Number.isFinite(v)) continue;
    let d = 0;
    for (let r = 0; r < TILE_ROWS; r++) {
      for (let k = 0; k < TILE_COLS; k++) {
        const x = t[r * TILE_COLS + k]!;
        if (k + 1 < TILE_COLS) d += (t[r * TILE_COLS + k + 1]! - x) ** 2;
        if (r + 1 < TILE_ROWS) d += (t[(r + 1) * TILE_COLS + k]! - x) ** 2;
      }
    }
    if (!Number.isFinite(d)) continue;
    diff += d;
    pairs += TILE_ROWS * (TILE_COLS - 1) + (TILE_ROWS - 1) * TILE_COLS;
    dev += v;
    count += TILE_VALUES;
  }
  return count === 0 ? NaN : diff / pairs / (2 * (dev / count));
}

function verdictOf(score: number): Q8Verdict {
  return score >= DECIDE_AT ? 'layout-a' : score <= -DECIDE_AT ? 'layout-b' : 'undecided';
}

/** Decides a Q8 tensor's code order from a few of its chunks (see the file comment for the two signals). */
export function detectQ8Layout(chunks: readonly Uint8Array[]): Q8Detection {
  const fa = fullRangeShare(chunks, 'a');
  const fb = fullRangeShare(chunks, 'b');
  const ra = roughness(chunks, 'a');
  const rb = roughness(chunks, 'b');
  const s1 = quiet(fa.groups >= MIN_GROUPS ? clamp1((fa.share - fb.share) / FULL_RANGE_SPAN) : 0);
  const s2 = quiet(ra > 0 && rb > 0 ? clamp1(Math.log(rb / ra) / ROUGH_SPAN) : 0);
  // Agreeing signals combine as independent evidence (1 - (1-|s1|)(1-|s2|)); disagreeing ones cancel,
  // and two strong signals that disagree mean the data is not what either model of it assumes.
  const agree = s1 * s2 >= 0;
  const conflict = !agree && Math.min(Math.abs(s1), Math.abs(s2)) >= 0.5;
  const score = agree ? Math.sign(s1 + s2) * (1 - (1 - Math.abs(s1)) * (1 - Math.abs(s2))) : (s1 + s2) / 2;
  return {
    verdict: conflict ? 'undecided' : verdictOf(score),
    score,
    method: 'data',
    tiles: chunks.length,
    fullRange: { a: fa.share, b: fb.share },
    roughness: { a: ra, b: rb },
  };
}

/** Pearson correlation of two equally long series (NaN when either is constant). */
export function correlation(x: ArrayLike<number>, y: ArrayLike<number>): number {
  const n = x.length;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) { mx += x[i]!; my += y[i]!; }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const a = x[i]! - mx;
    const b = y[i]! - my;
    sxy += a * b;
    sxx += a * a;
    syy += b * b;
  }
  return sxy / Math.sqrt(sxx * syy);
}

/**
 * Decides the code order of tile (0, 0) against a reference of the same weights (e.g. a GGUF,
 * dequantized): `ref(r, k)` is the reference value at row r, column k, for r < rows and k < cols.
 * The right order correlates near 1, the wrong one near 0.
 */
export function detectQ8LayoutAgainst(chunk: Uint8Array, ref: (r: number, k: number) => number, rows = TILE_ROWS, cols = TILE_COLS): Q8Detection {
  const nr = Math.min(rows, TILE_ROWS);
  const nc = Math.min(cols, TILE_COLS);
  const want = new Float64Array(nr * nc);
  for (let r = 0; r < nr; r++) for (let k = 0; k < nc; k++) want[r * nc + k] = ref(r, k);
  const corr = (layout: Q8Layout): number => {
    const t = decodeQ8Tile(chunk, layout);
    const got = new Float64Array(nr * nc);
    for (let r = 0; r < nr; r++) for (let k = 0; k < nc; k++) got[r * nc + k] = t[r * TILE_COLS + k]!;
    const c = correlation(got, want);
    return Number.isFinite(c) ? c : 0;
  };
  const a = corr('a');
  const b = corr('b');
  const score = a - b;
  const verdict: Q8Verdict = a >= 0.9 && b < 0.5 ? 'layout-a' : b >= 0.9 && a < 0.5 ? 'layout-b' : 'undecided';
  return { verdict, score: clamp1(score), method: 'reference', tiles: 1, correlation: { a, b } };
}
