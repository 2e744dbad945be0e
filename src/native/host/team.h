// The addon's thread team (a fork-join team, as OpenMP calls it; "pool" is piscina's word here):
// `threads` lanes, the calling thread being lane 0, so a team of 1 starts no thread. A job is cut into pieces that lanes claim one at a time from a shared counter, so a lane
// the OS has descheduled (the cores are shared) costs only the piece it holds: the others take the
// rest, and the caller never waits for a lane that has not started. Idle lanes spin briefly (a
// transformer step runs hundreds of kernels back to back) and then sleep on a condition variable.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace host {

class Team {
 public:
  explicit Team(int threads);
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  int size() const { return lanes_; }

  // Calls body(lane, begin, end) over [0, count) in pieces of `grain` (the last may be short; more
  // pieces than 2^20 are merged into larger ones), and returns when every piece is done. A single
  // piece, or a team of one lane, runs on the caller alone. An exception from a piece is rethrown here.
  void run(int64_t count, int64_t grain, const std::function<void(int lane, int64_t begin, int64_t end)>& body);

 private:
  void worker(int lane);
  // Claims and runs pieces of job `gen` until none are left; false when the job is not `gen` any more.
  void drain(uint64_t gen, int lane);

  const int lanes_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  // The job in flight: generation (24 bits) | pieces (20 bits) | next piece (20 bits). A lane claims a
  // piece with a compare-and-swap, which fails once the job is another generation's, so a late lane
  // never runs a piece of a job it did not see published.
  std::atomic<uint64_t> claim_{0};
  std::atomic<int64_t> done_{0};
  const std::function<void(int, int64_t, int64_t)>* body_ = nullptr;
  int64_t count_ = 0;
  int64_t grain_ = 1;
  std::exception_ptr error_;
  std::mutex errorMu_;
};

}  // namespace host
