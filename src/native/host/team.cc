#include "team.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HOST_PAUSE() _mm_pause()
#else
#define HOST_PAUSE() std::this_thread::yield()
#endif

namespace host {
namespace {

constexpr int PIECE_BITS = 20;
constexpr uint64_t PIECE_MASK = (uint64_t(1) << PIECE_BITS) - 1;
constexpr int64_t MAX_PIECES = int64_t(PIECE_MASK);
// How long an idle lane spins before it sleeps: long enough to catch the next kernel of a step,
// short enough not to hold a shared core between steps.
constexpr auto SPIN = std::chrono::microseconds(200);

uint64_t genOf(uint64_t c) { return c >> (2 * PIECE_BITS); }
uint64_t piecesOf(uint64_t c) { return (c >> PIECE_BITS) & PIECE_MASK; }
uint64_t nextOf(uint64_t c) { return c & PIECE_MASK; }

}  // namespace

Team::Team(int threads) : lanes_(threads < 1 ? 1 : threads) {
  for (int i = 1; i < lanes_; i++) threads_.emplace_back([this, i] { worker(i); });
}

Team::~Team() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void Team::drain(uint64_t gen, int lane) {
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    if ((genOf(c) & 0xffffff) != (gen & 0xffffff) || nextOf(c) >= piecesOf(c)) return;
    if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    // The claimed piece keeps this job (and body_, count_, grain_) alive until it is counted done.
    const int64_t begin = int64_t(nextOf(c)) * grain_;
    const int64_t end = begin + grain_ < count_ ? begin + grain_ : count_;
    try {
      (*body_)(lane, begin, end);
    } catch (...) {
      std::lock_guard<std::mutex> g(errorMu_);
      if (!error_) error_ = std::current_exception();
    }
    done_.fetch_add(1, std::memory_order_acq_rel);
    c = claim_.load(std::memory_order_acquire);
  }
}

void Team::worker(int lane) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = generation_.load(std::memory_order_acquire);
    if (gen == seen) {
      const auto until = std::chrono::steady_clock::now() + SPIN;
      while (gen == seen) {
        for (int i = 0; i < 64 && gen == seen; i++) {
          HOST_PAUSE();
          gen = generation_.load(std::memory_order_acquire);
        }
        if (std::chrono::steady_clock::now() > until) break;
      }
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lk(mu_);
      wake_.wait(lk, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      gen = generation_.load(std::memory_order_acquire);
    }
    seen = gen;
    if (stop_.load()) return;
    drain(gen, lane);
  }
}

void Team::run(int64_t count, int64_t grain, const std::function<void(int, int64_t, int64_t)>& body) {
  if (count <= 0) return;
  if (grain < 1) grain = 1;
  if ((count + grain - 1) / grain > MAX_PIECES) grain = (count + MAX_PIECES - 1) / MAX_PIECES;
  const int64_t pieces = (count + grain - 1) / grain;
  if (pieces <= 1 || lanes_ == 1) {
    body(0, 0, count);
    return;
  }
  body_ = &body;
  count_ = count;
  grain_ = grain;
  error_ = nullptr;
  done_.store(0, std::memory_order_relaxed);
  uint64_t gen;
  {
    // Under the lock, so a lane about to sleep cannot miss the bump.
    std::lock_guard<std::mutex> g(mu_);
    gen = generation_.load(std::memory_order_relaxed) + 1;
    claim_.store(((gen & 0xffffff) << (2 * PIECE_BITS)) | (uint64_t(pieces) << PIECE_BITS), std::memory_order_release);
    generation_.store(gen, std::memory_order_release);
  }
  wake_.notify_all();
  drain(gen, 0);
  // The last pieces are in other lanes' hands. On oversubscribed cores such a lane may be waiting for
  // a CPU, so after a short spin this thread yields its own.
  for (int spins = 0; done_.load(std::memory_order_acquire) != pieces; spins++) {
    if (spins < 4096) HOST_PAUSE();
    else std::this_thread::yield();
  }
  body_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

}  // namespace host
