// The typed kernels (ops.h): f16 and bf16 arithmetic, and the i32 forms of neg, abs, the reductions
// and matmul. A portable scalar path on every ISA, on the calling lane: each element is the oracle's
// formula (src/ops/) evaluated in f64 from its exact operands and rounded once to the dtype (ties to
// even), so the results are the oracle's bit for bit wherever f64 evaluation is (docs/HOST.md).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "failure.h"
#include "ops.h"

namespace host {
namespace {

constexpr int32_t INT_MIN32 = -2147483647 - 1;

// The oracle's float functions (src/ops/elementwise.ts floatUnary), in f64.
double unaryD(int op, double d) {
  switch (op) {
    case U_NEG: return -d;
    case U_RECIP: return 1.0 / d;
    case U_EXP: return std::exp(d);
    case U_LOG: return std::log(d);
    case U_TANH: return std::tanh(d);
    case U_ERF: return std::erf(d);
    case U_SQRT: return std::sqrt(d);
    case U_RSQRT: return 1.0 / std::sqrt(d);
    case U_ABS: return std::fabs(d);
    case U_LOGISTIC: {
      if (d >= 0) return 1.0 / (1.0 + std::exp(-d));
      const double e = std::exp(d);
      return e / (1.0 + e);
    }
    case U_SIN: return std::sin(d);
    case U_COS: return std::cos(d);
  }
  return d;
}

// max and min as Math.max/min: NaN when either is NaN, and +0 above -0.
double maxD(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double minD(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

double binaryD(int op, double a, double b) {
  switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_MAX: return maxD(a, b);
    case OP_MIN: return minD(a, b);
  }
  return a >= b ? 1 : 0;
}

int32_t binaryI(int op, int32_t p, int32_t q) {
  const uint32_t up = uint32_t(p), uq = uint32_t(q);
  switch (op) {
    case OP_ADD: return int32_t(up + uq);
    case OP_SUB: return int32_t(up - uq);
    case OP_MUL: return int32_t(up * uq);
    case OP_DIV: return q == -1 ? int32_t(0u - up) : p / q;
    case OP_MAX: return p > q ? p : q;
    case OP_MIN: return p < q ? p : q;
  }
  return p >= q ? 1 : 0;
}

// Moves a 16-bit float `ulps` representable values up (towards +inf), for the fault of setUnaryFault.
uint16_t up16(uint16_t h, int ulps, int d) {
  const uint16_t inf = d == D_F16 ? 0x7c00 : 0x7f80;
  for (int k = 0; k < ulps; k++) {
    if ((h & 0x7fff) > inf) return h;  // NaN stays NaN
    if (h == 0x8000) h = 1;
    else if (h & 0x8000) h = uint16_t(h - 1);
    else if (h != inf) h = uint16_t(h + 1);
  }
  return h;
}

}  // namespace

void unaryTyped(const Ctx& c, int op, int d, const uint8_t* x, uint8_t* y, int64_t n) {
  (void)c;
  if (d == D_I32) {
    // Only neg and abs take i32 (the op table); both wrap, so -INT_MIN and |INT_MIN| are INT_MIN.
    for (int64_t i = 0; i < n; i++) {
      int32_t v;
      std::memcpy(&v, x + 4 * i, 4);
      const int32_t r = (op == U_ABS && v >= 0) ? v : int32_t(0u - uint32_t(v));
      std::memcpy(y + 4 * i, &r, 4);
    }
    return;
  }
  const int fault = unaryFaultUlps(op);
  for (int64_t i = 0; i < n; i++) {
    writeElem(d, y, i, unaryD(op, readElem(d, x, i)), d);
    if (fault > 0 && d != D_F32) {
      uint16_t h;
      std::memcpy(&h, y + 2 * i, 2);
      h = up16(h, fault, d);
      std::memcpy(y + 2 * i, &h, 2);
    }
  }
}

void binaryTyped(const Ctx& c, int op, int d, const uint8_t* a, bool aScalar, const uint8_t* b, bool bScalar, uint8_t* y, int64_t n) {
  if (d == D_I32) {
    // A zero divisor is refused before anything is written (as binaryI32).
    if (op == OP_DIV) {
      for (int64_t i = 0; i < (bScalar ? (n > 0 ? 1 : 0) : n); i++) {
        if (readElem(D_I32, b, i) == 0) throw Failure::divideByZero(c.eqn);
      }
    }
    for (int64_t i = 0; i < n; i++) {
      const int32_t r = binaryI(op, int32_t(readElem(D_I32, a, aScalar ? 0 : i)), int32_t(readElem(D_I32, b, bScalar ? 0 : i)));
      if (op == OP_GE) y[i] = uint8_t(r);
      else std::memcpy(y + 4 * i, &r, 4);
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    const double r = binaryD(op, readElem(d, a, aScalar ? 0 : i), readElem(d, b, bScalar ? 0 : i));
    if (op == OP_GE) y[i] = r != 0 ? 1 : 0;
    else writeElem(d, y, i, r, d);
  }
}

void reduceTyped(const Ctx& c, bool max, int d, const uint8_t* x, uint8_t* y, int64_t rows, int64_t cols) {
  (void)c;
  for (int64_t r = 0; r < rows; r++) {
    const int64_t at = r * cols;
    if (d == D_I32) {
      int32_t acc = max ? INT_MIN32 : 0;
      for (int64_t j = 0; j < cols; j++) {
        const int32_t v = int32_t(readElem(D_I32, x, at + j));
        acc = max ? (v > acc ? v : acc) : int32_t(uint32_t(acc) + uint32_t(v));
      }
      std::memcpy(y + 4 * r, &acc, 4);
      continue;
    }
    double acc = max ? -INFINITY : -0.0;
    for (int64_t j = 0; j < cols; j++) {
      const double v = readElem(d, x, at + j);
      acc = max ? maxD(acc, v) : acc + v;
    }
    if (!max && cols == 0) acc = 0.0;
    writeElem(d, y, r, acc, d);
  }
}

void matmulTyped(const Ctx& c, int d, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t batch, int64_t M, int64_t K, int64_t N) {
  (void)c;
  for (int64_t p = 0; p < batch; p++) {
    const int64_t a0 = p * M * K, b0 = p * K * N, y0 = p * M * N;
    for (int64_t i = 0; i < M; i++) {
      for (int64_t j = 0; j < N; j++) {
        if (d == D_I32) {
          uint32_t acc = 0;
          for (int64_t k = 0; k < K; k++) {
            acc += uint32_t(int32_t(readElem(d, a, a0 + i * K + k))) * uint32_t(int32_t(readElem(d, b, b0 + k * N + j)));
          }
          const int32_t r = int32_t(acc);
          std::memcpy(y + 4 * (y0 + i * N + j), &r, 4);
          continue;
        }
        // From -0 (an all-negative-zero sum stays -0); +0 when K = 0, as the oracle.
        double acc = K == 0 ? 0.0 : -0.0;
        for (int64_t k = 0; k < K; k++) acc += readElem(d, a, a0 + i * K + k) * readElem(d, b, b0 + k * N + j);
        writeElem(d, y, y0 + i * N + j, acc, d);
      }
    }
  }
}

}  // namespace host
