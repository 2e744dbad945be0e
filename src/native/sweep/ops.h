// The ops the exhaustive sweep covers: what the simulated core computes for each (its kernels, as
// src/devices/xdna2/kernels.ts runs them) and the oracle's meaning of it (src/ops/elementwise.ts: the
// f64 function of the f32 operands, rounded once to f32 for an exact contract, unrounded for a
// distance from the true value), here from the C library's f64 functions.
#pragma once

#include <cmath>
#include <cstdint>

#include "core.h"

namespace sweep {

enum class Op { Neg,
                Recip,
                Exp,
                Log,
                Tanh,
                Erf,
                Sqrt,
                Add,
                Sub,
                Mul,
                Div,
                Max,
                Ge };

constexpr bool isBinary(Op op) { return op >= Op::Add; }

/** The core's result of a unary op on the f32 of pattern `xb`, as a number. */
template <Op op>
inline double coreUnary(uint32_t xb, double x) {
  if constexpr (op == Op::Neg) return fromBits(xb ^ 0x80000000u);
  else if constexpr (op == Op::Recip) return recip(x);
  else if constexpr (op == Op::Exp) return sweep::exp(x);
  else if constexpr (op == Op::Log) return sweep::log(x);
  else if constexpr (op == Op::Tanh) return sweep::tanh(x);
  else if constexpr (op == Op::Erf) return sweep::erf(x);
  else return sweep::sqrt(x);
}

/** The core's result of a binary op (ge: 1 or 0, the bool the kernel writes). */
template <Op op>
inline double coreBinary(uint32_t ab, double a, uint32_t bb, double b) {
  if constexpr (op == Op::Add) return add(a, b);
  else if constexpr (op == Op::Sub) return sub(a, b);
  else if constexpr (op == Op::Mul) return mul(a, b);
  else if constexpr (op == Op::Div) return div(a, b);
  else if constexpr (op == Op::Max) return fromBits(selectMax(ab, bb));
  else return a >= b ? 1 : 0;
}

/** The reference of a unary op: `rounded` for an exact contract (oracle-f32), else the f64 value. */
template <Op op>
inline double refUnary(double x, bool rounded) {
  double r;
  if constexpr (op == Op::Neg) r = -x;
  else if constexpr (op == Op::Recip) r = 1 / x;
  else if constexpr (op == Op::Exp) r = std::exp(x);
  else if constexpr (op == Op::Log) r = std::log(x);
  else if constexpr (op == Op::Tanh) r = std::tanh(x);
  else if constexpr (op == Op::Erf) r = std::erf(x);
  else r = std::sqrt(x);
  return rounded ? fround(r) : r;
}

/** Math.max: NaN for a NaN operand, -0 below +0. */
inline double jsMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

template <Op op>
inline double refBinary(double a, double b, bool rounded) {
  double r;
  if constexpr (op == Op::Add) r = a + b;
  else if constexpr (op == Op::Sub) r = a - b;
  else if constexpr (op == Op::Mul) r = a * b;
  else if constexpr (op == Op::Div) r = a / b;
  else if constexpr (op == Op::Max) r = jsMax(a, b);
  else return a >= b ? 1 : 0;
  return rounded ? fround(r) : r;
}

}  // namespace sweep
