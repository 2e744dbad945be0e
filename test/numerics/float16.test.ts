import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import {
  BF16_MAX, F16_MAX, bf16FromBits, bf16ToBits, f16FromBits, f16ToBits, roundBF16, roundF16, roundToDtype,
} from '../../src/numerics/float16.js';

// A second, independent implementation of both formats, built differently from float16.ts on purpose:
// f16 is decoded by assembling the f32 bit pattern with integer operations and reading it back through
// a DataView (float16.ts uses arithmetic), bf16 by arithmetic (float16.ts uses the f32 pattern), and
// rounding is a brute-force nearest search over a sorted table of every finite value (float16.ts
// scales and rounds).

const dv = new DataView(new ArrayBuffer(4));

function f32FromPattern(u: number): number {
  dv.setUint32(0, u >>> 0);
  return dv.getFloat32(0);
}

function decodeF16(p: number): number {
  const sign = (p & 0x8000) << 16;
  const e = (p >> 10) & 0x1f;
  let m = p & 0x3ff;
  if (e === 0x1f) return f32FromPattern(sign | 0x7f800000 | (m << 13));
  if (e === 0) {
    if (m === 0) return f32FromPattern(sign);
    // Normalise the subnormal: shift until the implicit bit (bit 10) appears.
    let ex = 127 - 15 + 1;
    while ((m & 0x400) === 0) { m <<= 1; ex--; }
    return f32FromPattern(sign | (ex << 23) | ((m & 0x3ff) << 13));
  }
  return f32FromPattern(sign | ((e - 15 + 127) << 23) | (m << 13));
}

function decodeBF16(p: number): number {
  const s = p & 0x8000 ? -1 : 1;
  const e = (p >> 7) & 0xff;
  const m = p & 0x7f;
  if (e === 0xff) return m === 0 ? s * Infinity : NaN;
  if (e === 0) return s * m * 2 ** -133;
  return s * (128 + m) * 2 ** (e - 134);
}

interface Format {
  readonly name: string;
  readonly decode: (p: number) => number;
  readonly fromBits: (p: number) => number;
  readonly toBits: (v: number) => number;
  readonly round: (v: number) => number;
  readonly max: number;
  readonly infPattern: number;
}

/** Every finite non-negative value with its pattern, ascending; built from the independent decoder. */
function finiteTable(f: Format): { values: Float64Array; patterns: Uint16Array } {
  const rows: [number, number][] = [];
  for (let p = 0; p < 0x8000; p++) {
    const v = f.decode(p);
    if (Number.isFinite(v)) rows.push([v, p]);
  }
  rows.sort((a, b) => a[0] - b[0]);
  return { values: Float64Array.from(rows, (r) => r[0]), patterns: Uint16Array.from(rows, (r) => r[1]) };
}

/** Round-to-nearest-even by search: the nearest table value, on a tie the one with the even pattern. */
function bruteRound(table: { values: Float64Array; patterns: Uint16Array }, v: number): number {
  if (Number.isNaN(v)) return NaN;
  const a = Math.abs(v);
  const { values, patterns } = table;
  const n = values.length;
  const top = values[n - 1]!;
  // Past the largest finite value the next "value" is top + one step (2^emax+1): overflow to infinity
  // once a reaches the midpoint, which is a tie broken towards the even (infinity's) pattern.
  const step = top - values[n - 2]!;
  let r: number;
  if (a >= top + step / 2) r = Infinity;
  else {
    let lo = 0;
    let hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (values[mid]! <= a) lo = mid; else hi = mid;
    }
    if (a >= top) r = top;
    else {
      const dl = a - values[lo]!;
      const dh = values[hi]! - a;
      if (dl < dh) r = values[lo]!;
      else if (dh < dl) r = values[hi]!;
      else r = (patterns[lo]! & 1) === 0 ? values[lo]! : values[hi]!;
    }
  }
  return v < 0 || Object.is(v, -0) ? -r : r;
}

