import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { erf, erfc } from '../../src/numerics/erf.js';

interface RefPoint { readonly x: string; readonly erf: string; readonly erfc: string }
interface RefFile { readonly digits: number; readonly points: readonly RefPoint[] }

// Compiled tests live at <outDir>/test/numerics/, and outDir is a direct child of the repository root.
const REF = JSON.parse(readFileSync(new URL('../../../test/fixtures/erf_reference.json', import.meta.url), 'utf8')) as RefFile;

/**
 * The bounds asserted over the table. Measured: erf 0.4995 ulp (every table point correctly rounded;
 * 0.504 over 80,000 random points), erfc 0.53 ulp (0.79 over the random points).
 */
const ERF_BOUND_ULPS = 0.51;
const ERFC_BOUND_ULPS = 1;

const view = new DataView(new ArrayBuffer(8));

/** m and e with v = m * 2^e exactly, for a finite double v. */
function decompose(v: number): { m: bigint; e: number } {
  view.setFloat64(0, v);
  const bits = view.getBigUint64(0);
  const neg = bits >> 63n === 1n;
  const be = Number((bits >> 52n) & 0x7ffn);
  let m = bits & 0xfffffffffffffn;
  let e: number;
  if (be === 0) e = -1074;
  else { m |= 1n << 52n; e = be - 1075; }
  return { m: neg ? -m : m, e };
}

/** A decimal string as n * 10^q exactly. */
function parseDecimal(s: string): { n: bigint; q: number } {
  const match = /^(-?)(\d+)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(s.trim());
  if (!match) throw new Error(`not a decimal: ${s}`);
  const frac = match[3] ?? '';
  const n = BigInt((match[1] ?? '') + (match[2] ?? '') + frac);
  return { n, q: Number(match[4] ?? 0) - frac.length };
}

function ulpOfExact(exact: number, below: boolean): number {
  // The spacing of doubles at the exact value: at a power of two it is the finer one below when the
  // exact value lies below it.
  const a = Math.abs(exact);
  if (a === 0) return 2 ** -1074;
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  if (a === 2 ** e && below) e--;
  return 2 ** (Math.max(e, -1022) - 52);
}

/** |got - exact| in ulps of the exact value, computed exactly with BigInt rationals. */
function errorUlps(got: number, exactStr: string): number {
  const { n, q } = parseDecimal(exactStr);
  const nearest = Number(exactStr);
  if (n === 0n) return got === 0 ? 0 : Math.abs(got) / 2 ** -1074;
  // got - exact = G 2^g - N 10^q; bring both to a common integer scale.
  const { m: G, e: g } = decompose(got);
  const k = Math.max(0, -g);
  const t = q < 0 ? 10n ** BigInt(-q) : 1n;
  const nScaled = q < 0 ? n : n * 10n ** BigInt(q);
  const gPart = g + k >= 0 ? G * (1n << BigInt(g + k)) * t : 0n;
  const diff = gPart - nScaled * (1n << BigInt(k));
  const u = ulpOfExact(nearest, isBelow(nearest, n, q));
  const { m: U, e: ue } = decompose(u);
  // |diff| / (2^k t) / (U 2^ue) as a double with 1e-9 resolution.
  let num = (diff < 0n ? -diff : diff) * 1_000_000_000n;
  let den = t * U;
  const shift = k + ue;
  if (shift >= 0) den *= 1n << BigInt(shift);
  else num *= 1n << BigInt(-shift);
  return Number(num / den) / 1e9;
}

/** Whether the exact value n 10^q is below the double `nearest` in magnitude. */
function isBelow(nearest: number, n: bigint, q: number): boolean {
  const { m, e } = decompose(Math.abs(nearest));
  const an = n < 0n ? -n : n;
  // compare an 10^q with m 2^e
  let left = an;
  let right = m;
  if (q >= 0) left *= 10n ** BigInt(q); else right *= 10n ** BigInt(-q);
  if (e >= 0) right *= 1n << BigInt(e); else left *= 1n << BigInt(-e);
  return left < right;
}

function maxError(f: (x: number) => number, field: 'erf' | 'erfc'): { err: number; x: string } {
  let worst = { err: 0, x: '' };
  for (const p of REF.points) {
    const err = errorUlps(f(Number(p.x)), p[field]);
    if (!(err <= worst.err)) worst = { err, x: p.x };
  }
  return worst;
}

/** Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7, a typical single-precision erf. */
function erfSinglePrecision(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * Math.exp(-x * x);
  return x < 0 ? -y : y;
}

