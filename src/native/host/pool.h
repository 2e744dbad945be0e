// The addon's thread pool: `threads` lanes, the calling thread being lane 0, so a pool of 1 starts no
// thread. A job is split into one contiguous range per lane; lanes wait for work by spinning briefly
// (a transformer step runs hundreds of small kernels back to back) and then sleeping on a condition
// variable, so an idle pool costs no CPU.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace host {

class Pool {
 public:
  explicit Pool(int threads);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  int size() const { return lanes_; }

  // Calls body(lane, begin, end) on every lane with the lane's share of [0, count), in `grain`-sized
  // pieces (the last may be short), and returns when all are done. A count of at most one grain, or a
  // pool of one lane, runs on the caller alone. An exception from a lane is rethrown here.
  void run(int64_t count, int64_t grain, const std::function<void(int lane, int64_t begin, int64_t end)>& body);

 private:
  void worker(int lane);
  void share(int lane, int lanes);

  const int lanes_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  // The job in flight, read by the lanes after they see a new generation.
  const std::function<void(int, int64_t, int64_t)>* body_ = nullptr;
  int64_t count_ = 0;
  int64_t grain_ = 1;
  int active_ = 1;
  std::exception_ptr error_;
  std::mutex errorMu_;
};

}  // namespace host
