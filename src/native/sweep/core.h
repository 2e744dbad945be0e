// The XDNA2 core's f32 arithmetic in C++, a line-by-line port of src/devices/xdna2/coreMath.ts and
// coreFunctions.ts for the exhaustive sweep. It must agree with the TypeScript core bit for bit
// (test/native/sweep.test.ts checks millions of inputs per function), so it keeps the TypeScript's
// shape: values are doubles that hold f32 values, every core operation rounds to f32 where the
// TypeScript calls Math.fround, and the constants are the same decimal literals rounded to f32.
// Built with -ffp-contract=off: a fused multiply-add would skip a rounding the core makes.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace sweep {

/** Math.fround: the f32 nearest to an f64, ties to even. */
inline double fround(double x) { return static_cast<double>(static_cast<float>(x)); }

inline uint32_t bitsOf(double x) {
  float f = static_cast<float>(x);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

inline double fromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return static_cast<double>(f);
}

constexpr double F32_MAX = 3.4028234663852886e38;

/**
 * The adder: the exact sum of two f32, truncated toward zero (coreMath.ts coreAdd). s + e is the exact
 * sum (TwoSum); r, the f32 nearest s, is within one unit of it, and (s - r) + e has the sign of
 * exact - r, so r is stepped one pattern toward zero when it lies beyond the exact sum. Branch-free,
 * since which way a sum rounds is a coin toss the branch predictor loses, and the special cases fall
 * out: a finite sum past F32_MAX rounds to infinity, whose pattern less one is F32_MAX (truncation never
 * overflows); an infinite or NaN sum makes d NaN, so nothing steps; a zero sum has d = 0.
 */
inline double add(double a, double b) {
  double s = a + b;
  double bb = s - a;
  double e = (a - (s - bb)) + (b - bb);
  float r = static_cast<float>(s);
  double d = (s - static_cast<double>(r)) + e;
  uint32_t rb;
  std::memcpy(&rb, &r, 4);
  uint32_t step = static_cast<uint32_t>((r > 0) & (d < 0)) | static_cast<uint32_t>((r < 0) & (d > 0));
  rb -= step;
  std::memcpy(&r, &rb, 4);
  return static_cast<double>(r);
}

inline double sub(double a, double b) { return add(a, -b); }
/** The multiplier: the f64 product of two f32 is exact, so one rounding gives the IEEE f32 product. */
inline double mul(double a, double b) { return fround(a * b); }
/** The divider: double rounding through f64 is innocuous for a quotient (coreMath.ts). */
inline double div(double a, double b) { return fround(a / b); }

/** JavaScript's Math.round: the nearest integer, ties toward +infinity, -0 for [-0.5, -0]. */
inline double jsRound(double v) {
  double f = std::floor(v);
  double r = (v - f >= 0.5) ? f + 1 : f;
  if (r == 0 && std::signbit(v)) return -0.0;
  return r;
}

inline double pow2(int n) { return std::ldexp(1.0, n); }

constexpr double EXP_CLAMP = 88;
constexpr double TANH_SATURATE = 9;
constexpr double ERF_SATURATE = 4;
constexpr uint32_t SQRT_MAGIC = 0x1fbd1df5;
constexpr int SQRT_NEWTON_STEPS = 4;
constexpr double ERF_SERIES_BELOW = 0.5;

#define F(x) static_cast<double>(static_cast<float>(x))
const double LOG2E = F(1.4426950408889634);
const double LN2_HI = F(0.693359375);
const double LN2_LO = F(-2.12194440e-4);
const double EXP_P[] = {F(1.9875691500e-4), F(1.3981999507e-3), F(8.3334519073e-3), F(4.1665795894e-2), F(1.6666665459e-1), F(5.0000001201e-1)};
const double LOG_P[] = {
    F(7.0376836292e-2),
    F(-1.1514610310e-1),
    F(1.1676998740e-1),
    F(-1.2420140846e-1),
    F(1.4249322787e-1),
    F(-1.6668057665e-1),
    F(2.0000714765e-1),
    F(-2.4999993993e-1),
    F(3.3333331174e-1),
};
const double SQRT_HALF = F(0.70710678118654752440);
const double TANH_P[] = {F(-5.70498872745e-3), F(2.06390887954e-2), F(-5.37397155531e-2), F(1.33314422036e-1), F(-3.33332819422e-1)};
const double AS_P = F(0.3275911);
const double AS_A[] = {F(1.061405429), F(-1.453152027), F(1.421413741), F(-0.284496736), F(0.254829592)};
// The series' coefficients, each computed in f64 exactly as the TypeScript does before rounding.
const double ERF_T[] = {
    F(1.0 / (720 * 13) * 1.1283791670955126),
    F(-1.0 / (120 * 11) * 1.1283791670955126),
    F(1.0 / (24 * 9) * 1.1283791670955126),
    F(-1.0 / (6 * 7) * 1.1283791670955126),
    F(1.0 / (2 * 5) * 1.1283791670955126),
    F(-1.0 / 3 * 1.1283791670955126),
    F(1.0 * 1.1283791670955126),
};
#undef F