const F16: Format = { name: 'f16', decode: decodeF16, fromBits: f16FromBits, toBits: f16ToBits, round: roundF16, max: F16_MAX, infPattern: 0x7c00 };
const BF16: Format = { name: 'bf16', decode: decodeBF16, fromBits: bf16FromBits, toBits: bf16ToBits, round: roundBF16, max: BF16_MAX, infPattern: 0x7f80 };

function same(a: number, b: number): boolean {
  return Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
}

/** A deterministic stream of doubles spread over the format's range (xorshift, no Math.random). */
function samples(count: number, minExp: number, maxExp: number): number[] {
  let s = 0x2545f491;
  const next = (): number => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return (s >>> 0) / 2 ** 32; };
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const v = (1 + next()) * 2 ** Math.floor(minExp + next() * (maxExp - minExp));
    out.push(next() < 0.5 ? -v : v);
  }
  return out;
}

for (const f of [F16, BF16]) {
  describe(`numerics/float16: ${f.name}, exhaustively`, () => {
    const table = finiteTable(f);

    it('decodes all 65,536 patterns like the independent decoder', () => {
      let bad = 0;
      for (let p = 0; p < 0x10000; p++) if (!same(f.fromBits(p), f.decode(p))) bad++;
      expect(bad).to.equal(0);
    });

    it('encodes every non-NaN value back to its pattern, NaN to a quiet NaN pattern', () => {
      const bad: number[] = [];
      for (let p = 0; p < 0x10000; p++) {
        const v = f.fromBits(p);
        if (Number.isNaN(v)) continue;
        if (f.toBits(v) !== p) bad.push(p);
      }
      expect(bad).to.deep.equal([]);
      const nanBits = f.toBits(NaN);
      expect(Number.isNaN(f.decode(nanBits))).to.equal(true);
      expect(f.toBits(-0)).to.equal(0x8000);
      expect(f.toBits(Infinity)).to.equal(f.infPattern);
    });

    it('keeps every value of the format and rounds the midpoint of every adjacent pair to the even one', () => {
      const { values, patterns } = table;
      let bad = 0;
      for (let i = 0; i < values.length; i++) {
        const v = values[i]!;
        if (!same(f.round(v), v) || !same(f.round(-v), -v)) bad++;
        if (i + 1 === values.length) break;
        const w = values[i + 1]!;
        const mid = (v + w) / 2; // exact in f64: both have far fewer than 53 significant bits
        const even = (patterns[i]! & 1) === 0 ? v : w;
        const eps = (w - v) * 2 ** -20;
        if (f.round(mid) !== even || f.round(-mid) !== -even) bad++;
        if (f.round(mid - eps) !== v || f.round(mid + eps) !== w) bad++;
        if (f.round(-(mid - eps)) !== -v || f.round(-(mid + eps)) !== -w) bad++;
      }
      expect(bad).to.equal(0);
    });

    it('rounds arbitrary doubles like the brute-force search', () => {
      const xs = f === F16 ? samples(40000, -27, 17) : samples(40000, -136, 129);
      const bad = xs.filter((x) => !same(f.round(x), bruteRound(table, x)));
      expect(bad.slice(0, 5)).to.deep.equal([]);
    });

    it('overflows at the midpoint past the largest finite value', () => {
      const { values } = table;
      const top = values[values.length - 1]!;
      expect(top).to.equal(f.max);
      const half = (top - values[values.length - 2]!) / 2;
      expect(f.round(top + half)).to.equal(Infinity);
      expect(f.round(-(top + half))).to.equal(-Infinity);
      expect(f.round(top + half * (1 - 2 ** -30))).to.equal(top);
      expect(f.round(1e300)).to.equal(Infinity);
    });
  });
}

