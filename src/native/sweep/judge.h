// One element judged against an op's contract, a port of src/targets/contract.ts withinContract and
// the worst-element rule of src/devices/xdna2/contractTally.ts. The contract arrives as data from the
// TypeScript (XDNA2_CONTRACTS), so the numbers live in one place; only the kinds are mirrored here.
#pragma once

#include <cmath>
#include <cstdint>

namespace sweep {

enum class ErrorKind { Exact,
                       LargerOperand,
                       AbsRel,
                       Rel };
enum class DomainKind { Any,
                        NotNan,
                        Finite,
                        FiniteNormalResult,
                        Interval,
                        PositiveNormal };

struct Contract {
  ErrorKind error = ErrorKind::Exact;
  double abs = 0;
  double rel = 0;
  DomainKind domain = DomainKind::Any;
  double lo = 0;
  double hi = 0;
};

constexpr double F32_MIN_NORMAL = 0x1p-126;
constexpr double CONTRACT_F32_MAX = 3.4028234663852886e38;

inline bool normalOrZero(double v) {
  double a = std::fabs(v);
  return a == 0 || (a >= F32_MIN_NORMAL && a <= CONTRACT_F32_MAX);
}

/** The part of the domain an operand decides on its own (finite-normal-result also needs the result). */
inline bool operandInDomain(const Contract& c, double v) {
  switch (c.domain) {
    case DomainKind::Any: return true;
    case DomainKind::NotNan: return !std::isnan(v);
    case DomainKind::Finite:
    case DomainKind::FiniteNormalResult: return std::isfinite(v);
    case DomainKind::Interval: return v >= c.lo && v <= c.hi;
    case DomainKind::PositiveNormal: return v >= F32_MIN_NORMAL && v <= CONTRACT_F32_MAX;
  }
  return false;
}

/** The part of the domain that depends on the reference's result. */
inline bool resultInDomain(const Contract& c, double want) {
  return c.domain != DomainKind::FiniteNormalResult || (std::isfinite(want) && normalOrZero(want));
}

/** Object.is, with every NaN equal to every NaN (tensors hold f64, which keeps no payload). */
inline bool bitEqual(double g, double w) {
  if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w);
  return g == w && std::signbit(g) == std::signbit(w);
}

struct Verdict {
  bool ok;
  double error;
  double bound;
  double ratio;
};

/** withinContract for an element already in the domain; `larger` is max |operand| (larger-operand). */
inline Verdict judge(const Contract& c, double got, double want, double larger) {
  double bound = 0;
  switch (c.error) {
    case ErrorKind::Exact: bound = 0; break;
    case ErrorKind::LargerOperand: bound = c.rel * larger; break;
    case ErrorKind::AbsRel: bound = c.abs + c.rel * std::fabs(want); break;
    case ErrorKind::Rel: bound = c.rel * std::fabs(want); break;
  }
  bool same = bitEqual(got, want);
  double error = same ? 0 : (std::isfinite(got) && std::isfinite(want)) ? std::fabs(got - want)
                                                                        : INFINITY;
  bool ok = c.error == ErrorKind::Exact ? same : (same || error <= bound);
  bool bad = !ok;
  double ratio = bad && !(error > bound) ? INFINITY : bound > 0 ? error / bound
                                                  : error > 0   ? INFINITY
                                                                : 0;
  return {ok, error, bound, ratio};
}

}  // namespace sweep
