// The AVX-512 path (F, BW, DQ, VL, with FMA and F16C): 16 lanes, panels of 32 columns by 6 rows (12
// accumulators in 32 zmm registers). Compiled for that target by the pragma; nothing calls it unless
// cpuid says the CPU has it (kernels.h, kernelsFor).
#include "kernels.h"

#if defined(__x86_64__)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")
// GCC 12's own avx512fintrin.h trips these on its _mm512_undefined_* placeholders.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

namespace host {
namespace {

struct V512 {
  using F = __m512;
  static constexpr int W = 16;
  static constexpr int NR = 32;
  static constexpr int MR = 6;
  static F zero() { return _mm512_setzero_ps(); }
  static F set1(float v) { return _mm512_set1_ps(v); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static float first(F v) { return _mm512_cvtss_f32(v); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F div(F a, F b) { return _mm512_div_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static float sum(F v) {
    __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
  static float half(uint16_t h) { return _cvtsh_ss(h); }
  static __m128i ld16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
  static F cvt16(__m128i b) { return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b)); }
  static F u8(const uint8_t* p) { return cvt16(ld16(p)); }
  static F i8(const uint8_t* p) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(ld16(p))); }
  static F nlo(const uint8_t* p) { return cvt16(_mm_and_si128(ld16(p), _mm_set1_epi8(15))); }
  static F nhi(const uint8_t* p) { return cvt16(_mm_and_si128(_mm_srli_epi16(ld16(p), 4), _mm_set1_epi8(15))); }
  static F f16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static F bf16(const uint16_t* p) {
    const __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
  static F q6(const uint8_t* ql, const uint8_t* qh, int ns, int hs) {
    const __m128i l = _mm_and_si128(_mm_srl_epi16(ld16(ql), _mm_cvtsi32_si128(ns)), _mm_set1_epi8(15));
    const __m128i h = _mm_and_si128(_mm_srl_epi16(ld16(qh), _mm_cvtsi32_si128(hs)), _mm_set1_epi8(3));
    const __m128i q = _mm_sub_epi8(_mm_or_si128(l, _mm_slli_epi16(h, 4)), _mm_set1_epi8(32));
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q));
  }
  // Byte j of a column holds rows 2j (low nibble) and 2j+1 (high): interleaving the two nibble
  // planes puts the 16 codes in row order.
  static void split(__m128i b, __m128i* lo, __m128i* hi) {
    *lo = _mm_and_si128(b, _mm_set1_epi8(15));
    *hi = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(15));
  }
  static void rows16(const uint8_t* p, F* c) {
    __m128i lo, hi;
    split(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), &lo, &hi);
    c[0] = cvt16(_mm_unpacklo_epi8(lo, hi));
  }
  static void rows16x2(const uint8_t* p, F* c0, F* c1) {
    __m128i lo, hi;
    split(ld16(p), &lo, &hi);
    c0[0] = cvt16(_mm_unpacklo_epi8(lo, hi));
    c1[0] = cvt16(_mm_unpackhi_epi8(lo, hi));
  }
  // max_ps answers its second operand for NaN and for equal values: equal lanes take a&b (+0 over
  // -0), unordered lanes a+b (a NaN).
  static F jsmax(F a, F b) {
    F m = _mm512_max_ps(a, b);
    m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), _mm512_and_ps(a, b));
    return _mm512_mask_add_ps(m, _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), a, b);
  }
  static F jsmin(F a, F b) {
    F m = _mm512_min_ps(a, b);
    m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ), _mm512_or_ps(a, b));
    return _mm512_mask_add_ps(m, _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q), a, b);
  }
};

#include "simd.inc"

}  // namespace

const IsaKernels* kernelsAvx512() {
  static const IsaKernels t = makeTable<V512>(Isa::Avx512);
  return &t;
}

}  // namespace host

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#else

namespace host {
const IsaKernels* kernelsAvx512() { return nullptr; }
}  // namespace host

#endif
