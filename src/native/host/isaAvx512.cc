// The AVX-512 path (F, BW, DQ, VL and VNNI, with FMA and F16C): 16 lanes, panels of 32 columns by 6 rows (12
// accumulators in 32 zmm registers). Compiled for that target by the pragma; nothing calls it unless
// cpuid says the CPU has it (kernels.h, kernelsFor).
#include "kernels.h"

#if defined(__x86_64__)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx2,fma,f16c")
// GCC 12's own avx512fintrin.h trips these on its _mm512_undefined_* placeholders.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

namespace host {
namespace {

// simdDecode.inc's, defined there (after this struct).
inline void unpackScalesK4(const uint8_t* s, uint8_t* out);

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
  // sum() of each of 8 vectors at once, the same halving tree per vector (lanes l and l + 8, then
  // l + 4, l + 2, l + 1): out[i] = sum(a[i]) bit for bit, with the shuffles shared.
  static void sum8(const F* a, float* out) {
    F t[4], u[2];
    for (int i = 0; i < 4; i++) {
      // [a2i lanes 0-7 + 8-15 | a2i+1 the same]
      t[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x44), _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xEE));
    }
    for (int i = 0; i < 2; i++) {
      // four sources' lanes 0-3 + 4-7, one 128-bit block each
      u[i] = _mm512_add_ps(_mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], 0x88), _mm512_shuffle_f32x4(t[2 * i], t[2 * i + 1], 0xDD));
    }
    // block k: [a_k 0+2, a_k 1+3, a_k+4 0+2, a_k+4 1+3]
    const F v = _mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_ps(u[0], u[1], _MM_SHUFFLE(3, 2, 3, 2)));
    // block k: [sum a_k, sum a_k+4, ...]
    const F w = _mm512_add_ps(_mm512_shuffle_ps(v, v, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_ps(v, v, _MM_SHUFFLE(3, 1, 3, 1)));
    alignas(64) float l[16];
    _mm512_store_ps(l, w);
    for (int k = 0; k < 4; k++) {
      out[k] = l[4 * k];
      out[k + 4] = l[4 * k + 1];
    }
  }
  static float half(uint16_t h) { return _cvtsh_ss(h); }
  static F bhalf(const uint8_t* p) {
    short h;
    __builtin_memcpy(&h, p, 2);
    return _mm512_cvtph_ps(_mm256_set1_epi16(h));
  }
  // A 16-entry table of f32 values, indexed by the low 4 bits of 32-bit lanes (vpermps ignores the
  // rest): one permute turns a nibble into its dequantized value.
  static __m512i idxType();
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
    const __m512 scale = _mm512_mask_blend_ps(0xff00, _mm512_set1_ps(d), _mm512_set1_ps(mdmin));
    _mm512_storeu_ps(out, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(k4codes(s))), scale));
  }
  // The 16 int8 scales of a q6_k super-block times d, and those times -32.
  static void k6(const uint8_t* sc, float d, float* ds, float* off) {
    const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(ld16(sc))), _mm512_set1_ps(d));
    _mm512_storeu_ps(ds, v);
    _mm512_storeu_ps(off, _mm512_mul_ps(v, _mm512_set1_ps(-32.f)));
  }
  static constexpr bool LUT = true;
  static F iota16() { return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
  static void idx2(const uint8_t* p, __m512i* lo, __m512i* hi) {
    *lo = _mm512_cvtepu8_epi32(ld16(p));
    *hi = _mm512_srli_epi32(*lo, 4);
  }
  static F lut(__m512i idx, F table) { return _mm512_permutexvar_ps(idx, table); }
  // W bytes widened once: the low nibbles are an and, the high ones a shift of the same lanes.
  static void nib2(const uint8_t* p, F* lo, F* hi) {
    const __m512i b = _mm512_cvtepu8_epi32(ld16(p));
    *lo = _mm512_cvtepi32_ps(_mm512_and_si512(b, _mm512_set1_epi32(15)));
    *hi = _mm512_cvtepi32_ps(_mm512_srli_epi32(b, 4));
  }
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
  // The four 6-bit q6_k codes of W lanes l (docs/HOST.md, q6_k): from ql[l], ql[l+32] and the 2-bit
  // fields of qh[l], unsubtracted (0..63).
  static void q6x4(const uint8_t* ql, const uint8_t* qh, F* q) {
    const __m512i a = _mm512_cvtepu8_epi32(ld16(ql));
    const __m512i b = _mm512_cvtepu8_epi32(ld16(ql + 32));
    const __m512i h = _mm512_cvtepu8_epi32(ld16(qh));
    const __m512i m0f = _mm512_set1_epi32(0x0f), m30 = _mm512_set1_epi32(0x30);
    // 0xe4 selects (A & C) | (B & ~C): the low nibble from A, bits 4-5 from B.
    q[0] = _mm512_cvtepi32_ps(_mm512_ternarylogic_epi32(a, _mm512_and_si512(_mm512_slli_epi32(h, 4), m30), m0f, 0xe4));
    q[1] = _mm512_cvtepi32_ps(_mm512_ternarylogic_epi32(b, _mm512_and_si512(_mm512_slli_epi32(h, 2), m30), m0f, 0xe4));
    q[2] = _mm512_cvtepi32_ps(_mm512_or_si512(_mm512_srli_epi32(a, 4), _mm512_and_si512(h, m30)));
    q[3] = _mm512_cvtepi32_ps(_mm512_or_si512(_mm512_srli_epi32(b, 4), _mm512_and_si512(_mm512_srli_epi32(h, 2), m30)));
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
  // q8 activations (simdQ8.inc), with AVX512-VNNI: vpdpbusd adds four u8*s8 products per lane.
  static void q8dot(const uint8_t* u, const int8_t* x, int32_t, int32_t, bool, int32_t* lo, int32_t* hi) {
    int32_t xw[8];
    __builtin_memcpy(xw, x, 32);
    __m512i l = _mm512_setzero_si512(), h = _mm512_setzero_si512();
    for (int q = 0; q < 4; q++) l = _mm512_dpbusd_epi32(l, _mm512_load_si512(u + q * 64), _mm512_set1_epi32(xw[q]));
    for (int q = 4; q < 8; q++) h = _mm512_dpbusd_epi32(h, _mm512_load_si512(u + q * 64), _mm512_set1_epi32(xw[q]));
    _mm512_store_si512(lo, l);
    _mm512_store_si512(hi, h);
  }
  // q8dot and simdQ8.inc's accumulation of one row fused: the same operations lane by lane (MODE as
  // Q8Mode: 0 one term with an offset, 1 a second term of the activations' sum, 2 two half terms).
  static constexpr bool Q8FUSED = true;
  // acc + the 4 products u*x of each 32-bit lane, x's 4 codes broadcast by the instruction's own
  // memory operand ({1to16}: a load, no shuffle-unit operation as a separate broadcast costs on Zen 4).
  static __m512i dpw(__m512i acc, __m512i u, const int8_t* x) {
    __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(u), "m"(*reinterpret_cast<const int32_t*>(x)));
    return acc;
  }
  // R activation rows against one tile block: row r's codes at x + r*rs*32, its scale xd[r*rs], its
  // half sums xs[r*rs*2 ..] (mode 0: its offset term xc[r*rs]), its accumulator o + r*16. The tile's
  // codes are loaded once for the R rows and the rows' chains interleaved (integer additions, exact in
  // any order; in mode 0 one chain per row, starting from the offset term, so I1 needs no subtraction).
  // The float steps are simdQ8.inc's, lane by lane, for each row.
  template <int MODE, bool WIDE, int R, class Tile>
  static void q8acc(const Tile& t, const int8_t* x, const float* xd, const int32_t* xs, const int32_t* xc, int64_t rs, float* o) {
    __m512i u[8];
    for (int q = 0; q < 8; q++) u[q] = _mm512_load_si512(t.u + q * 64);
    __m512i l[R], h[R];
    if constexpr (MODE == 0 && R >= 4) {
      // I1 in one chain per row, from the offset term (xc: -off*(x0 + x1), as simdQ8.inc's Q8Act.c).
      for (int r = 0; r < R; r++) l[r] = _mm512_set1_epi32(xc[r * rs]);
      for (int q = 0; q < 8; q++) {
        for (int r = 0; r < R; r++) l[r] = dpw(l[r], u[q], x + r * rs * 32 + 4 * q);
      }
    } else if constexpr (MODE == 0) {
      // Fewer rows than the chains' latency covers: two chains per row, added.
      for (int r = 0; r < R; r++) {
        l[r] = _mm512_set1_epi32(xc[r * rs]);
        h[r] = _mm512_setzero_si512();
      }
      for (int q = 0; q < 4; q++) {
        for (int r = 0; r < R; r++) {
          l[r] = dpw(l[r], u[q], x + r * rs * 32 + 4 * q);
          h[r] = dpw(h[r], u[q + 4], x + r * rs * 32 + 4 * (q + 4));
        }
      }
      for (int r = 0; r < R; r++) l[r] = _mm512_add_epi32(l[r], h[r]);
    } else {
      for (int r = 0; r < R; r++) l[r] = h[r] = _mm512_setzero_si512();
      for (int q = 0; q < 4; q++) {
        for (int r = 0; r < R; r++) l[r] = dpw(l[r], u[q], x + r * rs * 32 + 4 * q);
      }
      for (int q = 4; q < 8; q++) {
        for (int r = 0; r < R; r++) h[r] = dpw(h[r], u[q], x + r * rs * 32 + 4 * q);
      }
    }
    const __m512 a1 = _mm512_load_ps(t.a1);
    for (int r = 0; r < R; r++) {
      const __m512 dv = _mm512_set1_ps(xd[r * rs]);
      float* orow = o + r * 16;
      __m512 acc = _mm512_load_ps(orow);
      if constexpr (MODE == 0) {
        acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_cvtepi32_ps(l[r]), _mm512_mul_ps(a1, dv)));
      } else if constexpr (MODE == 1) {
        const int32_t* sr = xs + r * rs * 2;
        acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(l[r], h[r])), _mm512_mul_ps(a1, dv)));
        acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(float(sr[0] + sr[1])), _mm512_mul_ps(_mm512_load_ps(t.a2), dv)));
      } else {
        const int32_t* sr = xs + r * rs * 2;
        acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(l[r], _mm512_set1_epi32(32 * sr[0]))), _mm512_mul_ps(a1, dv)));
        acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(h[r], _mm512_set1_epi32(32 * sr[1]))), _mm512_mul_ps(_mm512_load_ps(t.a2), dv)));
      }
      _mm512_store_ps(orow, acc);
    }
  }
  // A tile's 16 accumulators to outputs y[0, nt): lane i holds output (i/4) + 4*(i%4) when permuted
  // (a permutation that is its own inverse), else output i.
  static void q8store(const float* acc, bool permuted, int nt, float* y) {
    __m512 v = _mm512_load_ps(acc);
    if (permuted) v = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), v);
    _mm512_mask_storeu_ps(y, __mmask16((1u << nt) - 1), v);
  }
  // One whole block of 32 activations to codes (simdQ8.inc's q8Quantize, lane by lane: |x| and its
  // maximum are exact in any order; d = amax/127 and each x/d are single IEEE divisions, rounded to the
  // nearest integer with ties to even as nearbyint does; the same clamp and fault). Answers false, with
  // nothing written, when a value is not finite (the caller's scalar path writes that block).
  static constexpr bool Q8QUANT = true;
  static bool q8quantBlock(const float* x, int8_t* q, float* d, int32_t* s, bool fault) {
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    const __m512 a0 = _mm512_abs_ps(v0), a1 = _mm512_abs_ps(v1);
    const __m512 big = _mm512_set1_ps(3.4028234663852886e38f);
    if ((_mm512_cmp_ps_mask(a0, big, _CMP_LE_OQ) & _mm512_cmp_ps_mask(a1, big, _CMP_LE_OQ)) != 0xffff) return false;
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
    const float db = amax / 127.f;
    __m512i c0 = _mm512_setzero_si512(), c1 = _mm512_setzero_si512();
    if (db != 0.f) {
      const __m512 dv = _mm512_set1_ps(db), lim = _mm512_set1_ps(127.f), nlim = _mm512_set1_ps(-127.f);
      const int mode = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
      __m512 r0 = _mm512_min_ps(_mm512_max_ps(_mm512_roundscale_ps(_mm512_div_ps(v0, dv), mode), nlim), lim);
      __m512 r1 = _mm512_min_ps(_mm512_max_ps(_mm512_roundscale_ps(_mm512_div_ps(v1, dv), mode), nlim), lim);
      c0 = _mm512_cvtps_epi32(r0);
      c1 = _mm512_cvtps_epi32(r1);
    }
    if (fault) {
      const __m512i top = _mm512_set1_epi32(127), one = _mm512_set1_epi32(1);
      c0 = _mm512_mask_add_epi32(c0, _mm512_cmplt_epi32_mask(c0, top), c0, one);
      c1 = _mm512_mask_add_epi32(c1, _mm512_cmplt_epi32_mask(c1, top), c1, one);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(c0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtepi32_epi8(c1));
    *d = db;
    s[0] = _mm512_reduce_add_epi32(c0);
    s[1] = _mm512_reduce_add_epi32(c1);
    return true;
  }
  // Four rows' 16 bytes (rows r, r+1, r+2, r+3 in 128-bit lanes 0-3).
  static __m512i rows4(const uint8_t* p, size_t stride, const int* r) {
    __m512i z = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + size_t(r[0]) * stride)));
    z = _mm512_inserti32x4(z, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + size_t(r[1]) * stride)), 1);
    z = _mm512_inserti32x4(z, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + size_t(r[2]) * stride)), 2);
    return _mm512_inserti32x4(z, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + size_t(r[3]) * stride)), 3);
  }
  // 16 rows' 16 bytes at p (row j at p + j*stride, rows past nt read row nt-1) as 4 vectors of one
  // 32-bit word each: q[e] lane i = word e of row (i/4) + 4*(i%4) (Q8Tile::permuted).
  static void words16x4(const uint8_t* p, size_t stride, int nt, __m512i* q) {
    int r[16];
    for (int j = 0; j < 16; j++) r[j] = j < nt ? j : nt - 1;
    const __m512i z0 = rows4(p, stride, r), z1 = rows4(p, stride, r + 4), z2 = rows4(p, stride, r + 8), z3 = rows4(p, stride, r + 12);
    const __m512i a = _mm512_unpacklo_epi32(z0, z1), b = _mm512_unpackhi_epi32(z0, z1);
    const __m512i c = _mm512_unpacklo_epi32(z2, z3), d = _mm512_unpackhi_epi32(z2, z3);
    q[0] = _mm512_unpacklo_epi64(a, c);
    q[1] = _mm512_unpackhi_epi64(a, c);
    q[2] = _mm512_unpacklo_epi64(b, d);
    q[3] = _mm512_unpackhi_epi64(b, d);
  }
  // One activation row against a tile of q4_0 or q8_0 (the decode shape): q8Gather's unpack and q8acc
  // fused, the codes kept in registers rather than stored to a tile and loaded back. The operations
  // lane by lane are q8acc's (mode 0), so the bits are the same as the general tile's.
  static constexpr bool Q8ROW1 = true;
  // q8Row1 for a whole tile of 16 rows (every tile when N is a multiple of 16): the rows at fixed
  // offsets from one pointer, so their addresses stay in registers, and no transpose. A 128-bit lane
  // holds one row's 16 code bytes: for q4_0 its low nibbles meet the block's first 16 activations and
  // its high nibbles the last 16; for q8_0 its first and its last 16 bytes do. Each of the lane's 4
  // words then sums 8 products, and the 4 words are added into one, in the lane order of words16x4
  // (lane i is row (i/4) + 4*(i%4)). Integer sums are exact in any order, so I1 is q8Row1's and the
  // float steps are q8acc's lane by lane: the same bits as the general tile's.
  // A block's 16 output sums from its four dpbusd words g[0..3] (each lane a word of 4 products).
  template <int TYPE>
  static inline __m512i tileSum(const __m512i* g, __m512i ones) {
    if constexpr (TYPE == W_Q4_0) {
      // A word's 8 products are at most 15 * 127 * 8 = 15240 in magnitude, so the words fit 16 bits
      // and two rounds of pack (never saturating) and pairwise add (vpmaddwd by 1) sum them.
      const __m512i ab = _mm512_madd_epi16(_mm512_packs_epi32(g[0], g[1]), ones);
      const __m512i cd = _mm512_madd_epi16(_mm512_packs_epi32(g[2], g[3]), ones);
      return _mm512_madd_epi16(_mm512_packs_epi32(ab, cd), ones);
    } else {
      // Up to 255 * 127 * 8 a word: 32 bits, added by two rounds of interleave and add.
      const __m512i t0 = _mm512_add_epi32(_mm512_unpacklo_epi32(g[0], g[1]), _mm512_unpackhi_epi32(g[0], g[1]));
      const __m512i t1 = _mm512_add_epi32(_mm512_unpacklo_epi32(g[2], g[3]), _mm512_unpackhi_epi32(g[2], g[3]));
      return _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1), _mm512_unpackhi_epi64(t0, t1));
    }
  }
  // acc + (sum - offset * x01) * (a1 * xd): a block's integer sums, less the codes' offset times the
  // activations' sum x01, scaled by the weight scales a1 and the activation scale xd. One form for the
  // one-row and the few-row kernels, so a row's bits are the same in either.
  template <int TYPE>
  static inline __m512 tileAcc(__m512 acc, __m512i sum, int32_t x01, __m512 a1, float xd) {
    const __m512i i1 = _mm512_sub_epi32(sum, _mm512_set1_epi32((TYPE == W_Q8_0 ? 128 : 8) * x01));
    return _mm512_add_ps(acc, _mm512_mul_ps(_mm512_cvtepi32_ps(i1), _mm512_mul_ps(a1, _mm512_set1_ps(xd))));
  }
  // Rows r, r+1, r+2, r+3's 16 bytes at p (row r's; rows s bytes apart) in lanes 0-3.
  static inline __m512i fourRows(const uint8_t* p, size_t s) {
    auto ld = [](const void* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); };
    __m512i z = _mm512_castsi128_si512(ld(p));
    z = _mm512_inserti32x4(z, ld(p + s), 1);
    z = _mm512_inserti32x4(z, ld(p + 2 * s), 2);
    return _mm512_inserti32x4(z, ld(p + 3 * s), 3);
  }
  // A block's 16 scales (of rows s bytes apart from base) in lane order: four rows' halves packed in a
  // 64-bit word by scalar shifts (ports the vector work leaves idle), then moved in as four words.
  static inline __m512 tileScales(const uint8_t* base, size_t s) {
    uint64_t sw[4];
    for (int k = 0; k < 4; k++) {
      sw[k] = uint64_t(loadU16(base + size_t(k) * s)) | uint64_t(loadU16(base + size_t(k + 4) * s)) << 16 |
              uint64_t(loadU16(base + size_t(k + 8) * s)) << 32 | uint64_t(loadU16(base + size_t(k + 12) * s)) << 48;
    }
    return _mm512_cvtph_ps(_mm256_set_epi64x(int64_t(sw[3]), int64_t(sw[2]), int64_t(sw[1]), int64_t(sw[0])));
  }
  template <int TYPE>
  static void q8Row1Full(const WeightView& w, int64_t n0, const int8_t* xq, const float* xd, const int32_t* xs, int64_t kb,
                         const uint8_t* next, size_t perBlock, float* y) {
    constexpr int BB = TYPE == W_Q4_0 ? 18 : 34;
    const size_t s = w.rowBytes;
    const uint8_t* base = w.data + size_t(n0) * s;
    const __m512i m = _mm512_set1_epi8(15);
    const __m512i flip = _mm512_set1_epi32(int(0x80808080u));
    const __m512i ones = _mm512_set1_epi16(1);
    auto ld = [](const void* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    auto four = [s](const uint8_t* p) { return fourRows(p, s); };
    __m512 acc = _mm512_set1_ps(-0.f);
    for (int64_t b = 0; b < kb; b++, base += BB) {
      if (next != nullptr) {
        for (size_t o = 0; o < perBlock; o += 64) __builtin_prefetch(next + size_t(b) * perBlock + o, 0, 2);
      }
      const __m512 a1 = tileScales(base, s);
      const __m512i xlo = _mm512_broadcast_i32x4(ld(xq + b * 32));
      const __m512i xhi = _mm512_broadcast_i32x4(ld(xq + b * 32 + 16));
      __m512i g[4];
      for (int k = 0; k < 4; k++) {
        const uint8_t* p = base + 2 + size_t(4 * k) * s;
        if constexpr (TYPE == W_Q4_0) {
          const __m512i z = four(p);
          g[k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_and_si512(z, m), xlo);
          g[k] = _mm512_dpbusd_epi32(g[k], _mm512_and_si512(_mm512_srli_epi32(z, 4), m), xhi);
        } else {
          g[k] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(four(p), flip), xlo);
          g[k] = _mm512_dpbusd_epi32(g[k], _mm512_xor_si512(four(p + 16), flip), xhi);
        }
      }
      acc = tileAcc<TYPE>(acc, tileSum<TYPE>(g, ones), xs[b * 2] + xs[b * 2 + 1], a1, xd[b]);
    }
    alignas(64) float o[16];
    _mm512_store_ps(o, acc);
    for (int j = 0; j < 16; j++) y[n0 + (j >> 2) + 4 * (j & 3)] = o[j];
  }
  // q8Row1Full for R activation rows at once (2 to 4: a decode step of a few sequences): each block's
  // 16 weight rows are loaded and unpacked once into registers and met by every row's activations,
  // so the weight is read once per tile rather than once per row. Per row the integer sum (exact in
  // any order) and the float steps are q8Row1Full's, so q8acc's lane by lane: each row's outputs are
  // the same bits as that row alone. Row r's block b is at index r*rs + b*bs (Q8Act); its outputs at
  // y + r*ldy.
  template <int TYPE, int R>
  static void q8RowsFull(const WeightView& w, int64_t n0, const int8_t* xq, const float* xd, const int32_t* xs, int64_t rs, int64_t bs,
                         int64_t kb, const uint8_t* next, size_t perBlock, float* y, int64_t ldy) {
    constexpr int BB = TYPE == W_Q4_0 ? 18 : 34;
    const size_t s = w.rowBytes;
    const uint8_t* base = w.data + size_t(n0) * s;
    const __m512i m = _mm512_set1_epi8(15);
    const __m512i flip = _mm512_set1_epi32(int(0x80808080u));
    const __m512i ones = _mm512_set1_epi16(1);
    auto ld = [](const void* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    auto four = [s](const uint8_t* p) { return fourRows(p, s); };
    __m512 acc[R];
    for (int r = 0; r < R; r++) acc[r] = _mm512_set1_ps(-0.f);
    for (int64_t b = 0; b < kb; b++, base += BB) {
      if (next != nullptr) {
        for (size_t o = 0; o < perBlock; o += 64) __builtin_prefetch(next + size_t(b) * perBlock + o, 0, 2);
      }
      const __m512 a1 = tileScales(base, s);
      // The tile's codes for the block's first and last 16 activations, unpacked once for the R rows.
      __m512i wl[4], wh[4];
      for (int k = 0; k < 4; k++) {
        const uint8_t* p = base + 2 + size_t(4 * k) * s;
        if constexpr (TYPE == W_Q4_0) {
          const __m512i z = four(p);
          wl[k] = _mm512_and_si512(z, m);
          wh[k] = _mm512_and_si512(_mm512_srli_epi32(z, 4), m);
        } else {
          wl[k] = _mm512_xor_si512(four(p), flip);
          wh[k] = _mm512_xor_si512(four(p + 16), flip);
        }
      }
      for (int r = 0; r < R; r++) {
        const int64_t at = r * rs + b * bs;
        const __m512i xlo = _mm512_broadcast_i32x4(ld(xq + at * 32));
        const __m512i xhi = _mm512_broadcast_i32x4(ld(xq + at * 32 + 16));
        __m512i g[4];
        for (int k = 0; k < 4; k++) g[k] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), wl[k], xlo), wh[k], xhi);
        acc[r] = tileAcc<TYPE>(acc[r], tileSum<TYPE>(g, ones), xs[at * 2] + xs[at * 2 + 1], a1, xd[at]);
      }
    }
    for (int r = 0; r < R; r++) {
      alignas(64) float o[16];
      _mm512_store_ps(o, acc[r]);
      for (int j = 0; j < 16; j++) y[r * ldy + n0 + (j >> 2) + 4 * (j & 3)] = o[j];
    }
  }
  template <int TYPE>
  static void q8Row1(const WeightView& w, int64_t n0, int nt, const int8_t* xq, const float* xd, const int32_t* xs, int64_t kb,
                     const uint8_t* next, size_t perBlock, float* y) {
    if (nt == 16) return q8Row1Full<TYPE>(w, n0, xq, xd, xs, kb, next, perBlock, y);
    constexpr int BB = TYPE == W_Q4_0 ? 18 : 34;
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i row = _mm512_add_epi32(_mm512_srli_epi32(iota, 2), _mm512_slli_epi32(_mm512_and_si512(iota, _mm512_set1_epi32(3)), 2));
    const __mmask16 live = _mm512_cmplt_epi32_mask(row, _mm512_set1_epi32(nt));
    int rowOf[16];
    for (int j = 0; j < 16; j++) rowOf[j] = std::min((j >> 2) + 4 * (j & 3), nt - 1);
    const uint8_t* base = w.data + size_t(n0) * w.rowBytes;
    const __m512i m = _mm512_set1_epi8(15);
    const __m512i flip = _mm512_set1_epi32(int(0x80808080u));
    __m512 acc = _mm512_set1_ps(-0.f);
    for (int64_t b = 0; b < kb; b++, base += BB) {
      if (next != nullptr) {
        for (size_t o = 0; o < perBlock; o += 64) __builtin_prefetch(next + size_t(b) * perBlock + o, 0, 2);
      }
      // The 16 scales by plain loads (a gather is slower here), in the permuted lane order.
      alignas(32) uint16_t sc[16];
      for (int j = 0; j < 16; j++) sc[j] = loadU16(base + size_t(rowOf[j]) * w.rowBytes);
      const __m512 a1 = _mm512_maskz_mov_ps(live, _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc))));
      int32_t xw[8];
      __builtin_memcpy(xw, xq + b * 32, 32);
      __m512i l = _mm512_setzero_si512(), h = _mm512_setzero_si512();
      __m512i q[4];
      if constexpr (TYPE == W_Q4_0) {
        words16x4(base + 2, w.rowBytes, nt, q);
        for (int e = 0; e < 4; e++) {
          l = _mm512_dpbusd_epi32(l, _mm512_and_si512(q[e], m), _mm512_set1_epi32(xw[e]));
          h = _mm512_dpbusd_epi32(h, _mm512_and_si512(_mm512_srli_epi32(q[e], 4), m), _mm512_set1_epi32(xw[4 + e]));
        }
      } else {
        words16x4(base + 2, w.rowBytes, nt, q);
        for (int e = 0; e < 4; e++) l = _mm512_dpbusd_epi32(l, _mm512_xor_si512(q[e], flip), _mm512_set1_epi32(xw[e]));
        words16x4(base + 18, w.rowBytes, nt, q);
        for (int e = 0; e < 4; e++) h = _mm512_dpbusd_epi32(h, _mm512_xor_si512(q[e], flip), _mm512_set1_epi32(xw[4 + e]));
      }
      const int32_t x01 = xs[b * 2] + xs[b * 2 + 1];
      const __m512i i1 = _mm512_sub_epi32(_mm512_add_epi32(l, h), _mm512_set1_epi32((TYPE == W_Q8_0 ? 128 : 8) * x01));
      acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_cvtepi32_ps(i1), _mm512_mul_ps(a1, _mm512_set1_ps(xd[b]))));
    }
    alignas(64) float o[16];
    _mm512_store_ps(o, acc);
    for (int j = 0; j < 16; j++) {
      const int r = (j >> 2) + 4 * (j & 3);
      if (r < nt) y[n0 + r] = o[j];
    }
  }
  // A tile of q4_0, q4_1 or q8_0 blocks: the codes by loads and unpacks (permuted lanes), the scales
  // by one gather.
  template <int TYPE, class Tile>
  static bool q8Gather(const WeightView& w, int64_t n0, int nt, int64_t b, Tile& t) {
    if constexpr (TYPE == W_Q4_0 || TYPE == W_Q4_1 || TYPE == W_Q8_0) {
      if (w.rowBytes > (size_t(1) << 26)) return false;
      constexpr int BB = TYPE == W_Q4_0 ? 18 : TYPE == W_Q4_1 ? 20
                                                              : 34;
      const uint8_t* base = w.data + size_t(n0) * w.rowBytes + size_t(b) * BB;
      // Lane i is row (i/4) + 4*(i%4), clamped to the tile's rows.
      const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
      const __m512i row = _mm512_add_epi32(_mm512_srli_epi32(iota, 2), _mm512_slli_epi32(_mm512_and_si512(iota, _mm512_set1_epi32(3)), 2));
      const __mmask16 live = _mm512_cmplt_epi32_mask(row, _mm512_set1_epi32(nt));
      const __m512i idx = _mm512_mullo_epi32(_mm512_min_epi32(row, _mm512_set1_epi32(nt - 1)), _mm512_set1_epi32(int(w.rowBytes)));
      const __m512i sd = _mm512_i32gather_epi32(idx, base, 1);
      _mm512_store_ps(t.a1, _mm512_maskz_mov_ps(live, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(sd))));
      if constexpr (TYPE == W_Q4_1) {
        _mm512_store_ps(t.a2, _mm512_maskz_mov_ps(live, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(sd, 16)))));
      } else {
        _mm512_store_ps(t.a2, _mm512_setzero_ps());
      }
      t.permuted = true;
      __m512i q[4];
      if constexpr (TYPE == W_Q8_0) {
        const __m512i flip = _mm512_set1_epi32(int(0x80808080u));
        for (int half = 0; half < 2; half++) {
          words16x4(base + 2 + 16 * half, w.rowBytes, nt, q);
          for (int e = 0; e < 4; e++) _mm512_store_si512(t.u + (half * 4 + e) * 64, _mm512_xor_si512(q[e], flip));
        }
      } else {
        const __m512i m = _mm512_set1_epi8(15);
        words16x4(base + (TYPE == W_Q4_0 ? 2 : 4), w.rowBytes, nt, q);
        for (int e = 0; e < 4; e++) {
          _mm512_store_si512(t.u + e * 64, _mm512_and_si512(q[e], m));
          _mm512_store_si512(t.u + (e + 4) * 64, _mm512_and_si512(_mm512_srli_epi32(q[e], 4), m));
        }
      }
      return true;
    }
    if constexpr (TYPE == W_Q4_K || TYPE == W_Q6_K) {
      if (w.rowBytes > (size_t(1) << 26)) return false;
      constexpr int SB = TYPE == W_Q4_K ? 144 : 210;
      const int64_t sb = b / 8;
      const int s = int(b % 8);
      const uint8_t* base = w.data + size_t(n0) * w.rowBytes + size_t(sb) * SB;
      t.permuted = true;
      if (t.sb != sb) {
        // Every sub-block's factors of the 16 lanes (lane i is row (i/4) + 4*(i%4)), once per super-block.
        t.sb = sb;
        for (int i = 0; i < 16; i++) {
          const int row = (i >> 2) + 4 * (i & 3);
          if (row >= nt) {
            for (int j = 0; j < 8; j++) t.s1[j][i] = t.s2[j][i] = 0.f;
            continue;
          }
          const uint8_t* blk = base + size_t(row) * w.rowBytes;
          if constexpr (TYPE == W_Q4_K) {
            uint8_t sm[16];
            unpackScalesK4(blk + 4, sm);
            const float d = _cvtsh_ss(loadU16(blk)), dmin = _cvtsh_ss(loadU16(blk + 2));
            for (int j = 0; j < 8; j++) {
              t.s1[j][i] = d * float(sm[j]);
              t.s2[j][i] = -(dmin * float(sm[8 + j]));
            }
          } else {
            const float d = _cvtsh_ss(loadU16(blk + 208));
            const int8_t* sc = reinterpret_cast<const int8_t*>(blk + 192);
            for (int j = 0; j < 8; j++) {
              const int h = j / 4, g = j % 4;
              t.s1[j][i] = d * float(sc[h * 8 + 2 * g]);
              t.s2[j][i] = d * float(sc[h * 8 + 2 * g + 1]);
            }
          }
        }
      }
      _mm512_store_ps(t.a1, _mm512_load_ps(t.s1[s]));
      _mm512_store_ps(t.a2, _mm512_load_ps(t.s2[s]));
      const __m512i m = _mm512_set1_epi8(15);
      __m512i q[4];
      for (int half = 0; half < 2; half++) {
        if constexpr (TYPE == W_Q4_K) {
          words16x4(base + 16 + (s / 2) * 32 + half * 16, w.rowBytes, nt, q);
          for (int e = 0; e < 4; e++) {
            const __m512i v = s & 1 ? _mm512_srli_epi32(q[e], 4) : q[e];
            _mm512_store_si512(t.u + (half * 4 + e) * 64, _mm512_and_si512(v, m));
          }
        } else {
          const int h = s / 4, g = s % 4;
          __m512i hb[4];
          words16x4(base + h * 64 + (g & 1) * 32 + half * 16, w.rowBytes, nt, q);
          words16x4(base + 128 + h * 32 + half * 16, w.rowBytes, nt, hb);
          for (int e = 0; e < 4; e++) {
            const __m512i lo = _mm512_and_si512(g < 2 ? q[e] : _mm512_srli_epi32(q[e], 4), m);
            const __m512i hi = _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(hb[e], 2 * g), _mm512_set1_epi8(3)), 4);
            _mm512_store_si512(t.u + (half * 4 + e) * 64, _mm512_or_si512(lo, hi));
          }
        }
      }
      return true;
    }
    return false;
  }
  // exp in f64 over 8 lanes: x = n ln2 + r, |r| <= ln2/2 (ln2 in two parts, so r is exact to about
  // 2^-60), e^r by its Taylor series to r^11 (truncation below 2^-52 there), scaled by 2^n through
  // the exponent bits. Inputs are clamped to [-110, 90] first: past them every f32 result is 0 or inf.
  static __m512d exp8(__m512d x) {
    x = _mm512_min_pd(_mm512_max_pd(x, _mm512_set1_pd(-110.0)), _mm512_set1_pd(90.0));
    const __m512d n = _mm512_roundscale_pd(_mm512_mul_pd(x, _mm512_set1_pd(1.4426950408889634)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(6.93147180369123816490e-01), x);
    r = _mm512_fnmadd_pd(n, _mm512_set1_pd(1.90821492927058770002e-10), r);
    __m512d p = _mm512_set1_pd(1.0 / 39916800.0);
    const double inv[] = {1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0};
    for (double c : inv) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(c));
    const __m512i bits = _mm512_slli_epi64(_mm512_add_epi64(_mm512_cvtpd_epi64(n), _mm512_set1_epi64(1023)), 52);
    return _mm512_mul_pd(p, _mm512_castsi512_pd(bits));
  }
  template <class G>
  static F twoHalves(F x, G g) {
    const __m512d lo = g(_mm512_cvtps_pd(_mm512_castps512_ps256(x)));
    const __m512d hi = g(_mm512_cvtps_pd(_mm512_extractf32x8_ps(x, 1)));
    const F out = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
    // NaN stays NaN (the clamp would have made it a number).
    return _mm512_mask_mov_ps(out, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
  }
  static F expd(F x) {
    return twoHalves(x, [](__m512d d) { return exp8(d); });
  }
  static F logistic(F x) {
    return twoHalves(x, [](__m512d d) {
      const __m512d e = exp8(_mm512_sub_pd(_mm512_setzero_pd(), _mm512_abs_pd(d)));
      const __m512d one = _mm512_set1_pd(1.0);
      // 1/(1+e) from 0 on, e/(1+e) below: one division of the lane's own numerator.
      const __m512d num = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(d, _mm512_setzero_pd(), _CMP_GE_OQ), e, one);
      return _mm512_div_pd(num, _mm512_add_pd(one, e));
    });
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
