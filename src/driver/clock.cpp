#include "driver/clock.hpp"

#include <algorithm>
#include <chrono>

namespace ds::driver {

std::int64_t wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t SystemClock::now_ms() {
  return wall_now_ms();
}

Time cycle_time(Time previous, Time clock, Time& wake_at) {
  Time t = clock;
  if (wake_at != kNever && wake_at <= clock) {
    t = wake_at;
    wake_at = kNever;
  }
  return std::max(previous, t);
}

}  // namespace ds::driver
