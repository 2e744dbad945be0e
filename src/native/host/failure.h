// What a kernel or a check throws, in plain C++ (kernels run on the team's threads, away from N-API); the
// addon turns each into the engine's typed JS error (jsErrors.h).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace host {

struct Failure : std::runtime_error {
  enum Kind { Invalid,
              IndexOutOfRange,
              IntegerDivideByZero };
  Kind kind;
  std::string path;  // Invalid: where (a JSON-pointer-like place); else empty
  int64_t eqn = -1;
  int64_t index = 0;
  int64_t extent = 0;

  Failure(Kind k, std::string where, const std::string& reason) : std::runtime_error(reason), kind(k), path(std::move(where)) {}

  static Failure invalid(const std::string& where, const std::string& reason) { return Failure(Invalid, where, reason); }
  static Failure outOfRange(int64_t eqn, int64_t index, int64_t extent) {
    Failure f(IndexOutOfRange, "", "index " + std::to_string(index) + " is outside [0, " + std::to_string(extent) + ")");
    f.eqn = eqn;
    f.index = index;
    f.extent = extent;
    return f;
  }
  static Failure divideByZero(int64_t eqn) {
    Failure f(IntegerDivideByZero, "", "i32 division by zero");
    f.eqn = eqn;
    return f;
  }
};

}  // namespace host
