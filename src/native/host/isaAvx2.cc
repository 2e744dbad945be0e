// The AVX2 path (with FMA and F16C): 8 lanes, panels of 16 columns by 6 rows (12 accumulators in 16
// ymm registers). Every function here is compiled for that target by the pragma; nothing calls it
// unless cpuid says the CPU has it (kernels.h, kernelsFor).
#include "kernels.h"

#if defined(__x86_64__)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#endif

#include <immintrin.h>

namespace host {
namespace {

struct V256 {
  using F = __m256;
  static constexpr int W = 8;
  static constexpr int NR = 16;
  static constexpr int MR = 6;
  static F zero() { return _mm256_setzero_ps(); }
  static F set1(float v) { return _mm256_set1_ps(v); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static float first(F v) { return _mm256_cvtss_f32(v); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static float sum(F v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
  static float half(uint16_t h) { return _cvtsh_ss(h); }
  static int idxType();
  // The 8 scales and 8 mins of a Q4_K super-block (docs/HOST.md, "q4_k"), times d and -dmin, into
  // out[0..8) and out[8..16): the 32-bit-word unpacking of unpackScalesK4, lane-wise.
  static __m128i k4codes(const uint8_t* s) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));  // 12 bytes used; qs follows
    const __m128i a = _mm_shuffle_epi32(w, 0x98);  // [w0, w2, w1, w2]
    const __m128i b = _mm_shuffle_epi32(w, 0x50);  // [w0, w0, w1, w1]
    const __m128i lo = _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4)),
                                     _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    const __m128i hi = _mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(b, 6), _mm_setr_epi32(0, 0x03030303, 0, 0x03030303)), 4);
    return _mm_or_si128(lo, hi);
  }
  static void k4(const uint8_t* s, float d, float mdmin, float* out) {
    const __m128i c = k4codes(s);
    _mm256_storeu_ps(out, _mm256_mul_ps(cvt8(c), _mm256_set1_ps(d)));
    _mm256_storeu_ps(out + 8, _mm256_mul_ps(cvt8(_mm_srli_si128(c, 8)), _mm256_set1_ps(mdmin)));
  }
  // The 16 int8 scales of a q6_k super-block times d, and those times -32.
  static void k6(const uint8_t* sc, float d, float* ds, float* off) {
    for (int i = 0; i < 16; i += 8) {
      const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(ld8(sc + i))), _mm256_set1_ps(d));
      _mm256_storeu_ps(ds + i, v);
      _mm256_storeu_ps(off + i, _mm256_mul_ps(v, _mm256_set1_ps(-32.f)));
    }
  }
  static constexpr bool LUT = false;  // no 16-entry permute at this width: nib2 and fma instead
  static F iota16() { return zero(); }
  static void idx2(const uint8_t*, int*, int*) {}
  static F lut(int, F t) { return t; }
  static F bhalf(const uint8_t* p) {
    short h;
    __builtin_memcpy(&h, p, 2);
    return _mm256_cvtph_ps(_mm_set1_epi16(h));
  }
  // W bytes widened once: the low nibbles are an and, the high ones a shift of the same lanes.
  static void nib2(const uint8_t* p, F* lo, F* hi) {
    const __m256i b = _mm256_cvtepu8_epi32(ld8(p));
    *lo = _mm256_cvtepi32_ps(_mm256_and_si256(b, _mm256_set1_epi32(15)));
    *hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(b, 4));
  }
  static __m128i ld8(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); }
  static F cvt8(__m128i b) { return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)); }
  static F u8(const uint8_t* p) { return cvt8(ld8(p)); }
  static F i8(const uint8_t* p) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(ld8(p))); }
  static F nlo(const uint8_t* p) { return cvt8(_mm_and_si128(ld8(p), _mm_set1_epi8(15))); }
  static F nhi(const uint8_t* p) { return cvt8(_mm_and_si128(_mm_srli_epi16(ld8(p), 4), _mm_set1_epi8(15))); }
  static F f16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static F bf16(const uint16_t* p) {
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  }
  // The four 6-bit q6_k codes of W lanes l: from ql[l], ql[l+32] and the 2-bit fields of qh[l].
  static void q6x4(const uint8_t* ql, const uint8_t* qh, F* q) {
    const __m256i a = _mm256_cvtepu8_epi32(ld8(ql));
    const __m256i b = _mm256_cvtepu8_epi32(ld8(ql + 32));
    const __m256i h = _mm256_cvtepu8_epi32(ld8(qh));
    const __m256i m0f = _mm256_set1_epi32(0x0f), m30 = _mm256_set1_epi32(0x30);
    q[0] = _mm256_cvtepi32_ps(_mm256_or_si256(_mm256_and_si256(a, m0f), _mm256_and_si256(_mm256_slli_epi32(h, 4), m30)));
    q[1] = _mm256_cvtepi32_ps(_mm256_or_si256(_mm256_and_si256(b, m0f), _mm256_and_si256(_mm256_slli_epi32(h, 2), m30)));
    q[2] = _mm256_cvtepi32_ps(_mm256_or_si256(_mm256_srli_epi32(a, 4), _mm256_and_si256(h, m30)));
    q[3] = _mm256_cvtepi32_ps(_mm256_or_si256(_mm256_srli_epi32(b, 4), _mm256_and_si256(_mm256_srli_epi32(h, 2), m30)));
  }
  // Byte j of a column holds rows 2j (low nibble) and 2j+1 (high): interleaving the two nibble
  // planes puts the 16 codes in row order.
  static void split(__m128i b, __m128i* lo, __m128i* hi) {
    *lo = _mm_and_si128(b, _mm_set1_epi8(15));
    *hi = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(15));
  }
  static void rows16(const uint8_t* p, F* c) {
    __m128i lo, hi;
    split(ld8(p), &lo, &hi);
    const __m128i u = _mm_unpacklo_epi8(lo, hi);
    c[0] = cvt8(u);
    c[1] = cvt8(_mm_srli_si128(u, 8));
  }
  static void rows16x2(const uint8_t* p, F* c0, F* c1) {
    __m128i lo, hi;
    split(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), &lo, &hi);
    const __m128i u0 = _mm_unpacklo_epi8(lo, hi);
    const __m128i u1 = _mm_unpackhi_epi8(lo, hi);
    c0[0] = cvt8(u0);
    c0[1] = cvt8(_mm_srli_si128(u0, 8));
    c1[0] = cvt8(u1);
    c1[1] = cvt8(_mm_srli_si128(u1, 8));
  }
  // q8 activations (simdQ8.inc): maddubs adds pairs of u8*s8 products into i16 (no saturation for
  // codes below 128: 2*127*128 < 2^15), madd pairs of those into i32. A q8_0 code (u = c + 128, up to
  // 255) would saturate, so `wide` takes the signed code c = u - 128 as |c| times x with c's sign, and
  // adds back 128 times the activations' sum.
  static void q8dot(const uint8_t* u, const int8_t* x, int32_t x0, int32_t x1, bool wide, int32_t* lo, int32_t* hi) {
    int32_t xw[8];
    __builtin_memcpy(xw, x, 32);
    const __m256i ones = _mm256_set1_epi16(1), flip = _mm256_set1_epi8(char(0x80));
    for (int half = 0; half < 2; half++) {
      __m256i l = _mm256_setzero_si256(), h = _mm256_setzero_si256();
      for (int q = 0; q < 8; q++) {
        const __m256i uq = _mm256_load_si256(reinterpret_cast<const __m256i*>(u + q * 64 + half * 32));
        const __m256i xq = _mm256_set1_epi32(xw[q]);
        __m256i p;
        if (wide) {
          const __m256i c = _mm256_xor_si256(uq, flip);
          p = _mm256_maddubs_epi16(_mm256_abs_epi8(c), _mm256_sign_epi8(xq, c));
        } else {
          p = _mm256_maddubs_epi16(uq, xq);
        }
        p = _mm256_madd_epi16(p, ones);
        if (q < 4) l = _mm256_add_epi32(l, p);
        else h = _mm256_add_epi32(h, p);
      }
      if (wide) {
        l = _mm256_add_epi32(l, _mm256_set1_epi32(128 * x0));
        h = _mm256_add_epi32(h, _mm256_set1_epi32(128 * x1));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo + half * 8), l);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi + half * 8), h);
    }
  }
  static constexpr bool Q8FUSED = false;
  static constexpr bool Q8QUANT = false;
  static void q8store(const float*, bool, int, float*) {}
  static bool q8quantBlock(const float*, int8_t*, float*, int32_t*, bool) { return false; }
  static constexpr bool Q8ROW1 = false;
  template <int TYPE>
  static void q8Row1(const WeightView&, int64_t, int, const int8_t*, const float*, const int32_t*, int64_t, const uint8_t*, size_t, float*) {}
  template <int TYPE, int R>
  static void q8RowsFull(const WeightView&, int64_t, const int8_t*, const float*, const int32_t*, int64_t, int64_t, int64_t, const uint8_t*, size_t,
                         float*, int64_t) {}
  template <int MODE, bool WIDE, int R, class Tile>
  static void q8acc(const Tile&, const int8_t*, const float*, const int32_t*, const int32_t*, int64_t, float*) {}
  // A tile of q4_0, q4_1 or q8_0 blocks by gathers: 32-bit word q of 8 rows' blocks at once.
  template <int TYPE, class Tile>
  static bool q8Gather(const WeightView& w, int64_t n0, int nt, int64_t b, Tile& t) {
    if constexpr (TYPE == W_Q4_0 || TYPE == W_Q4_1 || TYPE == W_Q8_0) {
      if (w.rowBytes > (size_t(1) << 26)) return false;
      constexpr int BB = TYPE == W_Q4_0 ? 18 : TYPE == W_Q4_1 ? 20
                                                              : 34;
      const uint8_t* base = w.data + size_t(n0) * w.rowBytes + size_t(b) * BB;
      t.permuted = false;
      for (int half = 0; half < 2; half++) {
        const __m256i lane = _mm256_min_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(nt - 1 - half * 8));
        const __m256i idx = _mm256_mullo_epi32(_mm256_max_epi32(lane, _mm256_setzero_si256()), _mm256_set1_epi32(int(w.rowBytes)));
        const uint8_t* hb = base + (nt > half * 8 ? size_t(half * 8) * w.rowBytes : 0);
        const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(nt - half * 8), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        const __m256i sd = _mm256_i32gather_epi32(reinterpret_cast<const int*>(hb), idx, 1);
        alignas(32) int32_t words[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(words), sd);
        alignas(16) uint16_t dh[8], mh[8];
        for (int i = 0; i < 8; i++) {
          dh[i] = uint16_t(words[i] & 0xffff);
          mh[i] = uint16_t(uint32_t(words[i]) >> 16);
        }
        const __m256 d = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(dh)));
        _mm256_store_ps(t.a1 + half * 8, _mm256_and_ps(d, _mm256_castsi256_ps(live)));
        if constexpr (TYPE == W_Q4_1) {
          const __m256 m = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(mh)));
          _mm256_store_ps(t.a2 + half * 8, _mm256_and_ps(m, _mm256_castsi256_ps(live)));
        } else {
          _mm256_store_ps(t.a2 + half * 8, _mm256_setzero_ps());
        }
        if constexpr (TYPE == W_Q8_0) {
          for (int q = 0; q < 8; q++) {
            const __m256i g = _mm256_i32gather_epi32(reinterpret_cast<const int*>(hb + 2 + 4 * q), idx, 1);
            _mm256_store_si256(reinterpret_cast<__m256i*>(t.u + q * 64 + half * 32), _mm256_xor_si256(g, _mm256_set1_epi32(int(0x80808080u))));
          }
        } else {
          const __m256i m = _mm256_set1_epi8(15);
          for (int q = 0; q < 4; q++) {
            const __m256i g = _mm256_i32gather_epi32(reinterpret_cast<const int*>(hb + (TYPE == W_Q4_0 ? 2 : 4) + 4 * q), idx, 1);
            _mm256_store_si256(reinterpret_cast<__m256i*>(t.u + q * 64 + half * 32), _mm256_and_si256(g, m));
            _mm256_store_si256(reinterpret_cast<__m256i*>(t.u + (q + 4) * 64 + half * 32), _mm256_and_si256(_mm256_srli_epi32(g, 4), m));
          }
        }
      }
      return true;
    }
    return false;
  }
  // exp in f64 over 4 lanes, as isaAvx512.cc's exp8 (AVX2 has no f64 -> i64 conversion: n fits in
  // 32 bits, and its exponent bits are built from an i32).
  static __m256d exp4(__m256d x) {
    x = _mm256_min_pd(_mm256_max_pd(x, _mm256_set1_pd(-110.0)), _mm256_set1_pd(90.0));
    const __m256d n = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(1.4426950408889634)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(6.93147180369123816490e-01), x);
    r = _mm256_fnmadd_pd(n, _mm256_set1_pd(1.90821492927058770002e-10), r);
    __m256d p = _mm256_set1_pd(1.0 / 39916800.0);
    const double inv[] = {1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0};
    for (double c : inv) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(c));
    const __m256i bits = _mm256_slli_epi64(_mm256_cvtepi32_epi64(_mm_add_epi32(_mm256_cvtpd_epi32(n), _mm_set1_epi32(1023))), 52);
    return _mm256_mul_pd(p, _mm256_castsi256_pd(bits));
  }
  template <class G>
  static F twoHalves(F x, G g) {
    const __m256d lo = g(_mm256_cvtps_pd(_mm256_castps256_ps128(x)));
    const __m256d hi = g(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
    const F out = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
    return _mm256_blendv_ps(out, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
  static F expd(F x) {
    return twoHalves(x, [](__m256d d) { return exp4(d); });
  }
  static F logistic(F x) {
    return twoHalves(x, [](__m256d d) {
      const __m256d ad = _mm256_andnot_pd(_mm256_set1_pd(-0.0), d);
      const __m256d e = exp4(_mm256_sub_pd(_mm256_setzero_pd(), ad));
      const __m256d one = _mm256_set1_pd(1.0);
      const __m256d pos = _mm256_div_pd(one, _mm256_add_pd(one, e));
      const __m256d neg = _mm256_div_pd(e, _mm256_add_pd(one, e));
      return _mm256_blendv_pd(neg, pos, _mm256_cmp_pd(d, _mm256_setzero_pd(), _CMP_GE_OQ));
    });
  }
  // max_ps answers its second operand for NaN and for equal values: equal lanes take a&b (+0 over
  // -0), unordered lanes a+b (a NaN).
  static F jsmax(F a, F b) {
    F m = _mm256_max_ps(a, b);
    m = _mm256_blendv_ps(m, _mm256_and_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
    return _mm256_blendv_ps(m, _mm256_add_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
  }
  static F jsmin(F a, F b) {
    F m = _mm256_min_ps(a, b);
    m = _mm256_blendv_ps(m, _mm256_or_ps(a, b), _mm256_cmp_ps(a, b, _CMP_EQ_OQ));
    return _mm256_blendv_ps(m, _mm256_add_ps(a, b), _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
  }
};

#include "simd.inc"

}  // namespace

const IsaKernels* kernelsAvx2() {
  static const IsaKernels t = makeTable<V256>(Isa::Avx2);
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
const IsaKernels* kernelsAvx2() { return nullptr; }
}  // namespace host

#endif
