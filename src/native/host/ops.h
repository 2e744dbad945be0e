// The kernels besides matmul, over f32 rows unless said otherwise: the ops of src/ops/table.ts with
// their exact semantics (elementwise, convert, reductions over the last axis), and the row kernels
// of a transformer step (RMSNorm, softmax, neox rope, gather, dynamic_update_slice). Their numerical
// contracts are in docs/HOST.md.
#pragma once

#include <cstdint>

#include "kernels.h"
#include "team.h"
#include "wtypes.h"

namespace host {

// The ABI numbering of src/compiler/host/kernelList.ts, each with the name the op table gives it (the
// addon's abi() reports the names; native.ts refuses an addon whose numbering differs). Unary ops in
// the order of the op table's UNARY_OPS.
// clang-format off: one X(...) per op, laid out by hand
#define HOST_UNARY_OPS(X) \
  X(U_NEG, "neg") X(U_RECIP, "recip") X(U_EXP, "exp") X(U_LOG, "log") X(U_TANH, "tanh") X(U_ERF, "erf") \
  X(U_SQRT, "sqrt") X(U_RSQRT, "rsqrt") X(U_ABS, "abs") X(U_LOGISTIC, "logistic") X(U_SIN, "sin") X(U_COS, "cos")
// Binary ops in the op table's order; GE writes bools (one byte, 0 or 1).
#define HOST_BINARY_OPS(X) \
  X(OP_ADD, "add") X(OP_SUB, "sub") X(OP_MUL, "mul") X(OP_DIV, "div") X(OP_MAX, "max") X(OP_MIN, "min") X(OP_GE, "ge")
// Element types of the arena, in the order of the format's DTYPES.
#define HOST_DTYPES(X) X(D_F32, "f32") X(D_F16, "f16") X(D_BF16, "bf16") X(D_I32, "i32") X(D_BOOL, "bool")
// clang-format on

#define HOST_ENUM_ID(id, name) id,
enum UnaryOp { HOST_UNARY_OPS(HOST_ENUM_ID) U_COUNT };
enum BinaryOp { HOST_BINARY_OPS(HOST_ENUM_ID) OP_COUNT };
enum DType { HOST_DTYPES(HOST_ENUM_ID) D_COUNT };
#undef HOST_ENUM_ID

int dtypeBytes(int d);

struct Ctx {
  const IsaKernels* k;
  Team* team;
  int64_t eqn;  // named by data-dependent errors
};

void unaryF32(const Ctx& c, int op, const float* x, float* y, int64_t n);
// Test only (the contract sweep's negative control): every result of unary op `op` moved `ulps` ulps
// up; op -1 (the default) is no fault. Process-wide, so a test sets it and resets it after.
void setUnaryFault(int op, int ulps);
// A scalar operand (aScalar/bScalar) is read at index 0 for every element.
void binaryF32(const Ctx& c, int op, const float* a, bool aScalar, const float* b, bool bScalar, void* y, int64_t n);
void binaryI32(const Ctx& c, int op, const int32_t* a, bool aScalar, const int32_t* b, bool bScalar, void* y, int64_t n);
void convert(const Ctx& c, int from, int to, const void* x, void* y, int64_t n);
// Element i of an arena array of dtype d, as f64 (exactly); and v written as dtype d, rounded to
// nearest even once (a float to i32 truncates and saturates, as convert does; `from` is v's dtype).
double readElem(int d, const uint8_t* p, int64_t i);
void writeElem(int d, uint8_t* p, int64_t i, double v, int from);

// The typed kernels (typed.cc): the op table's f16 and bf16 arithmetic, and i32 where the op takes
// it, each element computed as the oracle does, in f64 from the exact operands, and rounded once to
// the dtype; i32 wraps. A unary op on i32 is neg or abs.
void unaryTyped(const Ctx& c, int op, int d, const uint8_t* x, uint8_t* y, int64_t n);
void binaryTyped(const Ctx& c, int op, int d, const uint8_t* a, bool aScalar, const uint8_t* b, bool bScalar, uint8_t* y, int64_t n);
// y[r] = sum (from -0; +0 for an empty row) or max (from -inf, INT_MIN for i32; NaN wins) of row r,
// accumulated in f64 in index order: the oracle's order over a row-major operand.
void reduceTyped(const Ctx& c, bool max, int d, const uint8_t* x, uint8_t* y, int64_t rows, int64_t cols);
// y [batch, M, N] = a [batch, M, K] x b [batch, K, N], each dot product accumulated in f64 in k order
// (i32: wrapping) and rounded once.
void matmulTyped(const Ctx& c, int d, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t batch, int64_t M, int64_t K, int64_t N);
// The ulps setUnaryFault moves op `op`'s results by (0: no fault); the typed kernels obey it too.
int unaryFaultUlps(int op);

// y[r] = sum (or max) of row r of x [rows, cols].
void rowReduce(const Ctx& c, bool max, const float* x, float* y, int64_t rows, int64_t cols);
// y = exp(x - m[row]); y = x * s[row].
void expSub(const Ctx& c, const float* x, const float* m, float* y, int64_t rows, int64_t cols);
void rowScale(const Ctx& c, const float* x, const float* s, float* y, int64_t rows, int64_t cols);
// y = softmax of each row: e = exp(x - max), y = e / sum(e).
void softmax(const Ctx& c, const float* x, float* y, int64_t rows, int64_t cols);
// y = x * (1 / sqrt(mean(x^2) + eps)) * g, per row; g is one row shared by all.
void rmsnorm(const Ctx& c, const float* x, const float* g, float* y, int64_t rows, int64_t cols, float eps);
// Neox rope over x [T, H, D]: pairs (i, i + rd/2) of the first rd dims rotate by the table entries
// of the token's position; dims from rd on are copied. cos and sin are [maxPos, rd/2].
void ropeNeox(const Ctx& c, const float* x, float* y, int64_t T, int64_t H, int64_t D, int64_t rd,
              const int32_t* pos, const float* cosT, const float* sinT, int64_t maxPos);
// y[j] = row idx[j] of w, dequantized to f32.
void gather(const Ctx& c, const WeightView& w, const int32_t* idx, int64_t count, float* y);
// Rows [row0, row0 + rows) of w to f32: convert of a weight.
void dequantRows(const Ctx& c, const WeightView& w, int64_t row0, int64_t rows, float* y);
// Writes upd (dims u) into dst (dims d) at the start indices, in place; rank <= 4, elements of
// `elem` bytes.
void updateSlice(const Ctx& c, uint8_t* dst, const int64_t* d, const uint8_t* upd, const int64_t* u,
                 const int32_t* starts, int rank, int elem);

// Fused attention (attention.cc): q [B, M, D], k [B, N, D] with kRows (a KV cache's keys, one row per
// position) or else [B, D, N], v [B, N, Dv], y [B, M, Dv]; the bias of row m of head b at
// bias + b*bB + (m / bG)*bRow, N contiguous elements. The layout of k changes no bit of y.
void attention(const Ctx& c, const float* q, const float* k, const float* v, const float* bias, float* y,
               int64_t B, int64_t M, int64_t D, int64_t N, int64_t Dv, float scale, int64_t bB, int64_t bG,
               int64_t bRow, bool kRows);
// The same with k and v as f16 bits (an f16 KV cache): each element is converted to f32 exactly before
// use, so the result is attention() of the converted arrays, bit for bit.
void attentionF16(const Ctx& c, const float* q, const uint16_t* k, const uint16_t* v, const float* bias, float* y,
                  int64_t B, int64_t M, int64_t D, int64_t N, int64_t Dv, float scale, int64_t bB, int64_t bG,
                  int64_t bRow, bool kRows);
// Test only (the contract sweep's negative control): 1 drops each row's last visible position, 2 uses
// 1.0625 times the scale, 3 (attention_f16 only) reads the f16 cache's bits as bf16; 0 (the default) is no
// fault. Process-wide.
void setAttentionFault(int mode);

// y[i0, i1, i2, i3] = x[i0, i1, i2, i3] over extents d, element strides xs (source) and ys
// (destination), elements of `elem` bytes: transpose, slice, broadcast (stride 0) and concat.
void copyStrided(uint8_t* y, const int64_t* ys, const uint8_t* x, const int64_t* xs, const int64_t* d, int elem);

}  // namespace host