/** The same positive series as erf.ts, in plain doubles with Math.exp: a few ulps off near |x| = 2. */
function erfPlainSeries(x: number): number {
  const a = Math.abs(x);
  if (a >= 6) return Math.sign(x);
  const r = 2 * a * a;
  let t = 1;
  let s = 1;
  for (let d = 3; t > 1e-17 * s; d += 2) { t = t * r / d; s += t; }
  return Math.min(1, 1.1283791670955126 * x * Math.exp(-a * a) * s);
}

function nextUp(x: number): number {
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) + (x >= 0 ? 1n : -1n));
  return view.getFloat64(0);
}

describe('numerics/erf', () => {
  it('measures ulps exactly (self-check of the error metric)', () => {
    expect(errorUlps(1, '1')).to.equal(0);
    expect(errorUlps(1 + 2 ** -52, '1')).to.equal(1);
    expect(errorUlps(1 - 2 ** -53, '1')).to.equal(0.5); // the spacing above 1 counts, the exact value is 1
    expect(errorUlps(1, '0.99999999999999999')).to.be.closeTo(1e-17 / 2 ** -53, 1e-8); // 1e-17 below 1, spacing 2^-53 there
    expect(errorUlps(0.1, '0.1')).to.be.closeTo(0.4, 1e-6); // 0.1 is 5.55e-18 above, spacing 2^-56
    expect(errorUlps(5e-324, '0')).to.equal(1);
    // At a power of two the spacing on the exact value's side counts: 2^-54 below 0.5, 2^-53 above.
    expect(errorUlps(-0.5, '-0.49999999999999997224442438437108648940920829772949')).to.equal(0.5);
    expect(errorUlps(-0.5, '-0.50000000000000002775557561562891351059079170227051')).to.equal(0.25);
  });

  it(`erf is within ${ERF_BOUND_ULPS} ulp of the 50-digit mpmath table`, () => {
    expect(REF.points.length).to.be.greaterThan(300);
    const worst = maxError(erf, 'erf');
    expect(worst.err, `worst at x = ${worst.x}`).to.be.at.most(ERF_BOUND_ULPS);
  });

  it(`erfc is within ${ERFC_BOUND_ULPS} ulp of the table, down to its subnormal tail`, () => {
    const worst = maxError(erfc, 'erfc');
    expect(worst.err, `worst at x = ${worst.x}`).to.be.at.most(ERFC_BOUND_ULPS);
  });

  it('the table and metric catch sloppier erfs', () => {
    expect(maxError(erfSinglePrecision, 'erf').err).to.be.greaterThan(1e6);
    expect(maxError(erfPlainSeries, 'erf').err).to.be.greaterThan(ERF_BOUND_ULPS);
    // Two ulps of relative error are seen.
    expect(maxError((x) => erf(x) * (1 + 2 ** -51), 'erf').err).to.be.greaterThan(1.5);
  });

  it('has the special values', () => {
    expect(erf(NaN)).to.be.NaN;
    expect(Object.is(erf(-0), -0)).to.equal(true);
    expect(Object.is(erf(0), 0)).to.equal(true);
    expect(erf(Infinity)).to.equal(1);
    expect(erf(-Infinity)).to.equal(-1);
    expect(erf(6)).to.equal(1);
    expect(erf(5.9)).to.equal(1 - 2 ** -53);
    expect(erf(5e-324)).to.equal(5e-324); // 1.128 * 2^-1074 rounds back to 2^-1074
    expect(erfc(NaN)).to.be.NaN;
    expect(erfc(Infinity)).to.equal(0);
    expect(erfc(-Infinity)).to.equal(2);
    expect(erfc(0)).to.equal(1);
    expect(erfc(30)).to.equal(0);
    expect(erfc(27)).to.be.greaterThan(0);
  });

  it('is odd', () => {
    for (const p of REF.points) {
      const x = Number(p.x);
      expect(Object.is(erf(-x), -erf(x)), p.x).to.equal(true);
    }
  });

  it('is monotonic across its internal method boundaries', () => {
    for (const c of [2 ** -960, 2 ** -28, 2, 6]) {
      let x = c;
      for (let i = 0; i < 2000; i++) x = -nextUp(-x); // 2000 doubles below c
      let prev = erf(x);
      for (let i = 0; i < 4000; i++) {
        x = nextUp(x);
        const v = erf(x);
        expect(v, `erf at ${x}`).to.be.at.least(prev);
        prev = v;
      }
    }
  });
});
