// The fused attention record (list.h K_ATTENTION): per kv head b and query row m,
//   a_j = fl(fl(s_j * scale) + bias_j), s_j = q[b, m, :] . k[b, :, j]   for j < L,
//   y[b, m, :] = sum_j softmax(a)_j * v[b, j, :],
// where L is 1 + the last position whose bias is not masked (bias <= -1e30 or -inf, the mask of
// src/model/qwen3/layers.ts): positions from L on have weight exactly 0 in the unfused math (where
// the scaled scores are below 2^98 in magnitude: docs/HOST.md), so they are never read. A row whose
// every position is masked takes all N, as the unfused softmax would. The scores are dot products in
// the dot16 order (simd.inc: term d on lane d % 16, one chain per lane, a halving tree), whatever the
// keys' layout: [N, D] per head (kRows, a KV cache's rows, program.ts) read row by row in place, up
// to four query rows of a block against each pair of key rows (a decode's grouped rows of one head
// are one block), or [D, N] (the matmul operand as it is) read in place by columns; the same bits
// come out. Grouped query rows of one kv head share its K and V
// rows in place (no broadcast). The weighted sum is one FMA chain per output over the positions in
// order: a decode streams the value rows once (ISA table weightRows), a prefill runs the prefill
// panels (product below); the same bits. The softmax is the unfused body's: the ISA table's row_max,
// exp (f64, rounded once), row_sum and a division.
#include <algorithm>
#include <atomic>
#include <vector>

#include "ops.h"

