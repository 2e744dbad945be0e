// The kernel list: a program step as a flat Float64Array of records [op, eqn, fields...] over byte
// offsets into one arena (an ArrayBuffer or SharedArrayBuffer) and indices into a weight table.
// The whole list is checked before any kernel runs (every region inside the arena, aligned, outputs
// disjoint from or identical to their inputs), so a bad list changes nothing; only data-dependent
// refusals (an index out of range, an i32 division by zero) can stop a step part way.
// The record layouts are written in src/compiler/host/kernelList.ts too; the addon's abi() lets a test and
// the loader check that the two agree (src/devices/host/native.ts). docs/HOST.md lists them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops.h"
#include "wtypes.h"

namespace host {

// Every kernel op: its enum id, its name and the names of its fields after [op, eqn], in record order.
// The one list the C++ side keeps: the enum, the checker's table and the addon's abi() come from it, and
// the addon refuses to load when it disagrees with src/compiler/host/kernelList.ts (native.ts).
#define HOST_KERNEL_OPS(X) \
  X(K_MATMUL_W, "matmul_w", "x", "y", "T", "w") \
  X(K_MATMUL, "matmul", "a", "b", "y", "batch", "M", "K", "N") \
  X(K_RMSNORM, "rmsnorm", "x", "g", "y", "rows", "C", "eps") \
  X(K_SOFTMAX, "softmax", "x", "y", "rows", "C") \
  X(K_ROW_SUM, "row_sum", "x", "y", "rows", "C") \
  X(K_ROW_MAX, "row_max", "x", "y", "rows", "C") \
  X(K_EXP_SUB, "exp_sub", "x", "m", "y", "rows", "C") \
  X(K_ROW_SCALE, "row_scale", "x", "s", "y", "rows", "C") \
  X(K_ROPE, "rope", "x", "y", "T", "H", "D", "rd", "pos", "cos", "sin", "maxPos") \
  X(K_GATHER, "gather", "w", "idx", "y", "count") \
  X(K_DEQUANT, "dequant", "w", "row0", "rows", "y") \
  X(K_UPDATE, "update", "dst", "upd", "starts", "elem", "rank", "d0", "d1", "d2", "d3", "u0", "u1", "u2", "u3") \
  X(K_UNARY, "unary", "fn", "x", "y", "n") \
  X(K_BINARY, "binary", "fn", "a", "b", "y", "n", "aScalar", "bScalar") \
  X(K_BINARY_I32, "binary_i32", "fn", "a", "b", "y", "n", "aScalar", "bScalar") \
  X(K_CONVERT, "convert", "from", "to", "x", "y", "n") \
  X(K_COPY, "copy", "x", "y", "bytes") \
  X(K_MATMUL_BT, "matmul_bt", "a", "b", "y", "batch", "M", "K", "N") \
  X(K_COPY_STRIDED, "copy_strided", "x", "y", "elem", "rank", "d0", "d1", "d2", "d3", "xs0", "xs1", "xs2", "xs3", "ys0", "ys1", "ys2", "ys3") \
  X(K_IOTA, "iota", "y", "i32", "n", "dim", "stride") \
  X(K_GATHER_ROWS, "gather_rows", "x", "idx", "y", "count", "rows", "rowBytes") \
  X(K_UNARY_T, "unary_t", "fn", "dtype", "x", "y", "n") \
  X(K_BINARY_T, "binary_t", "fn", "dtype", "a", "b", "y", "n", "aScalar", "bScalar") \
  X(K_REDUCE_T, "reduce_t", "max", "dtype", "x", "y", "rows", "C") \
  X(K_MATMUL_T, "matmul_t", "dtype", "a", "b", "y", "batch", "M", "K", "N") \
  X(K_ATTENTION, "attention", "q", "k", "v", "bias", "y", "B", "M", "D", "N", "Dv", "scale", "bB", "bG", "bRow", "kRows") \
  X(K_MATMUL_WQ, "matmul_wq", "x", "y", "T", "w") \
  X(K_ATTENTION_F16, "attention_f16", "q", "k", "v", "bias", "y", "B", "M", "D", "N", "Dv", "scale", "bB", "bG", "bRow", "kRows") \
  X(K_MATMUL_ID, "matmul_id", "x", "ids", "y", "T", "S", "B", "N", "w") \
  X(K_MATMUL_IDQ, "matmul_idq", "x", "ids", "y", "T", "S", "B", "N", "w")

enum KernelOp {
#define HOST_KERNEL_ENUM(id, name, ...) id,
  HOST_KERNEL_OPS(HOST_KERNEL_ENUM)
#undef HOST_KERNEL_ENUM
      K_OP_COUNT,
};

// Fields of each op after [op, eqn].
int kernelFields(int op);
// The name of field `i` of op `op` (i < kernelFields(op)).
const char* kernelFieldName(int op, int i);

struct Arena {
  uint8_t* base;
  size_t bytes;
};

// Checks every record, then runs them in order. Returns the number of kernels run. Throws Failure.
size_t runList(const Ctx& c, const Arena& arena, const double* list, size_t words, const std::vector<WeightView>& weights);

}  // namespace host
