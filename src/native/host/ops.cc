#include "ops.h"

#include <atomic>
#include <cmath>
#include <cstring>

#include "dequant.h"
#include "failure.h"

namespace host {
namespace {

// Below this many elements a kernel runs on the calling lane: waking the team costs more.
constexpr int64_t PARALLEL_ELEMS = 1 << 16;

// Runs body over [0, rows) on the team when rows * cols is large enough, else inline.
template <class Body>
void overRows(const Ctx& c, int64_t rows, int64_t cols, Body body) {
  if (rows * (cols < 1 ? 1 : cols) < PARALLEL_ELEMS || c.team->size() == 1) {
    body(int64_t(0), rows);
    return;
  }
  // A few pieces per lane: one piece per row would pay a claim per element of an elementwise op.
  const int64_t lanes = c.team->size();
  const int64_t grain = (rows + 4 * lanes - 1) / (4 * lanes);
  c.team->run(rows, grain, [&](int, int64_t b, int64_t e) { body(b, e); });
}

// Each unary op is the oracle's formula evaluated in f64 from the f32 operand and rounded once, so
// the only difference from the oracle is libm's last bit against V8's (docs/HOST.md: at most 1 ulp).
float unaryOne(int op, float x) {
  const double d = x;
  switch (op) {
    case U_NEG: return -x;
    case U_RECIP: return float(1.0 / d);
    case U_EXP: return float(std::exp(d));
    case U_LOG: return float(std::log(d));
    case U_TANH: return float(std::tanh(d));
    case U_ERF: return float(std::erf(d));
    case U_SQRT: return float(std::sqrt(d));
    case U_RSQRT: return float(1.0 / std::sqrt(d));
    case U_ABS: return std::fabs(x);
    case U_LOGISTIC: {
      if (d >= 0) return float(1.0 / (1.0 + std::exp(-d)));
      const double e = std::exp(d);
      return float(e / (1.0 + e));
    }
    case U_SIN: return float(std::sin(d));
    case U_COS: return float(std::cos(d));
  }
  return x;
}

// Rounds an f64 to the nearest value with `mant` fraction bits, least normal exponent `emin` and
// largest finite exponent `emax`, ties to even, in one step (through f32 would round twice).
uint16_t roundSmall(double x, int mant, int emin, int emax, int bias) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const int expBits = 15 - mant;
  const uint16_t infBits = uint16_t(((1 << expBits) - 1) << mant);
  if (std::isnan(x)) return uint16_t(sign | infBits | (1 << (mant - 1)));
  const double a = std::fabs(x);
  if (std::isinf(a)) return uint16_t(sign | infBits);
  if (a < std::ldexp(1.0, emin)) {
    // Subnormal spacing 2^(emin - mant); nearbyint rounds ties to even in the default mode.
    const double m = std::nearbyint(std::ldexp(a, mant - emin));
    return uint16_t(sign | uint16_t(m));  // m == 2^mant carries into the smallest normal
  }
  int e;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): the unbiased exponent is e - 1
  int E = e - 1;
  double q = std::nearbyint(std::ldexp(a, mant - E));
  if (q == std::ldexp(1.0, mant + 1)) {
    q = std::ldexp(1.0, mant);
    E++;
  }
  if (E > emax) return uint16_t(sign | infBits);
  return uint16_t(sign | uint16_t((E + bias) << mant) | uint16_t(int(q) - (1 << mant)));
}

uint16_t toHalf(double x) { return roundSmall(x, 10, -14, 15, 15); }
uint16_t toBf16(double x) { return roundSmall(x, 7, -126, 127, 127); }

double readAs(int d, const uint8_t* p, int64_t i) {
  switch (d) {
    case D_F32: {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      return f;
    }
    case D_F16: return halfToFloat(loadU16(p + 2 * i));
    case D_BF16: return bf16ToFloat(loadU16(p + 2 * i));
    case D_I32: {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case D_BOOL: return p[i] != 0 ? 1 : 0;
  }
  return 0;
}

void writeAs(int d, uint8_t* p, int64_t i, double v, int from) {
  switch (d) {
    case D_F32: {
      const float f = float(v);
      std::memcpy(p + 4 * i, &f, 4);
      return;
    }
    case D_F16: {
      const uint16_t h = toHalf(v);
      std::memcpy(p + 2 * i, &h, 2);
      return;
    }
    case D_BF16: {
      const uint16_t h = toBf16(v);
      std::memcpy(p + 2 * i, &h, 2);
      return;
    }
    case D_I32: {
      // Floats truncate toward zero and saturate, NaN to 0 (src/ops/convert.ts).
      int32_t r;
      if (from == D_I32 || from == D_BOOL) r = int32_t(v);
      else if (std::isnan(v)) r = 0;
      else if (v >= 2147483647.0) r = 2147483647;
      else if (v <= -2147483648.0) r = int32_t(-2147483647 - 1);
      else r = int32_t(std::trunc(v));
      std::memcpy(p + 4 * i, &r, 4);
      return;
    }
    case D_BOOL: p[i] = v != 0 || std::isnan(v) ? 1 : 0; return;
  }
}

}  // namespace

