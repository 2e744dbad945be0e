// The core's routines over LANES inputs at once, for the sweep's hot loop. Every routine of core.h is
// a long chain of dependent roundings, so one input at a time leaves the CPU waiting on latency; lanes
// run independent inputs side by side (GCC's vector extensions: SIMD where the target has it, plain
// interleaved code where not). A lane routine takes one path of its scalar routine, so a block of
// inputs runs here only when every input takes that path (`regime`); otherwise core.h runs each. Each
// step is the scalar step on every lane, with the same roundings in the same order, so a lane result
// is the scalar result bit for bit; test/native/sweep.test.ts checks that over whole binades.
#pragma once

#include <cstdint>

#include "core.h"
#include "ops.h"
#include "wide.h"

namespace sweep {

constexpr int LANES = 16;

typedef double vd __attribute__((vector_size(8 * LANES)));
typedef float vf __attribute__((vector_size(4 * LANES)));
typedef uint32_t vu __attribute__((vector_size(4 * LANES)));
typedef int32_t vi __attribute__((vector_size(4 * LANES)));
typedef int64_t vl __attribute__((vector_size(8 * LANES)));

inline vd splat(double v) { return vd{} + v; }
inline vd vfround(vd x) { return __builtin_convertvector(__builtin_convertvector(x, vf), vd); }
inline vd vmul(vd a, vd b) { return vfround(a * b); }
inline vd vdiv(vd a, vd b) { return vfround(a / b); }
inline vd vsel(vl m, vd a, vd b) { return (vd)(((vl)a & m) | ((vl)b & ~m)); }

/** core.h add on every lane. */
inline vd vadd(vd a, vd b) {
  vd s = a + b;
  vd bb = s - a;
  vd e = (a - (s - bb)) + (b - bb);
  vf r = __builtin_convertvector(s, vf);
  vd rd = __builtin_convertvector(r, vd);
  vd d = (s - rd) + e;
  vl step = ((rd > 0) & (d < 0)) | ((rd < 0) & (d > 0));
  vu rb = (vu)r + (vu) __builtin_convertvector(step, vi);
  return __builtin_convertvector((vf)rb, vd);
}
inline vd vsub(vd a, vd b) { return vadd(a, -b); }

template <size_t N>
inline vd vhorner(const double (&cs)[N], vd x) {
  vd y = splat(cs[0]);
  for (size_t i = 1; i < N; i++) y = vadd(vmul(y, x), splat(cs[i]));
  return y;
}

inline vd vabs(vd x) { return (vd)((vl)x & (vl{} + 0x7fffffffffffffffLL)); }
/** t where x > 0, else -t (the sign select of tanh and erf). */
inline vd vsign(vd x, vd t) { return vsel(x > 0, t, -t); }

/** exp for |x| <= EXP_CLAMP (no clamp, no NaN). */
inline vd vexp(vd x) {
  vd v = vmul(x, splat(LOG2E));
  // Math.round(v) = floor(v + 0.5), exact for an f32 |v| < 2^8; floor by the 1.5 x 2^52 shift, and -0
  // for a zero from a negative v, as Math.round gives.
  vd w = v + 0.5;
  vd t = (w + 0x1.8p52) - 0x1.8p52;
  t = vsel(t > w, t - 1, t);
  vd n = vsel(t == 0, v * 0.0, t);
  vd r = vsub(vsub(x, vmul(n, splat(LN2_HI))), vmul(n, splat(LN2_LO)));
  vd z = vmul(r, r);
  vd y = vadd(vadd(vmul(vhorner(EXP_P, r), z), r), splat(1));
  // 2^n from its exponent field: n + 1023 sits in the low bits of n + 1023 + 2^52.
  vd p = (vd)(((vl)((n + 1023) + 0x1p52)) << 52);
  return vmul(y, p);
}

/** log for a positive normal finite x. */
inline vd vlog(vd x) {
  vu b = (vu) __builtin_convertvector(x, vf);
  vd e = __builtin_convertvector((vi)((b >> 23) & 0xffu), vd) - 126;
  vd m = __builtin_convertvector((vf)((b & 0x7fffffu) | 0x3f000000u), vd);
  vl low = m < splat(SQRT_HALF);
  e = vsel(low, e - 1, e);
  m = vsub(vsel(low, vadd(m, m), m), splat(1));
  vd z = vmul(m, m);
  vd y = vmul(vmul(vhorner(LOG_P, m), m), z);
  y = vadd(y, vmul(e, splat(LN2_LO)));
  y = vadd(y, vmul(splat(-0.5), z));
  return vadd(vadd(m, y), vmul(e, splat(LN2_HI)));
}

/** sqrt for a positive finite x. */
inline vd vsqrt(vd x) {
  vu b = (vu) __builtin_convertvector(x, vf);
  vd y = __builtin_convertvector((vf)((b >> 1) + SQRT_MAGIC), vd);
  for (int i = 0; i < SQRT_NEWTON_STEPS; i++) y = vmul(splat(0.5), vadd(y, vdiv(x, y)));
  return y;
}

/**
 * The lane routines of a unary op: regime(x) names the path of the scalar routine x takes (-1: a special
 * input, run by core.h alone), run(k, x) is path k on every lane.
 */
template <Op op>
struct Lane {
  static constexpr bool has = false;
  static int regime(double) { return -1; }
  static vd run(int, vd x) { return x; }
};

template <>
struct Lane<Op::Exp> {
  static constexpr bool has = true;
  static int regime(double x) { return x >= -EXP_CLAMP && x <= EXP_CLAMP ? 0 : -1; }
  static vd run(int, vd x) { return vexp(x); }
};

template <>
struct Lane<Op::Log> {
  static constexpr bool has = true;
  static int regime(double x) { return x >= 0x1p-126 && x < INFINITY ? 0 : -1; }
  static vd run(int, vd x) { return vlog(x); }
};

template <>
struct Lane<Op::Sqrt> {
  static constexpr bool has = true;
  static int regime(double x) { return x > 0 && x < INFINITY ? 0 : -1; }
  static vd run(int, vd x) { return vsqrt(x); }
};

template <>
struct Lane<Op::Tanh> {
  static constexpr bool has = true;
  static int regime(double x) {
    double a = std::fabs(x);
    return a > 0.625 && a < TANH_SATURATE ? 0 : a > 0 && a <= 0.625 ? 1
                                                                    : -1;
  }
  static vd run(int k, vd x) {
    if (k == 0) {
      vd a = vabs(x);
      vd s = vexp(vadd(a, a));
      return vsign(x, vsub(splat(1), vdiv(splat(2), vadd(s, splat(1)))));
    }
    vd s = vmul(x, x);
    return vadd(vmul(vmul(vhorner(TANH_P, s), s), x), x);
  }
};

template <>
struct Lane<Op::Erf> {
  static constexpr bool has = true;
  static int regime(double x) {
    double a = std::fabs(x);
    return a > 0 && a < ERF_SERIES_BELOW ? 0 : a >= ERF_SERIES_BELOW && a < ERF_SATURATE ? 1
                                                                                         : -1;
  }
  static vd run(int k, vd x) {
    if (k == 0) return vmul(vhorner(ERF_T, vmul(x, x)), x);
    vd a = vabs(x);
    vd t = vdiv(splat(1), vadd(splat(1), vmul(splat(AS_P), a)));
    vd tail = vmul(vmul(vhorner(AS_A, t), t), vexp(-vmul(a, a)));
    return vsign(x, vsub(splat(1), tail));
  }
};

/** The regime every one of `n` inputs takes, or -1 when they differ or one is special. */
template <Op op>
inline int blockRegime(const double* x, int n) {
  int k = Lane<op>::regime(x[0]);
  for (int i = 1; i < n && k >= 0; i++) {
    if (Lane<op>::regime(x[i]) != k) k = -1;
  }
  return k;
}

static_assert(LANES == 16, "the wide routines (wide.cc) take 16 f32 lanes");

/**
 * The core's results of a unary op on LANES inputs: the lane routine when one path serves them all, on
 * AVX-512 when `wide` (the caller has checked wideAvailable()), else core.h on each input.
 */
template <Op op>
inline void coreBlock(const uint32_t* xb, const double* x, double* got, bool wide) {
  if constexpr (Lane<op>::has) {
    int k = blockRegime<op>(x, LANES);
    if (k >= 0 && wide) {
      float xf[LANES];
      float g[LANES];
      for (int i = 0; i < LANES; i++) xf[i] = static_cast<float>(x[i]);
      coreWide(op, k, xf, g);
      for (int i = 0; i < LANES; i++) got[i] = g[i];
      return;
    }
    if (k >= 0) {
      vd v;
      for (int i = 0; i < LANES; i++) v[i] = x[i];
      vd r = Lane<op>::run(k, v);
      for (int i = 0; i < LANES; i++) got[i] = r[i];
      return;
    }
  }
  for (int i = 0; i < LANES; i++) got[i] = coreUnary<op>(xb[i], x[i]);
}

}  // namespace sweep
