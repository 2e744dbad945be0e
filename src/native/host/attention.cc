// The fused attention record (list.h K_ATTENTION): per kv head b and query row m,
//   a_j = fl(fl(s_j * scale) + bias_j), s_j = q[b, m, :] . k[b, :, j]   for j < L,
//   y[b, m, :] = sum_j softmax(a)_j * v[b, j, :],
// where L is 1 + the last position whose bias is not masked (bias <= -1e30 or -inf, the mask of
// src/model/qwen3/layers.ts): positions from L on have weight exactly 0 in the unfused math (where
// the scaled scores are below 2^98 in magnitude: docs/HOST.md), so they are never read. A row whose
// every position is masked takes all N, as the unfused softmax would. Keys are read as a KV cache
// holds them, [D, N] per head, so the scores accumulate over d with contiguous runs of j; grouped
// query rows of one kv head share its K and V rows in place (no broadcast). The softmax is the
// unfused body's: the ISA table's row_max, exp (f64, rounded once), row_sum and a division.
#include <algorithm>
#include <atomic>
#include <vector>

#include "ops.h"

namespace host {
namespace {

std::atomic<int> attentionFault{0};

// Rows of one head handled together, so each K and V row is read once per block.
constexpr int64_t RB = 4;

inline bool masked(float b) { return b <= -1e30f; }

}  // namespace

void setAttentionFault(int mode) { attentionFault.store(mode, std::memory_order_relaxed); }

void attention(const Ctx& c, const float* q, const float* k, const float* v, const float* bias, float* y,
               int64_t B, int64_t M, int64_t D, int64_t N, int64_t Dv, float scale, int64_t bB, int64_t bG,
               int64_t bRow) {
  const int fault = attentionFault.load(std::memory_order_relaxed);
  const float sc = fault == 2 ? scale * 1.0625f : scale;
  const IsaKernels& K = *c.k;
  const int64_t blocks = (M + RB - 1) / RB;
  auto body = [&](int64_t p0, int64_t p1) {
    thread_local std::vector<float> scratch;
    if (scratch.size() < size_t(RB * N)) scratch.resize(size_t(RB * N));
    for (int64_t p = p0; p < p1; p++) {
      const int64_t b = p / blocks, m0 = (p % blocks) * RB;
      const int64_t rn = std::min(RB, M - m0);
      const float* kb = k + b * D * N;
      const float* vb = v + b * N * Dv;
      int64_t L[RB];
      const float* br[RB];
      float* s[RB];
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
        s[r] = scratch.data() + r * N;
        std::fill(s[r], s[r] + l, -0.f);
      }
      for (int64_t d = 0; d < D; d++) {
        const float* kr = kb + d * N;
        for (int64_t r = 0; r < rn; r++) K.axpy(q[(b * M + m0 + r) * D + d], kr, s[r], L[r]);
      }
      for (int64_t r = 0; r < rn; r++) {
        float* sr = s[r];
        const float* bz = br[r];
        const int64_t l = L[r];
        // -ffp-contract=off: the product and the sum round separately, as the unfused body's steps.
        for (int64_t j = 0; j < l; j++) sr[j] = sr[j] * sc + bz[j];
        const float mx = K.rowMax(sr, l);
        K.expRow(sr, mx, sr, l);
        const float sum = K.rowSum(sr, l);
        K.binary[OP_DIV](sr, 1, &sum, 0, sr, l);
        float* yr = y + (b * M + m0 + r) * Dv;
        std::fill(yr, yr + Dv, l == 0 ? 0.f : -0.f);
      }
      for (int64_t j = 0; j < Lmax; j++) {
        const float* vr = vb + j * Dv;
        for (int64_t r = 0; r < rn; r++) {
          if (j < L[r]) K.axpy(s[r][j], vr, y + (b * M + m0 + r) * Dv, Dv);
        }
      }
    }
  };
  const int64_t pieces = B * blocks;
  if (c.pool->size() == 1 || pieces <= 1 || B * M * N * (D + Dv) < (1 << 16)) {
    body(0, pieces);
    return;
  }
  c.pool->run(pieces, 1, [&](int, int64_t b, int64_t e) { body(b, e); });
}

}  // namespace host
