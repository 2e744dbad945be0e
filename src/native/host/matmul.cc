#include "matmul.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <cstring>

#include "dequant.h"
#include "failure.h"

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

std::atomic<bool> dropBlock{false};
std::atomic<bool> q8Round{false};

// The q8 path's threads split the output columns in tiles of 16, each tile at least this many weight
// bytes (as MIN_SHARE_BYTES); rows are quantized first, one piece per row.
// The calling thread's buffer for the quantized activations, kept between calls: a prefill's matmuls
// would otherwise allocate and zero up to a few MB each (fresh pages from the OS, every call).
// Every byte a call reads is written by its quantization first.
struct Q8Scratch {
  std::unique_ptr<uint8_t[]> p;
  size_t cap = 0;
  uint8_t* get(size_t bytes) {
    if (bytes > cap) {
      p.reset(new uint8_t[bytes]);
      cap = bytes;
    }
    return p.get();
  }
};

void matmulQ8Of(const Ctx& c, const float* x, int64_t T, const WeightView& w, float* y, Q8TileFn f) {
  const IsaKernels& k = *c.k;
  const int64_t kb = (w.k + 31) / 32;
  // One allocation: the codes (T*kb*32 bytes), then the scales, the half sums and the offset terms
  // (4-byte aligned).
  static thread_local Q8Scratch scratch;
  const size_t n = size_t(T * kb);
  uint8_t* buf = scratch.get(n * (32 + 4 + 8 + 4));
  int8_t* q = reinterpret_cast<int8_t*>(buf);
  float* d = reinterpret_cast<float*>(buf + n * 32);
  int32_t* s = reinterpret_cast<int32_t*>(buf + n * 36);
  int32_t* oc = reinterpret_cast<int32_t*>(buf + n * 44);
  const int32_t off = w.type == W_Q4_0 ? 8 : w.type == W_Q8_0 ? 128
                                                              : 0;
  const bool fault = q8Round.load(std::memory_order_relaxed);
  // Pieces of 16 rows: in the block-major layout neighbouring rows share cache lines (32 code bytes,
  // 4-byte scales), so rows spread one by one over the lanes would have them write the same lines.
  c.team->run(T, T * w.k >= (1 << 14) ? 16 : T, [&](int, int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; t++) {
      k.q8quant(x + t * w.k, w.k, kb, q + t * 32, d + t, s + t * 2, T, fault);
      for (int64_t b = 0; b < kb; b++) oc[b * T + t] = -off * (s[(b * T + t) * 2] + s[(b * T + t) * 2 + 1]);
    }
  });
  // Block-major: a tile reads block b of its rows from one contiguous run (row-major, rows K bytes
  // apart, fell into a few L1 sets).
  const Q8Act a{q, d, s, oc, kb, 1, T};
  const uint64_t rowBytes = w.type == W_Q4NX_Q41 ? uint64_t(w.kTiles) * Q4NX_TILE_BYTES / Q4NX_TILE_ROWS : w.rowBytes;
  const int64_t tiles = (w.n + 15) / 16;
  const int64_t grain = int64_t(MIN_SHARE_BYTES / (16 * (rowBytes ? rowBytes : 1))) / std::max<int64_t>(1, T) + 1;
  c.team->run(tiles, grain, [&](int, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; p++) {
      const int64_t n0 = p * 16;
      const int nt = int(std::min<int64_t>(16, w.n - n0));
      for (int64_t t0 = 0; t0 < T; t0 += Q8_ROWS) f(w, n0, nt, a, t0, int(std::min<int64_t>(Q8_ROWS, T - t0)), y, w.n);
    }
  });
}

void matmulWeightOf(const Ctx& c, const float* x, int64_t T, const WeightView& w, float* y);

}  // namespace

void setDropBlockFault(bool on) { dropBlock = on; }

// Runs `f` on w, or, under the drop-block fault, on a copy of the weight with its first block zeroed
// in every row (a q4nx tile holds one block of 32 rows): what a kernel that skipped that block would
// compute.
template <class F>
void withFault(const WeightView& w, F f) {
  uint64_t bytes = 0;
  std::string why;
  if (!dropBlock.load(std::memory_order_relaxed) || !weightBytes(w.type, w.k, w.n, &bytes, &why)) return f(w);
  std::vector<uint8_t> copy(w.data, w.data + bytes);
  if (w.type == W_Q4NX_Q41) {
    std::fill_n(copy.begin(), Q4NX_TILE_BYTES, uint8_t(0));
  } else {
    for (int64_t r = 0; r < w.n; r++) std::fill_n(copy.begin() + r * int64_t(w.rowBytes), wtypeInfo(w.type).blockBytes, uint8_t(0));
  }
  WeightView v = w;
  v.data = copy.data();
  f(v);
}

