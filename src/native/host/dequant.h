// Weights to f32, exactly as the kernels see them (wtypes.h): for gather (an embedding row), convert
// (a whole weight) and the prefill panels. Plain C++ for the baseline target: its cost is shared by
// every row of a prefill, and a gather touches one row.
#pragma once

#include <cstdint>

#include "wtypes.h"

namespace host {

// out[j] = w[n][j] for j in [0, K).
void dequantRow(const WeightView& w, int64_t n, float* out);

// wp[k*ld + c] = w[n0 + c][k] for c < cols, and 0 for cols <= c < ld: a panel of `cols` rows laid out
// k-major, as PanelFn reads it. `rows` is scratch of ld*K floats.
void dequantPanel(const WeightView& w, int64_t n0, int64_t cols, int64_t ld, float* wp, float* rows);

}  // namespace host
