#include "pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HOST_PAUSE() _mm_pause()
#else
#define HOST_PAUSE() std::this_thread::yield()
#endif

namespace host {
namespace {

// About 50 microseconds of spinning before a lane sleeps: long enough to catch the next kernel of a
// step, short enough not to burn a shared core between steps.
constexpr int SPINS = 20000;

}  // namespace

Pool::Pool(int threads) : lanes_(threads < 1 ? 1 : threads) {
  for (int i = 1; i < lanes_; i++) threads_.emplace_back([this, i] { worker(i); });
}

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void Pool::share(int lane, int lanes) {
  // Lane i takes pieces [i*per, (i+1)*per) of the job's pieces, the remainder going to the first lanes.
  const int64_t pieces = (count_ + grain_ - 1) / grain_;
  const int64_t per = pieces / lanes;
  const int64_t extra = pieces % lanes;
  const int64_t p0 = lane * per + (lane < extra ? lane : extra);
  const int64_t p1 = p0 + per + (lane < extra ? 1 : 0);
  const int64_t begin = p0 * grain_;
  const int64_t end = p1 * grain_ < count_ ? p1 * grain_ : count_;
  if (begin >= end) return;
  try {
    (*body_)(lane, begin, end);
  } catch (...) {
    std::lock_guard<std::mutex> g(errorMu_);
    if (!error_) error_ = std::current_exception();
  }
}

void Pool::worker(int lane) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = generation_.load(std::memory_order_acquire);
    for (int i = 0; gen == seen && i < SPINS; i++) {
      HOST_PAUSE();
      gen = generation_.load(std::memory_order_acquire);
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lk(mu_);
      wake_.wait(lk, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      gen = generation_.load(std::memory_order_acquire);
    }
    seen = gen;
    if (stop_.load()) return;
    // Every lane acknowledges every job, even one too small to give it a share: then no lane can
    // still be reading this job's fields when the caller writes the next one.
    if (lane < active_) share(lane, active_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void Pool::run(int64_t count, int64_t grain, const std::function<void(int, int64_t, int64_t)>& body) {
  if (count <= 0) return;
  if (grain < 1) grain = 1;
  const int64_t pieces = (count + grain - 1) / grain;
  const int lanes = pieces < lanes_ ? int(pieces) : lanes_;
  if (lanes <= 1) {
    body(0, 0, count);
    return;
  }
  body_ = &body;
  count_ = count;
  grain_ = grain;
  active_ = lanes;
  error_ = nullptr;
  pending_.store(lanes_ - 1, std::memory_order_release);
  {
    // Taking the lock orders the bump against a lane that is about to sleep, so none misses it.
    std::lock_guard<std::mutex> g(mu_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  wake_.notify_all();
  share(0, lanes);
  while (pending_.load(std::memory_order_acquire) != 0) HOST_PAUSE();
  body_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

}  // namespace host
