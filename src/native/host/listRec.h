// The checked form of one kernel-list record, shared by the checker (listCheck.cc) and the runner
// (list.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "list.h"

namespace host {

constexpr int MAX_FIELDS = 16;

// One checked record: integer fields, resolved byte ranges and the weight it names.
struct Rec {
  int op = 0;
  int64_t eqn = 0;
  int64_t v[MAX_FIELDS] = {};
  double eps = 0;
  uint8_t* p[6] = {};
  const WeightView* w = nullptr;
};

// The name of an op and the number of its fields after [op, eqn].
const char* kernelName(int op);

// Checks record `index` (its words at `r`, op `op`) against the arena and the weights; throws Failure.
Rec checkRecord(const Arena& a, const std::vector<WeightView>& weights, size_t index, const double* r, int op);

}  // namespace host
