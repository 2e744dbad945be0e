/**
 * erf and erfc in f64 (JavaScript has no Math.erf). The oracle rounds erf once to the result dtype, so
 * erf itself must be close to correctly rounded. Measured against 50-digit mpmath values
 * (test/numerics/erf.test.ts): erf within 0.51 ulp, erfc within 0.8 ulp.
 *
 * - |x| < 2^-28: erf(x) = (2/sqrt(pi)) x (1 - x^2/3), with care for subnormal results.
 * - |x| < 2: erf(x) = (2x/sqrt(pi)) * exp(-x^2) * sum_n (2x^2)^n / (1*3*...*(2n+1)). Every term is
 *   positive, so nothing cancels; the sum, exp(-x^2) and the products are carried in double-double,
 *   leaving only the final rounding.
 * - |x| >= 2: erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), the Laplace
 *   continued fraction evaluated backwards, and erf = 1 - erfc. The error of erfc shrinks by
 *   erfc/erf <= 2^-7 in erf.
 * - |x| >= 6: erfc(x) < 2^-54, so 1 - erfc(x) rounds to 1.
 *
 * exp(-x^2) is our own double-double exp: Math.exp is only faithful (up to about 1 ulp), and its
 * error would pass straight into erf. It returns 2^k * (hi + lo) so erfc keeps its precision down to
 * the subnormals instead of underflowing early.
 */

// Double-double helpers write their two results here instead of allocating a pair per call:
// erf runs once per tensor element in the oracle.
const R = new Float64Array(2);

/** Veltkamp splitter for 53-bit doubles: 2^27 + 1. */
const SPLIT = 134217729;

/** R[0] + R[1] = a + b exactly (Knuth). */
function twoSum(a: number, b: number): void {
  const s = a + b;
  const bb = s - a;
  R[1] = (a - (s - bb)) + (b - bb);
  R[0] = s;
}

/** R[0] + R[1] = a + b exactly, given |a| >= |b| (Dekker). */
function fastTwoSum(a: number, b: number): void {
  const s = a + b;
  R[1] = b - (s - a);
  R[0] = s;
}

/** R[0] + R[1] = a * b exactly, barring underflow (Dekker with Veltkamp splitting; no FMA in JS). */
function twoProd(a: number, b: number): void {
  const p = a * b;
  let t = SPLIT * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b);
  const bl = b - bh;
  R[1] = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  R[0] = p;
}

/** R[0] + R[1] = (ah + al) * (bh + bl) to about 2^-104 relative. */
function mulDD(ah: number, al: number, bh: number, bl: number): void {
  twoProd(ah, bh);
  const e = R[1]! + (ah * bl + al * bh);
  fastTwoSum(R[0]!, e);
}

// 2/sqrt(pi) and 1/sqrt(pi) as double-double pairs (computed with mpmath at 50 digits).
const C2_H = 1.1283791670955126;
const C2_L = 1.533545961316588e-17;
const C1_H = 0.5641895835477563;
const C1_L = 7.66772980658294e-18;
// ln 2 rounded to 32 significant bits, so k * LN2_H is exact for every |k| < 2^21, and the rest.
const LN2_H = 0.6931471806019545;
const LN2_L = -4.2009150726810846e-11;

// 1/n! for n = 4..16: the Taylor tail of exp on |r| <= ln(2)/2 to below 2^-64 of the result.
const INV_FACT = Float64Array.from({ length: 13 }, (_, i) => {
  let f = 1;
  for (let n = 2; n <= i + 4; n++) f *= n;
  return 1 / f;
});

// exp(-x^2) = 2^E[0] * (E[1] + E[2]), written by expNegSquare.
const E = new Float64Array(3);