void matmulWeight(const Ctx& c, const float* x, int64_t T, const WeightView& w, float* y) {
  withFault(w, [&](const WeightView& v) { matmulWeightOf(c, x, T, v, y); });
}

void setQ8RoundFault(bool on) { q8Round = on; }

void matmulWeightQ8(const Ctx& c, const float* x, int64_t T, const WeightView& w, float* y) {
  const IsaKernels& k = *c.k;
  const Q8TileFn f = k.q8tile[w.type];
  // The float types have no integer form: they keep the exact f32 kernels.
  if (f == nullptr) return matmulWeight(c, x, T, w, y);
  withFault(w, [&](const WeightView& v) { matmulQ8Of(c, x, T, v, y, f); });
}

namespace {

void matmulWeightOf(const Ctx& c, const float* x, int64_t T, const WeightView& w, float* y) {
  const IsaKernels& k = *c.k;
  if (T < PANEL_ROWS) {
    const GemvFn f = k.gemv[w.type];
    // Rows per piece: whole q4nx tile rows (32) and whole 4-row groups, and at least MIN_SHARE_BYTES.
    const uint64_t rowBytes = w.type == W_Q4NX_Q41 ? uint64_t(w.kTiles) * Q4NX_TILE_BYTES / Q4NX_TILE_ROWS : w.rowBytes;
    const int64_t grain = roundUp(int64_t(MIN_SHARE_BYTES / (rowBytes ? rowBytes : 1)) + 1, 32);
    for (int64_t t = 0; t < T; t++) {
      const float* xt = x + t * w.k;
      float* yt = y + t * w.n;
      c.team->run(w.n, grain, [&](int, int64_t n0, int64_t n1) { f(xt, w, n0, n1, yt); });
    }
    return;
  }
  const int64_t nr = k.nr;
  const int64_t panels = (w.n + nr - 1) / nr;
  c.team->run(panels, 1, [&](int, int64_t p0, int64_t p1) {
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

}  // namespace

void matmulId(const Ctx& c, const float* x, const int32_t* ids, float* y, int64_t T, int64_t S, int64_t B, int64_t N,
              const WeightView& w, bool q8) {
  const int64_t E = N > 0 ? w.n / N : 0;
  for (int64_t i = 0; i < T * S; i++) {
    if (ids[i] < 0 || ids[i] >= E) throw Failure::outOfRange(c.eqn, ids[i], E);
  }
  if (T * S == 0 || N == 0) return;
  const int64_t K = w.k;
  // The slots of each expert, in token order: one pass over the ids, then one matmul per chosen expert.
  std::vector<int64_t> count(size_t(E) + 1, 0);
  for (int64_t i = 0; i < T * S; i++) count[size_t(ids[i]) + 1]++;
  for (int64_t e = 0; e < E; e++) count[size_t(e) + 1] += count[size_t(e)];
  std::vector<int64_t> order(size_t(T * S));
  {
    std::vector<int64_t> at(count.begin(), count.end() - 1);
    for (int64_t i = 0; i < T * S; i++) order[size_t(at[size_t(ids[i])]++)] = i;
  }
  std::vector<float> xs, ys;
  for (int64_t e = 0; e < E; e++) {
    const int64_t n0 = count[size_t(e)], rows = count[size_t(e) + 1] - n0;
    if (rows == 0) continue;
    xs.resize(size_t(rows * K));
    ys.resize(size_t(rows * N));
    for (int64_t r = 0; r < rows; r++) {
      const int64_t slot = order[size_t(n0 + r)];
      const int64_t t = slot / S, s = slot % S;
      std::memcpy(xs.data() + r * K, x + (t * B + (B == 1 ? 0 : s)) * K, size_t(K) * sizeof(float));
    }
    // Expert e: rows [e·N, (e+1)·N) of the weight, a matrix of its own (a ggml type's rows are whole).
    WeightView v = w;
    v.data = w.data + uint64_t(e) * uint64_t(N) * w.rowBytes;
    v.n = N;
    if (q8) matmulWeightQ8(c, xs.data(), rows, v, ys.data());
    else matmulWeight(c, xs.data(), rows, v, ys.data());
    for (int64_t r = 0; r < rows; r++) {
      std::memcpy(y + order[size_t(n0 + r)] * N, ys.data() + r * N, size_t(N) * sizeof(float));
    }
  }
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
  // One piece is one panel of one batch: the team spreads a batch of small products (attention's
  // heads) as well as one large one; small work stays in one piece.
  const int64_t pieces = batch * panels;
  const int64_t grain = M * K * nr * batch >= (1 << 15) ? 1 : pieces;
  c.team->run(pieces, grain, [&](int, int64_t q0, int64_t q1) {
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
