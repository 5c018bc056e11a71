// When the scheduling loop runs its next cycle (scheduler.cpp): at once when a watched
// collection changed (the pod informer calls `notify` for every change it takes), but never
// before `earliest` (the loop idles at least as long as its last cycle took), and at the
// latest at `latest` (time moves on without a change: checkpoints, leases, timeouts). A loop
// that only polled every 100 ms let a freed GPU or a new pod wait up to a whole period before
// anything looked at it.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace ds::k8s {

class Wakeup {
 public:
  using Clock = std::chrono::steady_clock;
  void notify() {
    {
      const std::lock_guard lock(mu_);
      ++changes_;
    }
    cv_.notify_all();
  }
  // How many changes so far: a cycle notes it before it reads the caches, so that a change
  // it may have missed wakes the next one.
  [[nodiscard]] std::uint64_t changes() const {
    const std::lock_guard lock(mu_);
    return changes_;
  }
  // Returns once a change after `seen` arrived and `earliest` passed, or at `latest`; true
  // when woken by a change.
  bool wait(std::uint64_t seen, Clock::time_point earliest, Clock::time_point latest) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_until(lock, latest, [&] { return changes_ != seen; })) return false;
    lock.unlock();
    if (Clock::now() < earliest) std::this_thread::sleep_until(std::min(earliest, latest));
    return true;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t changes_ = 0;
};

}  // namespace ds::k8s
