// The kernel list: a program step as a flat Float64Array of records [op, eqn, fields...] over byte
// offsets into one arena (an ArrayBuffer or SharedArrayBuffer) and indices into a weight table.
// The whole list is checked before any kernel runs (every region inside the arena, aligned, outputs
// disjoint from or identical to their inputs), so a bad list changes nothing; only data-dependent
// refusals (an index out of range, an i32 division by zero) can stop a step part way.
// The record layouts are mirrored by src/devices/host/abi.ts; docs/HOST.md lists them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops.h"
#include "wtypes.h"

namespace host {

enum KernelOp {
  K_MATMUL_W, K_MATMUL, K_RMSNORM, K_SOFTMAX, K_ROW_SUM, K_ROW_MAX, K_EXP_SUB, K_ROW_SCALE, K_ROPE,
  K_GATHER, K_DEQUANT, K_UPDATE, K_UNARY, K_BINARY, K_BINARY_I32, K_CONVERT, K_COPY, K_MATMUL_BT,
  K_COPY_STRIDED, K_IOTA, K_GATHER_ROWS, K_UNARY_T, K_BINARY_T, K_REDUCE_T, K_MATMUL_T, K_MATMUL_WQ, K_OP_COUNT,
};

// Fields of each op after [op, eqn].
int kernelFields(int op);

struct Arena {
  uint8_t* base;
  size_t bytes;
};

// Checks every record, then runs them in order. Returns the number of kernels run. Throws Failure.
size_t runList(const Ctx& c, const Arena& arena, const double* list, size_t words, const std::vector<WeightView>& weights);

}  // namespace host