namespace host {
namespace {

std::atomic<int> attentionFault{0};

// Rows of one head handled together, so each K and V row is read once per block (a decode's G rows
// are one block).
constexpr int64_t RB = 16;

inline bool masked(float b) { return b <= -1e30f; }

}  // namespace

void setAttentionFault(int mode) { attentionFault.store(mode, std::memory_order_relaxed); }

namespace {

// The f16 bits read as bf16 (attention fault 3, a test's negative control).
void bf16Row(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = bf16ToFloat(x[i]);
}

// y[r, c] = sum over t < terms of a[r*lda + t] * b[t*ldb + c], for r < rn and c < cols: whole panels of
// NR columns on the prefill kernel, the tail by axpy rows from -0, each output one FMA chain over t in
// order either way (so a row's result does not depend on where the panels end).
void product(const IsaKernels& K, const float* a, int64_t lda, int64_t rn, const float* b, int64_t ldb, int64_t terms,
             float* y, int64_t ldy, int64_t cols) {
  const int64_t NR = K.nr;
  int64_t c0 = 0;
  for (; c0 + NR <= cols; c0 += NR) K.panel(a, lda, rn, b + c0, ldb, terms, y + c0, ldy, NR);
  if (c0 == cols) return;
  for (int64_t r = 0; r < rn; r++) std::fill(y + r * ldy + c0, y + r * ldy + cols, -0.f);
  for (int64_t t = 0; t < terms; t++) {
    for (int64_t r = 0; r < rn; r++) K.axpy(a[r * lda + t], b + t * ldb + c0, y + r * ldy + c0, cols - c0);
  }
}

// KV is float (the cache read in place) or uint16_t (f16 bits, converted per block).
template <class KV>
void attentionT(const Ctx& c, const float* q, const KV* k, const KV* v, const float* bias, float* y,
                int64_t B, int64_t M, int64_t D, int64_t N, int64_t Dv, float scale, int64_t bB, int64_t bG,
                int64_t bRow, bool kRows) {
  constexpr bool HALF = sizeof(KV) == 2;
  const int fault = attentionFault.load(std::memory_order_relaxed);
  const float sc = fault == 2 ? scale * 1.0625f : scale;
  const IsaKernels& K = *c.k;
  const int64_t blocks = (M + RB - 1) / RB;
  auto body = [&](int64_t p0, int64_t p1) {
    thread_local std::vector<float> scratch;
    if (scratch.size() < size_t(RB * N)) scratch.resize(size_t(RB * N));
    float* const S = scratch.data();  // the block's scores, then weights: row r at S + r*N
    thread_local std::vector<float> kvScratch;
    for (int64_t p = p0; p < p1; p++) {
      const int64_t b = p / blocks, m0 = (p % blocks) * RB;
      const int64_t rn = std::min(RB, M - m0);
      const float* qb = q + (b * M + m0) * D;
      float* yb = y + (b * M + m0) * Dv;
      int64_t L[RB];
      const float* br[RB];
      int64_t Lmax = 0;
      for (int64_t r = 0; r < rn; r++) {
        const int64_t m = m0 + r;
        br[r] = bias + b * bB + (m / bG) * bRow;
        int64_t l = N;
        while (l > 0 && masked(br[r][l - 1])) l--;
        if (l == 0) l = N;
        if (fault == 1 && l > 0) l--;
        L[r] = l;
        Lmax = std::max(Lmax, l);
      }
      // The head's keys ([Lmax, D] rows with kRows, else [D, ldk]) and values [Lmax, Dv] as f32: in
      // place, or converted from f16.
      const float* kb;
      const float* vb;
      int64_t ldk = kRows ? D : N;
      if constexpr (HALF) {
        const auto cvt = fault == 3 ? &bf16Row : K.halfRow;
        if (kvScratch.size() < size_t(Lmax * (D + Dv))) kvScratch.resize(size_t(Lmax * (D + Dv)));
        float* kf = kvScratch.data();
        float* vf = kf + Lmax * D;
        if (kRows) {
          cvt(k + b * N * D, kf, Lmax * D);
        } else {
          for (int64_t d = 0; d < D; d++) cvt(k + (b * D + d) * N, kf + d * Lmax, Lmax);
          ldk = Lmax;
        }
        cvt(v + b * N * Dv, vf, Lmax * Dv);
        kb = kf;
        vb = vf;
      } else {
        kb = k + b * D * N;
        vb = v + b * N * Dv;
      }
      // Scores of positions [0, Lmax) for the block's rows, in the dot16 order either way.
      if (kRows) K.scoreRows(qb, D, rn, kb, ldk, D, Lmax, S, N);
      else K.scoreCols(qb, D, rn, kb, ldk, D, Lmax, S, N);
      for (int64_t r = 0; r < rn; r++) {
        float* sr = S + r * N;
        const float* bz = br[r];
        const int64_t l = L[r];
        // -ffp-contract=off: the product and the sum round separately, as the unfused body's steps.
        for (int64_t j = 0; j < l; j++) sr[j] = sr[j] * sc + bz[j];
        const float mx = K.rowMax(sr, l);
        K.expRow(sr, mx, sr, l);
        const float sum = K.rowSum(sr, l);
        K.binary[OP_DIV](sr, 1, &sum, 0, sr, l);
        // Past the row's own L (read by the block's longer rows) its weights are exactly 0.
        std::fill(sr + l, sr + Lmax, 0.f);
      }
      // y = weights [rn, Lmax] x v [Lmax, Dv]: a decode's few rows stream the value rows once (two
      // rows per pass), a prefill's block runs on the panels; the same chain per output either way.
      if (blocks == 1) K.weightRows(S, N, rn, vb, Dv, Lmax, yb, Dv, Dv);
      else product(K, S, N, rn, vb, Dv, Lmax, yb, Dv, Dv);
      // No key at all (N = 0): the sum of no terms, +0, as the unfused matmul gives.
      if (Lmax == 0) std::fill(yb, yb + rn * Dv, 0.f);
    }
  };
  const int64_t pieces = B * blocks;
  if (c.team->size() == 1 || pieces <= 1 || B * M * N * (D + Dv) < (1 << 16)) {
    body(0, pieces);
    return;
  }
  c.team->run(pieces, 1, [&](int, int64_t b, int64_t e) { body(b, e); });
}

}  // namespace

void attention(const Ctx& c, const float* q, const float* k, const float* v, const float* bias, float* y,
               int64_t B, int64_t M, int64_t D, int64_t N, int64_t Dv, float scale, int64_t bB, int64_t bG,
               int64_t bRow, bool kRows) {
  attentionT<float>(c, q, k, v, bias, y, B, M, D, N, Dv, scale, bB, bG, bRow, kRows);
}

void attentionF16(const Ctx& c, const float* q, const uint16_t* k, const uint16_t* v, const float* bias, float* y,
                  int64_t B, int64_t M, int64_t D, int64_t N, int64_t Dv, float scale, int64_t bB, int64_t bG,
                  int64_t bRow, bool kRows) {
  attentionT<uint16_t>(c, q, k, v, bias, y, B, M, D, N, Dv, scale, bB, bG, bRow, kRows);
}

}  // namespace host