/** exp(-a^2) to about 2^-62 relative, as 2^E[0] * (E[1] + E[2]); a^2 is split exactly so nothing is lost. */
function expNegSquare(a: number): void {
  twoProd(a, a);
  const sh = R[0]!;
  const sl = R[1]!;
  const k = Math.round(-sh / Math.LN2);
  // -sh - k*LN2_H is exact: k*LN2_H has at most 43 bits and lies within a factor 2 of sh (Sterbenz).
  twoSum(-sh - k * LN2_H, -sl - k * LN2_L);
  const x = R[0]!;
  const xl = R[1]!;
  // exp(x) = 1 + x + x^2/2 + x^3/6 + x^4*P(x): the first four terms in double-double, so only the
  // small tail (< 7e-4) carries ordinary rounding error.
  let p = INV_FACT[12]!;
  for (let i = 11; i >= 0; i--) p = p * x + INV_FACT[i]!;
  const x2 = x * x;
  const tail = p * x2 * x2;
  twoProd(x, x);
  const qh = R[0]! * 0.5;
  const ql = R[1]! * 0.5;
  // (ch, cl) = x^3/6 = (qh + ql) * x / 3, the quotient corrected by its exact remainder.
  twoProd(qh, x);
  const th = R[0]!;
  const tl = R[1]! + ql * x;
  const ch = th / 3;
  twoProd(ch, 3);
  const cl = ((th - R[0]!) - R[1]! + tl) / 3;
  twoSum(1, x);
  const s1 = R[0]!;
  const e1 = R[1]!;
  twoSum(s1, qh);
  const s2 = R[0]!;
  const e2 = R[1]!;
  twoSum(s2, ch);
  const low = e1 + e2 + R[1]! + ql + cl + tail + xl * (1 + x + qh);
  fastTwoSum(R[0]!, low);
  E[0] = k;
  E[1] = R[0]!;
  E[2] = R[1]!;
}

// erf(a) for 0 <= a < SERIES_MAX = 2^D[2] * (D[0] + D[1]), written by erfSeries.
const D = new Float64Array(3);

const SERIES_MAX = 2;
// 1/d for the odd d the series meets below SERIES_MAX (about 40 terms at most).
const INV = Float64Array.from({ length: 160 }, (_, d) => 1 / d);
const TINY = 2 ** -62;

/** erf(a) for 0 <= a < 2 in double-double (scaled by 2^D[2]), by the positive series. */
function erfSeries(a: number): void {
  twoProd(a, a);
  const r2h = 2 * R[0]!;
  const r2l = 2 * R[1]!;
  // S = sum_n t_n with t_{n+1} = t_n * 2a^2 / (2n+3); everything positive, summed in double-double.
  let th = 1;
  let tl = 0;
  let sh = 1;
  let sl = 0;
  // Hand-inlined double-double steps: this loop is the whole cost of erf below 2.
  let u = SPLIT * r2h;
  const rHi = u - (u - r2h);
  const rLo = r2h - rHi;
  for (let d = 3; ; d += 2) {
    // (ph, pl) = t * r2
    const ph = th * r2h;
    u = SPLIT * th;
    const tHi = u - (u - th);
    const tLo = th - tHi;
    let pl = ((tHi * rHi - ph) + tHi * rLo + tLo * rHi) + tLo * rLo;
    pl += th * r2l + tl * r2h;
    let hh = ph + pl;
    const hl = pl - (hh - ph);
    // t = (hh, hl) / d. q1 need not be the rounded quotient: the remainder hh - q1*d is exact (q1*d
    // split by Veltkamp, d < 2^26) and corrects it, so reciprocals replace two slow divisions.
    const q1 = hh * INV[d]!;
    u = SPLIT * q1;
    const qHi = u - (u - q1);
    const qLo = q1 - qHi;
    const rem = ((hh - qHi * d) - qLo * d + hl) * INV[d]!;
    th = q1 + rem;
    tl = rem - (th - q1);
    // s += t (both positive)
    hh = sh + th;
    const bb = hh - sh;
    const e = (sh - (hh - bb)) + (th - bb) + sl + tl;
    sh = hh + e;
    sl = e - (sh - hh);
    // Past the peak (ratio below 1/2) the tail after t is at most t itself.
    if (th < TINY * sh && 2 * r2h < d + 2) break;
  }
  expNegSquare(a);
  const k = E[0]!;
  const xh = E[1]!;
  const xl = E[2]!;
  mulDD(C2_H, C2_L, sh, sl);
  mulDD(R[0]!, R[1]!, xh, xl);
  const mh = R[0]!;
  const ml = R[1]!;
  twoProd(mh, a);
  D[0] = R[0]!;
  D[1] = R[1]! + ml * a;
  D[2] = k;
}