template <size_t N>
inline double horner(const double (&cs)[N], double x) {
  double y = cs[0];
  for (size_t i = 1; i < N; i++) y = add(mul(y, x), cs[i]);
  return y;
}

inline double exp(double x0) {
  double x = x0 > EXP_CLAMP ? EXP_CLAMP : x0 < -EXP_CLAMP ? -EXP_CLAMP
                                                          : x0;
  if (std::isnan(x)) return NAN;
  double n = jsRound(mul(x, LOG2E));
  double r = sub(sub(x, mul(n, LN2_HI)), mul(n, LN2_LO));
  double z = mul(r, r);
  double y = add(add(mul(horner(EXP_P, r), z), r), 1);
  return mul(y, pow2(static_cast<int>(n)));
}

inline double log(double x) {
  if (std::isnan(x) || x < 0) return NAN;
  if (x == 0) return -INFINITY;
  if (x == INFINITY) return x;
  double v = x;
  int e = 0;
  if (v < 0x1p-126) {
    v = mul(v, pow2(24));
    e = -24;
  }
  uint32_t b = bitsOf(v);
  e += static_cast<int>((b >> 23) & 0xff) - 126;
  double m = fromBits((b & 0x7fffff) | 0x3f000000);
  if (m < SQRT_HALF) {
    e -= 1;
    m = sub(add(m, m), 1);
  } else m = sub(m, 1);
  double z = mul(m, m);
  double y = mul(mul(horner(LOG_P, m), m), z);
  y = add(y, mul(e, LN2_LO));
  y = add(y, mul(-0.5, z));
  return add(add(m, y), mul(e, LN2_HI));
}

inline double tanh(double x) {
  if (x == 0 || std::isnan(x)) return x;
  double a = std::fabs(x);
  if (a >= TANH_SATURATE) return x > 0 ? 1 : -1;
  if (a > 0.625) {
    double s = exp(add(a, a));
    double t = sub(1, div(2, add(s, 1)));
    return x > 0 ? t : -t;
  }
  double s = mul(x, x);
  return add(mul(mul(horner(TANH_P, s), s), x), x);
}

inline double erf(double x) {
  if (x == 0 || std::isnan(x)) return x;
  double a = std::fabs(x);
  if (a >= ERF_SATURATE) return x > 0 ? 1 : -1;
  if (a < ERF_SERIES_BELOW) return mul(horner(ERF_T, mul(x, x)), x);
  double t = div(1, add(1, mul(AS_P, a)));
  double tail = mul(mul(horner(AS_A, t), t), exp(-mul(a, a)));
  double r = sub(1, tail);
  return x > 0 ? r : -r;
}

inline double sqrt(double x) {
  if (x == 0) return x;
  if (!(x > 0)) return NAN;
  if (x == INFINITY) return x;
  double y = fromBits((bitsOf(x) >> 1) + SQRT_MAGIC);
  for (int i = 0; i < SQRT_NEWTON_STEPS; i++) y = mul(0.5, add(y, div(x, y)));
  return y;
}

inline double recip(double a) { return div(1, a); }

/** The comparator's key: sign-magnitude made monotonic as an unsigned integer (f32.ts orderKey). */
inline uint32_t orderKey(uint32_t b) { return (b & 0x80000000u) ? ~b : (b | 0x80000000u); }

/** max's select on patterns: b when a's key is below b's, else a (kernels.ts selectMax). */
inline uint32_t selectMax(uint32_t a, uint32_t b) { return orderKey(a) < orderKey(b) ? b : a; }

}  // namespace sweep
