#include "matmul.h"

#include <vector>

#include "dequant.h"

namespace host {
namespace {

// A lane's share of a decode matmul is at least this many weight bytes: below it, waking a lane
// costs more than the lane saves.
constexpr uint64_t MIN_SHARE_BYTES = 48 * 1024;
// Below this many activation rows, streaming the weight once per row with the decode kernel costs
// less than dequantizing it into panels (measured: the panels cost about 1 ns per weight to build,
// a decode pass about 0.1 ns per weight from memory).
constexpr int64_t PANEL_ROWS = 12;

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

void matmulWeight(const Ctx& c, const float* x, int64_t T, const WeightView& w, float* y) {
  const IsaKernels& k = *c.k;
  if (T < PANEL_ROWS) {
    const GemvFn f = k.gemv[w.type];
    // Rows per piece: whole q4nx tile rows (32) and whole 4-row groups, and at least MIN_SHARE_BYTES.
    const uint64_t rowBytes = w.type == W_Q4NX_Q41 ? uint64_t(w.kTiles) * Q4NX_TILE_BYTES / Q4NX_TILE_ROWS : w.rowBytes;
    const int64_t grain = roundUp(int64_t(MIN_SHARE_BYTES / (rowBytes ? rowBytes : 1)) + 1, 32);
    for (int64_t t = 0; t < T; t++) {
      const float* xt = x + t * w.k;
      float* yt = y + t * w.n;
      c.pool->run(w.n, grain, [&](int, int64_t n0, int64_t n1) { f(xt, w, n0, n1, yt); });
    }
    return;
  }
  const int64_t nr = k.nr;
  const int64_t panels = (w.n + nr - 1) / nr;
  c.pool->run(panels, 1, [&](int, int64_t p0, int64_t p1) {
    std::vector<float> wp(size_t(w.k * nr));
    std::vector<float> row(size_t(w.k * nr));
    for (int64_t p = p0; p < p1; p++) {
      const int64_t n0 = p * nr;
      const int64_t cols = w.n - n0 < nr ? w.n - n0 : nr;
      dequantPanel(w, n0, cols, nr, wp.data(), row.data());
      k.panel(x, w.k, T, wp.data(), nr, w.k, y + n0, w.n, cols);
    }
  });
}

void matmulF32(const Ctx& c, const float* a, const float* b, float* out, int64_t batch, int64_t M, int64_t K, int64_t N) {
  const IsaKernels& k = *c.k;
  const int64_t nr = k.nr;
  const int64_t panels = (N + nr - 1) / nr;
  if (K == 0) {
    // An empty dot product is +0 (src/ops/matmul.ts).
    for (int64_t i = 0; i < batch * M * N; i++) out[i] = 0.f;
    return;
  }
  // One piece is one panel of one batch: the pool spreads a batch of small products (attention's
  // heads) as well as one large one; small work stays in one piece.
  const int64_t pieces = batch * panels;
  const int64_t grain = M * K * nr * batch >= (1 << 15) ? 1 : pieces;
  c.pool->run(pieces, grain, [&](int, int64_t q0, int64_t q1) {
    std::vector<float> pack;
    for (int64_t q = q0; q < q1; q++) {
      const int64_t p = q / panels;
      const float* ab = a + p * M * K;
      const float* bb = b + p * K * N;
      float* ob = out + p * M * N;
      const int64_t n0 = (q % panels) * nr;
      const int64_t cols = N - n0 < nr ? N - n0 : nr;
      if (cols == nr) {
        k.panel(ab, K, M, bb + n0, N, K, ob + n0, N, cols);
        continue;
      }
      // The last, narrow panel is copied out zero-padded: the kernel reads whole vectors.
      pack.assign(size_t(K * nr), 0.f);
      for (int64_t kk = 0; kk < K; kk++) {
        for (int64_t j = 0; j < cols; j++) pack[size_t(kk * nr + j)] = bb[kk * N + n0 + j];
      }
      k.panel(ab, K, M, pack.data(), nr, K, ob + n0, N, cols);
    }
  });
}

void matmulF32T(const Ctx& c, const float* a, const float* b, float* out, int64_t batch, int64_t M, int64_t K, int64_t N) {
  for (int64_t p = 0; p < batch; p++) {
    float* ob = out + p * M * N;
    if (K == 0 || N == 0) {
      for (int64_t i = 0; i < M * N; i++) ob[i] = 0.f;
      continue;
    }
    WeightView w;
    w.data = reinterpret_cast<const uint8_t*>(b + p * N * K);
    w.type = W_F32;
    w.k = K;
    w.n = N;
    w.rowBytes = size_t(K) * 4;
    if (M > 0) matmulWeight(c, a + p * M * K, M, w, ob);
  }
}

}  // namespace host
