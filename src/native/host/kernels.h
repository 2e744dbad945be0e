// The kernels one SIMD path provides, as a table of plain functions. isaScalar.cc, isaAvx2.cc and
// isaAvx512.cc each compile the same templates (simd.inc) for their vector width and return their
// table; matmul.cc and ops.cc pick a table at run time and do the threading.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "cpu.h"
#include "wtypes.h"

namespace host {

// y[n] = dot(x, row n of w) for n in [n0, n1): the decode shape, one activation row. For q4nx, n0 is a
// multiple of 32 (a tile row).
using GemvFn = void (*)(const float* x, const WeightView& w, int64_t n0, int64_t n1, float* y);

// y[t][c] = sum_k x[t*ldx + k] * wp[k*ldw + c] for t < rows and c < cols (cols <= the table's nr): the
// panel of a prefill-shaped matmul, the weight already dequantized (or an f32 matrix read in place).
using PanelFn = void (*)(const float* x, int64_t ldx, int64_t rows, const float* wp, int64_t ldw,
                         int64_t k, float* y, int64_t ldy, int64_t cols);

// Activation rows quantized for matmul_wq (docs/HOST.md, "q8 activations"): row t's block b of 32,
// at index i = t*rs + b*bs, is int8 codes q[i*32 ..], scale d[i], and the sums of its first and
// second 16 codes s[i*2], s[i*2 + 1]. K not a multiple of 32 (q4nx) is zero-padded. matmul.cc lays
// the blocks out block-major (rs = 1, bs = T): a tile's rows of one block are contiguous.
struct Q8Act {
  const int8_t* q;
  const float* d;
  const int32_t* s;
  // For a weight type with one integer term and an offset (q4_0: 8, q8_0: 128; simdQ8.inc's Q8_ONE),
  // -offset * (s[i*2] + s[i*2 + 1]), the term I1 starts from; else unused.
  const int32_t* c;
  int64_t kb;
  int64_t rs;
  int64_t bs;
};

// Rows one Q8TileFn call takes at most.
constexpr int Q8_ROWS = 128;

// y[(t0 + r)*ldy + n0 + j] for r < rows (<= Q8_ROWS) and j < nt (<= 16): activation rows t0.. of `a`
// times weight rows n0.. (for q4nx, n0 is a multiple of 16).
using Q8TileFn = void (*)(const WeightView& w, int64_t n0, int nt, const Q8Act& a, int64_t t0, int rows, float* y, int64_t ldy);

// One row of K activations to kb blocks (q, d, s as in Q8Act, block b at index b*bs); `fault`: the
// test's negative control.
using Q8QuantFn = void (*)(const float* x, int64_t K, int64_t kb, int8_t* q, float* d, int32_t* s, int64_t bs, bool fault);

// Elementwise loops over f32: y[i] = f(a[i], b[i]); a scalar operand has stride 0.
using BinaryFn = void (*)(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n);

struct IsaKernels {
  Isa isa;
  int nr;  // the panel width PanelFn takes
  GemvFn gemv[W_COUNT];
  PanelFn panel;
  // The q8-activation matmul per quantized weight type (null for the float types).
  Q8TileFn q8tile[W_COUNT];
  Q8QuantFn q8quant;
  // The op-table binary ops in the order of BinaryOp (ops.h).
  BinaryFn binary[6];
  // Row reductions: sum (from -0), max (from -inf, NaN wins), sum of squares.
  float (*rowSum)(const float* x, int64_t n);
  float (*rowMax)(const float* x, int64_t n);
  float (*sumSquares)(const float* x, int64_t n);
  // y[i] = x[i] * s
  void (*scale)(const float* x, float s, float* y, int64_t n);
  // y[i] = exp(x[i] - sub), the difference rounded to f32 first, exp in f64, rounded once.
  void (*expRow)(const float* x, float sub, float* y, int64_t n);
  // y[i] = logistic(x[i]) in the oracle's form (1/(1+e^-x), or e^x/(1+e^x) below 0), in f64, rounded once.
  void (*logisticRow)(const float* x, float* y, int64_t n);
  // y[i] += a * x[i]: one multiply-add per element (fused on the SIMD paths, two roundings on scalar).
  void (*axpy)(float a, const float* x, float* y, int64_t n);
  // y[i] = f16 bits x[i] as f32, exactly.
  void (*halfRow)(const uint16_t* x, float* y, int64_t n);
  // attention's scores s[r*lds + j] = q row r . key j in the dot16 order (simd.inc) for r < rn, j < n:
  // keys as rows (k + j*ldk) or as columns (k[d*ldk + j]), the same bits.
  void (*scoreRows)(const float* q, int64_t ldq, int64_t rn, const float* k, int64_t ldk, int64_t D, int64_t n, float* s, int64_t lds);
  void (*scoreCols)(const float* q, int64_t ldq, int64_t rn, const float* k, int64_t ldk, int64_t D, int64_t n, float* s, int64_t lds);
  // y[r*ldy + c] = sum over j < n of p[r*ldp + j] * v[j*ldv + c] for r < rn, c < cols: one multiply-add
  // chain per output over j in order from -0 (the panel kernel's bits), value rows read once per pair of rows.
  void (*weightRows)(const float* p, int64_t ldp, int64_t rn, const float* v, int64_t ldv, int64_t n, float* y, int64_t ldy, int64_t cols);
};

// Null when this build has no such path (a non-x86 build has only Scalar).
const IsaKernels* kernelsScalar();
const IsaKernels* kernelsAvx2();
const IsaKernels* kernelsAvx512();

// The table of `isa`, or null when this CPU or build lacks it (an AVX table is never touched then:
// even its construction runs code compiled for that target).
inline const IsaKernels* kernelsFor(Isa isa) {
  if (!isaSupported(isa)) return nullptr;
  switch (isa) {
    case Isa::Scalar: return kernelsScalar();
    case Isa::Avx2: return kernelsAvx2();
    case Isa::Avx512: return kernelsAvx512();
  }
  return nullptr;
}

}  // namespace host
