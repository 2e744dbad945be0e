// The portable path: plain C++ over one lane, compiled for the build's baseline. Its "fma" rounds the
// product and then the sum (no FMA instruction is assumed), which the bound of docs/HOST.md covers.
#include <cmath>
#include <cstring>

#include "kernels.h"

namespace host {
namespace {

struct VScalar {
  using F = float;
  static constexpr int W = 1;
  static constexpr int NR = 8;
  static constexpr int MR = 4;
  static F zero() { return 0.f; }
  static F set1(float v) { return v; }
  static F load(const float* p) { return *p; }
  static void store(float* p, F v) { *p = v; }
  static float first(F v) { return v; }
  static F add(F a, F b) { return a + b; }
  static F sub(F a, F b) { return a - b; }
  static F mul(F a, F b) { return a * b; }
  static F div(F a, F b) { return a / b; }
  static F fma(F a, F b, F c) { return a * b + c; }
  static float sum(F v) { return v; }
  static float half(uint16_t h) { return halfToFloat(h); }
  static int idxType();
  static void k4(const uint8_t* s, float d, float mdmin, float* out);
  static void k6(const uint8_t* sc, float d, float* ds, float* off) {
    for (int i = 0; i < 16; i++) {
      ds[i] = d * float(int8_t(sc[i]));
      off[i] = -32.f * ds[i];
    }
  }
  static constexpr bool LUT = false;  // no 16-entry permute at this width: nib2 and fma instead
  static F iota16() { return zero(); }
  static void idx2(const uint8_t*, int*, int*) {}
  static F lut(int, F t) { return t; }
  static F bhalf(const uint8_t* p) { return halfToFloat(loadU16(p)); }
  static void nib2(const uint8_t* p, F* lo, F* hi) {
    *lo = float(p[0] & 15);
    *hi = float(p[0] >> 4);
  }
  static F u8(const uint8_t* p) { return float(p[0]); }
  static F i8(const uint8_t* p) { return float(int8_t(p[0])); }
  static F nlo(const uint8_t* p) { return float(p[0] & 15); }
  static F nhi(const uint8_t* p) { return float(p[0] >> 4); }
  static F f16(const uint16_t* p) { return halfToFloat(p[0]); }
  static F bf16(const uint16_t* p) { return bf16ToFloat(p[0]); }
  static void q6x4(const uint8_t* ql, const uint8_t* qh, F* q) {
    q[0] = float((ql[0] & 15) | ((qh[0] & 3) << 4));
    q[1] = float((ql[32] & 15) | (((qh[0] >> 2) & 3) << 4));
    q[2] = float((ql[0] >> 4) | (((qh[0] >> 4) & 3) << 4));
    q[3] = float((ql[32] >> 4) | (((qh[0] >> 6) & 3) << 4));
  }
  static void rows16(const uint8_t* p, F* c) {
    for (int r = 0; r < 16; r++) c[r] = float(r & 1 ? p[r >> 1] >> 4 : p[r >> 1] & 15);
  }
  static void rows16x2(const uint8_t* p, F* c0, F* c1) {
    rows16(p, c0);
    rows16(p + 8, c1);
  }
  // q8 activations (simdQ8.inc): the sums of u*x over codes 0-15 and 16-31 of 16 lanes.
  static void q8dot(const uint8_t* u, const int8_t* x, int32_t, int32_t, bool, int32_t* lo, int32_t* hi) {
    for (int j = 0; j < 16; j++) lo[j] = hi[j] = 0;
    for (int k = 0; k < 32; k++) {
      int32_t* o = k < 16 ? lo : hi;
      for (int j = 0; j < 16; j++) o[j] += int32_t(u[((k >> 2) * 16 + j) * 4 + (k & 3)]) * x[k];
    }
  }
  template <int TYPE, class Tile>
  static bool q8Gather(const WeightView&, int64_t, int, int64_t, Tile&) { return false; }
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
  static F expd(F x) { return float(std::exp(double(x))); }
  static F logistic(F x) {
    const double d = x;
    if (d >= 0) return float(1.0 / (1.0 + std::exp(-d)));
    const double e = std::exp(d);
    return float(e / (1.0 + e));
  }
  static F jsmax(F a, F b) {
    if (a != a || b != b) return a + b;
    if (a > b) return a;
    if (b > a) return b;
    return std::signbit(a) ? b : a;
  }
  static F jsmin(F a, F b) {
    if (a != a || b != b) return a + b;
    if (a < b) return a;
    if (b < a) return b;
    return std::signbit(a) ? a : b;
  }
};

#include "simd.inc"

void VScalar::k4(const uint8_t* s, float d, float mdmin, float* out) {
  uint8_t sm[16];
  unpackScalesK4(s, sm);
  for (int i = 0; i < 8; i++) out[i] = d * float(sm[i]);
  for (int i = 0; i < 8; i++) out[8 + i] = mdmin * float(sm[8 + i]);
}

}  // namespace

const IsaKernels* kernelsScalar() {
  static const IsaKernels t = makeTable<VScalar>(Isa::Scalar);
  return &t;
}

}  // namespace host