/** (1/2)/(a + 1/(a + (3/2)/(a + ...))), the continued fraction's tail below the first a, evaluated backwards. */
function cfTail(a: number): number {
  // Terms for 2^-62 relative truncation error, fitted against mpmath with a margin: about 300/a^2 + 10.
  const n = Math.ceil(320 / (a * a)) + 10;
  let t = 0;
  for (let j = n; j >= 2; j--) t = (j * 0.5) / (a + t);
  return 0.5 / (a + t);
}

/** m * 2^k with one rounding, also when the result is subnormal. */
function scale2(m: number, k: number): number {
  if (k >= -1022) return m * 2 ** k;
  // 2^k itself would underflow; go through a normal intermediate, which is exact.
  return (m * 2 ** (k + 200)) * 2 ** -200;
}

/** erfc(a) for a >= 2: exp(-a^2)/sqrt(pi) / (a + tail), the last steps in double-double (about 1 ulp). */
function erfcLarge(a: number): number {
  if (a >= 28) return 0; // erfc(27.3) is already below half the smallest subnormal
  // tail < a/8 here, so its own few-ulp error shrinks in the denominator; the sum and the division
  // are carried in double-double so they add no rounding of their own.
  twoSum(a, cfTail(a));
  const dh = R[0]!;
  const dl = R[1]!;
  expNegSquare(a);
  const k = E[0]!;
  mulDD(E[1]!, E[2]!, C1_H, C1_L);
  const mh = R[0]!;
  const ml = R[1]!;
  const q1 = mh / dh;
  twoProd(q1, dh);
  const q2 = ((mh - R[0]!) - R[1]! + ml - q1 * dl) / dh;
  return scale2(q1 + q2, k);
}

/** erf(a) for 0 < a < 2^-28: (2/sqrt(pi)) * a * (1 - a^2/3), the next term being below 2^-110. */
function erfTiny(a: number): number {
  if (a >= 2 ** -960) {
    twoProd(C2_H, a);
    return R[0]! + (R[1]! + (C2_L * a - C2_H * a * (a * a) / 3));
  }
  // The low parts of the product would underflow into the subnormals and round wrongly, so work at
  // a * 2^200 and round the result onto the (possibly subnormal) output grid by hand.
  const s = a * 2 ** 200;
  twoProd(C2_H, s);
  const h = R[0]!;
  const l = R[1]! + C2_L * s;
  let v = h * 2 ** -200;
  if (v >= 2 ** -1022) return (h + l) * 2 ** -200;
  const rest = (h - v * 2 ** 200) + l; // exact: v * 2^200 is h cut to the output grid
  if (rest > 2 ** -875) v += 2 ** -1074;
  else if (rest < -(2 ** -875)) v -= 2 ** -1074;
  return v;
}

/** The error function, within 0.51 ulp over all of f64 (erf(-0) = -0, erf(±inf) = ±1, erf(NaN) = NaN). */
export function erf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x === 0) return x;
  const a = Math.abs(x);
  let v: number;
  if (a < 2 ** -28) {
    v = erfTiny(a);
  } else if (a < SERIES_MAX) {
    erfSeries(a);
    v = (D[0]! + D[1]!) * 2 ** D[2]!;
  } else if (a < 6) {
    v = 1 - erfcLarge(a);
  } else {
    v = 1;
  }
  return x < 0 ? -v : v;
}

/** The complementary error function 1 - erf(x), within about 1 ulp, also in its subnormal tail. */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const a = Math.abs(x);
  if (a < SERIES_MAX) {
    erfSeries(a);
    const s = 2 ** D[2]!;
    const h = D[0]! * s;
    const l = D[1]! * s;
    if (x < 0) {
      twoSum(1, h);
      return R[0]! + (R[1]! + l);
    }
    // Keep 1 - h exact so the low part of erf survives the cancellation near a = 2.
    twoSum(1, -h);
    return R[0]! + (R[1]! - l);
  }
  const c = erfcLarge(a);
  return x < 0 ? 2 - c : c;
}