double readElem(int d, const uint8_t* p, int64_t i) { return readAs(d, p, i); }
void writeElem(int d, uint8_t* p, int64_t i, double v, int from) { writeAs(d, p, i, v, from); }

int dtypeBytes(int d) {
  switch (d) {
    case D_F32:
    case D_I32: return 4;
    case D_F16:
    case D_BF16: return 2;
    case D_BOOL: return 1;
  }
  return 0;
}

namespace {
std::atomic<int> faultOp{-1};
std::atomic<int> faultUlps{0};
}  // namespace

void setUnaryFault(int op, int ulps) {
  faultUlps = ulps;
  faultOp = op;
}

int unaryFaultUlps(int op) {
  return faultOp.load(std::memory_order_relaxed) == op ? faultUlps.load(std::memory_order_relaxed) : 0;
}

void unaryF32(const Ctx& c, int op, const float* x, float* y, int64_t n) {
  overRows(c, n, 16, [&](int64_t b, int64_t e) {
    if (op == U_EXP) c.k->expRow(x + b, 0.f, y + b, e - b);
    else if (op == U_LOGISTIC) c.k->logisticRow(x + b, y + b, e - b);
    else
      for (int64_t i = b; i < e; i++) y[i] = unaryOne(op, x[i]);
    if (faultOp.load(std::memory_order_relaxed) != op) return;
    const int k = faultUlps.load(std::memory_order_relaxed);
    for (int64_t i = b; i < e; i++) {
      for (int j = 0; j < k; j++) y[i] = std::nextafter(y[i], INFINITY);
    }
  });
}

void binaryF32(const Ctx& c, int op, const float* a, bool aScalar, const float* b, bool bScalar, void* y, int64_t n) {
  overRows(c, n, 4, [&](int64_t s, int64_t e) {
    const float* as = aScalar ? a : a + s;
    const float* bs = bScalar ? b : b + s;
    if (op == OP_GE) {
      uint8_t* out = static_cast<uint8_t*>(y) + s;
      for (int64_t i = 0; i < e - s; i++) out[i] = as[aScalar ? 0 : i] >= bs[bScalar ? 0 : i] ? 1 : 0;
      return;
    }
    c.k->binary[op](as, aScalar ? 0 : 1, bs, bScalar ? 0 : 1, static_cast<float*>(y) + s, e - s);
  });
}

void binaryI32(const Ctx& c, int op, const int32_t* a, bool aScalar, const int32_t* b, bool bScalar, void* y, int64_t n) {
  // A zero divisor is refused before anything is written.
  if (op == OP_DIV) {
    for (int64_t i = 0; i < (bScalar ? (n > 0 ? 1 : 0) : n); i++) {
      if (b[i] == 0) throw Failure::divideByZero(c.eqn);
    }
  }
  for (int64_t i = 0; i < n; i++) {
    const int32_t p = a[aScalar ? 0 : i];
    const int32_t q = b[bScalar ? 0 : i];
    // Two's complement wrap, computed unsigned so no signed overflow is undefined.
    const uint32_t up = uint32_t(p), uq = uint32_t(q);
    int32_t r;
    switch (op) {
      case OP_ADD: r = int32_t(up + uq); break;
      case OP_SUB: r = int32_t(up - uq); break;
      case OP_MUL: r = int32_t(up * uq); break;
      case OP_DIV:
        r = (q == -1) ? int32_t(0u - up) : p / q;
        break;
      case OP_MAX: r = p > q ? p : q; break;
      case OP_MIN: r = p < q ? p : q; break;
      default:
        static_cast<uint8_t*>(y)[i] = p >= q ? 1 : 0;
        continue;
    }
    static_cast<int32_t*>(y)[i] = r;
  }
}

void convert(const Ctx& c, int from, int to, const void* x, void* y, int64_t n) {
  const uint8_t* src = static_cast<const uint8_t*>(x);
  uint8_t* dst = static_cast<uint8_t*>(y);
  if (from == to) {
    std::memmove(dst, src, size_t(n) * dtypeBytes(from));
    return;
  }
  overRows(c, n, 4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) writeAs(to, dst, i, readAs(from, src, i), from);
  });
}

void rowReduce(const Ctx& c, bool max, const float* x, float* y, int64_t rows, int64_t cols) {
  overRows(c, rows, cols, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) y[r] = max ? c.k->rowMax(x + r * cols, cols) : c.k->rowSum(x + r * cols, cols);
  });
}

void expSub(const Ctx& c, const float* x, const float* m, float* y, int64_t rows, int64_t cols) {
  overRows(c, rows, cols, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      c.k->expRow(x + r * cols, m[r], y + r * cols, cols);
    }
  });
}

void rowScale(const Ctx& c, const float* x, const float* s, float* y, int64_t rows, int64_t cols) {
  overRows(c, rows, cols, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) c.k->scale(x + r * cols, s[r], y + r * cols, cols);
  });
}

