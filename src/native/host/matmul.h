// Matmul drivers: the threading and the choice between the decode kernel (one activation row: stream
// each weight row once; also used row by row for fewer than 12 rows) and the prefill panels
// (dequantize a panel of output columns once, then run every activation row over it).
#pragma once

#include <cstdint>

#include "ops.h"
#include "wtypes.h"

namespace host {

// y [T, N] = x [T, K] times w, whose rows are the N outputs (wtypes.h).
void matmulWeight(const Ctx& c, const float* x, int64_t T, const WeightView& w, float* y);
// Test only (the contract sweep's negative control): matmulWeight drops the first block of every
// weight row (zeroes it in a copy). Off by default; process-wide, so a test sets it and clears it.
void setDropBlockFault(bool on);

// The same product in the q8-activations class (matmul_wq, docs/HOST.md "q8 activations"): each
// activation row quantized per block of 32 to int8 with an f32 scale, times the weight's codes in
// integer dot products. Each output is the same bits whatever T, the other rows and the thread split
// (simdQ8.inc). f32, f16 and bf16 weights run matmulWeight (the exact class). The drop-block fault
// applies here too.
void matmulWeightQ8(const Ctx& c, const float* x, int64_t T, const WeightView& w, float* y);
// Test only: every activation code of matmulWeightQ8 one step above the nearest (at most 127).
void setQ8RoundFault(bool on);

// matmul_id (src/ops/matmulId.ts): y [T, S, N] = x [T, B, K] (B = 1 or S) times the experts ids
// [T, S] choose of w, whose n rows are E experts of N rows. Every id is checked first (Failure
// out of range, naming c.eqn); then each chosen expert's rows are read once, by matmulWeight (or
// matmulWeightQ8 when q8) over the rows of the token slots that chose it, gathered together.
void matmulId(const Ctx& c, const float* x, const int32_t* ids, float* y, int64_t T, int64_t S, int64_t B, int64_t N,
              const WeightView& w, bool q8);

// The op table's f32 matmul: c [batch, M, N] = a [batch, M, K] x b [batch, K, N], all row-major.
void matmulF32(const Ctx& c, const float* a, const float* b, float* out, int64_t batch, int64_t M, int64_t K, int64_t N);

// The same with b stored transposed, [batch, N, K] (each output column's K elements contiguous, as a
// KV cache holds keys): read as an f32 weight of N rows.
void matmulF32T(const Ctx& c, const float* a, const float* b, float* out, int64_t batch, int64_t M, int64_t K, int64_t N);

}  // namespace host
