// The lane routines of lanes.h on AVX-512, in f32 registers. Why this is the same arithmetic as the
// simulated core, bit for bit: the core's adder is the exact sum truncated toward zero, which is what an
// IEEE f32 add rounding toward zero computes (a finite overflow gives F32_MAX, x + (-x) is +0, an exact
// sum is unchanged), and AVX-512 embeds that rounding in the instruction, leaving MXCSR alone; mul and
// div are the IEEE f32 product and quotient rounded to nearest, as the core's are (coreMath.ts). Only
// Math.round is done in f64 lanes, where v + 0.5 is exact. FTZ and DAZ stay off (Node never sets them),
// so subnormals are the core's. test/native/sweep.test.ts checks these against core.h over whole binades.
#include "wide.h"

#include "core.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SWEEP_WIDE 1
#pragma GCC target("avx512f")
// GCC 12's AVX-512 headers trip its own uninitialized-value warning (_mm512_undefined_ps).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace sweep {

#ifdef SWEEP_WIDE

namespace {

typedef __m512 V;

constexpr int RZ = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
constexpr int RN = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

inline V c(double v) { return _mm512_set1_ps(static_cast<float>(v)); }
inline V add(V a, V b) { return _mm512_add_round_ps(a, b, RZ); }
inline V neg(V a) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(static_cast<int>(0x80000000u)))); }
inline V sub(V a, V b) { return add(a, neg(b)); }
inline V mul(V a, V b) { return _mm512_mul_round_ps(a, b, RN); }
inline V div(V a, V b) { return _mm512_div_round_ps(a, b, RN); }
inline V abs(V a) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff))); }
inline __m512i bits(V a) { return _mm512_castps_si512(a); }
inline V value(__m512i b) { return _mm512_castsi512_ps(b); }
/** t where x > 0, else -t. */
inline V sign(V x, V t) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), neg(t), t); }

template <size_t N>
inline V horner(const double (&cs)[N], V x) {
  V y = c(cs[0]);
  for (size_t i = 1; i < N; i++) y = add(mul(y, x), c(cs[i]));
  return y;
}

/** floor(v + 0.5) on 8 f64 lanes (exact: v is an f32 below 2^8), back to f32. */
inline __m256 round8(__m256 v) {
  __m512d w = _mm512_add_pd(_mm512_cvtps_pd(v), _mm512_set1_pd(0.5));
  return _mm512_cvtpd_ps(_mm512_roundscale_pd(w, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
}

/** Math.round on every lane, -0 for a zero from a negative input. */
inline V jsRound(V v) {
  __m256 lo = round8(_mm512_castps512_ps256(v));
  __m256 hi = round8(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  V n = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
  __mmask16 zero = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_EQ_OQ);
  return _mm512_mask_blend_ps(zero, n, _mm512_mul_ps(v, _mm512_setzero_ps()));
}

/** 2^n for whole n in [-127, 127]: the exponent field, and 2^-127's subnormal pattern. */
inline V pow2(V n) {
  __m512i k = _mm512_cvtps_epi32(n);
  __m512i p = _mm512_slli_epi32(_mm512_add_epi32(k, _mm512_set1_epi32(127)), 23);
  __mmask16 sub = _mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(-127));
  return value(_mm512_mask_blend_epi32(sub, p, _mm512_set1_epi32(0x00400000)));
}

V exp(V x) {
  V n = jsRound(mul(x, c(LOG2E)));
  V r = sub(sub(x, mul(n, c(LN2_HI))), mul(n, c(LN2_LO)));
  V z = mul(r, r);
  V y = add(add(mul(horner(EXP_P, r), z), r), c(1));
  return mul(y, pow2(n));
}

V log(V x) {
  __m512i b = bits(x);
  V e = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(b, 23), _mm512_set1_epi32(0xff))), c(126));
  V m = value(_mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi32(0x7fffff)), _mm512_set1_epi32(0x3f000000)));
  __mmask16 low = _mm512_cmp_ps_mask(m, c(SQRT_HALF), _CMP_LT_OQ);
  e = _mm512_mask_blend_ps(low, e, _mm512_sub_ps(e, c(1)));
  m = sub(_mm512_mask_blend_ps(low, m, add(m, m)), c(1));
  V z = mul(m, m);
  V y = mul(mul(horner(LOG_P, m), m), z);
  y = add(y, mul(e, c(LN2_LO)));
  y = add(y, mul(c(-0.5), z));
  return add(add(m, y), mul(e, c(LN2_HI)));
}

V sqrt(V x) {
  V y = value(_mm512_add_epi32(_mm512_srli_epi32(bits(x), 1), _mm512_set1_epi32(static_cast<int>(SQRT_MAGIC))));
  for (int i = 0; i < SQRT_NEWTON_STEPS; i++) y = mul(c(0.5), add(y, div(x, y)));
  return y;
}

V tanh(int k, V x) {
  if (k == 0) {
    V a = abs(x);
    V s = exp(add(a, a));
    return sign(x, sub(c(1), div(c(2), add(s, c(1)))));
  }
  V s = mul(x, x);
  return add(mul(mul(horner(TANH_P, s), s), x), x);
}

V erf(int k, V x) {
  if (k == 0) return mul(horner(ERF_T, mul(x, x)), x);
  V a = abs(x);
  V t = div(c(1), add(c(1), mul(c(AS_P), a)));
  V tail = mul(mul(horner(AS_A, t), t), exp(neg(mul(a, a))));
  return sign(x, sub(c(1), tail));
}

}  // namespace

bool wideAvailable() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

bool coreWide(Op op, int regime, const float* x, float* got) {
  V v = _mm512_loadu_ps(x);
  V r;
  switch (op) {
    case Op::Exp: r = exp(v); break;
    case Op::Log: r = log(v); break;
    case Op::Sqrt: r = sqrt(v); break;
    case Op::Tanh: r = tanh(regime, v); break;
    case Op::Erf: r = erf(regime, v); break;
    default: return false;
  }
  _mm512_storeu_ps(got, r);
  return true;
}

#else

bool wideAvailable() { return false; }
bool coreWide(Op, int, const float*, float*) { return false; }

#endif

}  // namespace sweep