describe('numerics/float16: named cases', () => {
  it('f16 overflow thresholds and subnormals', () => {
    expect(roundF16(65519.99)).to.equal(65504);
    expect(roundF16(65520)).to.equal(Infinity);
    expect(roundF16(-65520)).to.equal(-Infinity);
    expect(roundF16(65504 + 15.999)).to.equal(65504);
    expect(roundF16(2 ** -24)).to.equal(2 ** -24); // smallest subnormal
    expect(roundF16(2 ** -25)).to.equal(0); // halfway to 0: ties to the even pattern 0
    expect(roundF16(2 ** -25 * (1 + 2 ** -40))).to.equal(2 ** -24);
    expect(roundF16(3 * 2 ** -25)).to.equal(2 ** -23); // halfway between patterns 1 and 2: even is 2
    expect(Object.is(roundF16(-(2 ** -26)), -0)).to.equal(true);
    expect(roundF16(2 ** -14 - 2 ** -25)).to.equal(2 ** -14); // largest subnormal rounds up into the normals
    expect(f16FromBits(0x03ff)).to.equal(1023 * 2 ** -24);
    expect(f16FromBits(0x0400)).to.equal(2 ** -14);
    expect(f16ToBits(2 ** -24)).to.equal(1);
  });

  it('bf16 keeps f32 range and rounds from f64 once (no double rounding through f32)', () => {
    expect(roundBF16(BF16_MAX)).to.equal(BF16_MAX);
    expect(roundBF16(1e-40)).to.equal(2 ** -133); // 1.09 steps of the smallest subnormal
    expect(roundBF16(2 ** -133)).to.equal(2 ** -133);
    expect(roundBF16(2 ** -134)).to.equal(0);
    // 1 + 2^-8 + 2^-30: f32 first would give 1 + 2^-8 (a tie), then ties-to-even 1; once it is 1 + 2^-7.
    expect(roundBF16(1 + 2 ** -8 + 2 ** -30)).to.equal(1 + 2 ** -7);
    expect(roundToDtype('bf16', 1 + 2 ** -8 + 2 ** -30)).to.equal(1 + 2 ** -7);
    expect(roundToDtype('f16', 1 + 2 ** -11 + 2 ** -40)).to.equal(1 + 2 ** -10);
  });
});

describe('numerics/float16: against numpy', () => {
  function python(script: string, input?: Buffer): Buffer | null {
    try {
      return execFileSync('python3', ['-c', script], { input, maxBuffer: 64 << 20, stdio: ['pipe', 'pipe', 'ignore'] });
    } catch {
      return null;
    }
  }

  it('decodes all 65,536 f16 patterns like numpy.float16', function () {
    const out = python('import sys, numpy as np; sys.stdout.buffer.write(np.arange(65536, dtype=np.uint16).view(np.float16).astype("<f8").tobytes())');
    if (out === null) this.skip();
    const vals = new Float64Array(new Uint8Array(out).buffer); // copied: the Buffer may be unaligned
    expect(vals.length).to.equal(65536);
    let bad = 0;
    for (let p = 0; p < 65536; p++) if (!same(f16FromBits(p), vals[p]!)) bad++;
    expect(bad).to.equal(0);
  });

  it('rounds f64 to f16 like numpy (midpoints and arbitrary values)', function () {
    const xs: number[] = samples(20000, -27, 17);
    for (let p = 0; p < 0x7c00; p++) xs.push((f16FromBits(p) + f16FromBits(p + 1)) / 2);
    const input = Buffer.from(Float64Array.from(xs).buffer);
    const out = python('import sys, numpy as np; x = np.frombuffer(sys.stdin.buffer.read(), dtype="<f8"); sys.stdout.buffer.write(x.astype(np.float16).astype("<f8").tobytes())', input);
    if (out === null) this.skip();
    const want = new Float64Array(new Uint8Array(out).buffer);
    const bad = xs.filter((x, i) => !same(roundF16(x), want[i]!));
    expect(bad.slice(0, 5)).to.deep.equal([]);
  });
});