void softmax(const Ctx& c, const float* x, float* y, int64_t rows, int64_t cols) {
  overRows(c, rows, cols, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      const float m = c.k->rowMax(xr, cols);
      c.k->expRow(xr, m, yr, cols);
      const float s = c.k->rowSum(yr, cols);
      for (int64_t i = 0; i < cols; i++) yr[i] = yr[i] / s;
    }
  });
}

void rmsnorm(const Ctx& c, const float* x, const float* g, float* y, int64_t rows, int64_t cols, float eps) {
  overRows(c, rows, cols, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      const float* xr = x + r * cols;
      float* yr = y + r * cols;
      const float ss = c.k->sumSquares(xr, cols);
      const float scale = float(1.0 / std::sqrt(double(ss) / double(cols) + double(eps)));
      for (int64_t i = 0; i < cols; i++) yr[i] = (xr[i] * scale) * g[i];
    }
  });
}

void ropeNeox(const Ctx& c, const float* x, float* y, int64_t T, int64_t H, int64_t D, int64_t rd,
              const int32_t* pos, const float* cosT, const float* sinT, int64_t maxPos) {
  for (int64_t t = 0; t < T; t++) {
    if (pos[t] < 0 || pos[t] >= maxPos) throw Failure::outOfRange(c.eqn, pos[t], maxPos);
  }
  const int64_t half = rd / 2;
  overRows(c, T * H, D, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; row++) {
      const int64_t p = pos[row / H];
      const float* cs = cosT + p * half;
      const float* sn = sinT + p * half;
      const float* xr = x + row * D;
      float* yr = y + row * D;
      for (int64_t i = 0; i < half; i++) {
        const float x0 = xr[i];
        const float x1 = xr[i + half];
        yr[i] = x0 * cs[i] - x1 * sn[i];
        yr[i + half] = x0 * sn[i] + x1 * cs[i];
      }
      for (int64_t i = rd; i < D; i++) yr[i] = xr[i];
    }
  });
}

void gather(const Ctx& c, const WeightView& w, const int32_t* idx, int64_t count, float* y) {
  for (int64_t j = 0; j < count; j++) {
    if (idx[j] < 0 || idx[j] >= w.n) throw Failure::outOfRange(c.eqn, idx[j], w.n);
  }
  overRows(c, count, w.k, [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; j++) dequantRow(w, idx[j], y + j * w.k);
  });
}

void dequantRows(const Ctx& c, const WeightView& w, int64_t row0, int64_t rows, float* y) {
  overRows(c, rows, w.k, [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; j++) dequantRow(w, row0 + j, y + j * w.k);
  });
}

void updateSlice(const Ctx& c, uint8_t* dst, const int64_t* d, const uint8_t* upd, const int64_t* u,
                 const int32_t* starts, int rank, int elem) {
  int64_t st[4] = {0, 0, 0, 0};
  for (int i = 0; i < rank; i++) {
    // A window that does not fit is refused, not clamped: extent - update + 1 starts are valid.
    if (starts[i] < 0 || starts[i] > d[i] - u[i]) throw Failure::outOfRange(c.eqn, starts[i], d[i] - u[i] + 1);
    st[i] = starts[i];
  }
  // Padded to rank 4 with leading dims of 1.
  int64_t D4[4] = {1, 1, 1, 1}, U4[4] = {1, 1, 1, 1}, S4[4] = {0, 0, 0, 0};
  for (int i = 0; i < rank; i++) {
    D4[4 - rank + i] = d[i];
    U4[4 - rank + i] = u[i];
    S4[4 - rank + i] = st[i];
  }
  const size_t inner = size_t(U4[3]) * elem;
  for (int64_t a = 0; a < U4[0]; a++) {
    for (int64_t b = 0; b < U4[1]; b++) {
      for (int64_t r = 0; r < U4[2]; r++) {
        const int64_t di = (((S4[0] + a) * D4[1] + S4[1] + b) * D4[2] + S4[2] + r) * D4[3] + S4[3];
        const int64_t ui = ((a * U4[1] + b) * U4[2] + r) * U4[3];
        std::memcpy(dst + di * elem, upd + ui * elem, inner);
      }
    }
  }
}

void copyStrided(uint8_t* y, const int64_t* ys, const uint8_t* x, const int64_t* xs, const int64_t* d, int elem) {
  const size_t e = size_t(elem);
  const bool runs = xs[3] == 1 && ys[3] == 1;
  for (int64_t a = 0; a < d[0]; a++) {
    for (int64_t b = 0; b < d[1]; b++) {
      for (int64_t r = 0; r < d[2]; r++) {
        const uint8_t* src = x + size_t(a * xs[0] + b * xs[1] + r * xs[2]) * e;
        uint8_t* dst = y + size_t(a * ys[0] + b * ys[1] + r * ys[2]) * e;
        if (runs) {
          std::memcpy(dst, src, size_t(d[3]) * e);
        } else {
          for (int64_t i = 0; i < d[3]; i++) std::memcpy(dst + size_t(i * ys[3]) * e, src + size_t(i * xs[3]) * e, e);
        }
      }
    }
  }
}

}  // namespace host
