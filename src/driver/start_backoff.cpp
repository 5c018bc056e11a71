#include "driver/start_backoff.hpp"

#include <algorithm>

namespace ds::driver {

int StartBackoff::timed_out(JobId id, std::int64_t wall) {
  Entry& e = jobs_[id.index()];
  ++e.in_a_row;
  if (e.in_a_row < 2) {
    e.until = 0;
    return e.in_a_row;
  }
  // base x 2^(n-2), capped (the shift is bounded so that it cannot overflow)
  const int shift = std::min(e.in_a_row - 2, 30);
  const std::int64_t wait = std::min(cap_ms_, base_ms_ << shift);
  e.until = wall + std::max<std::int64_t>(wait, 0);
  return e.in_a_row;
}

std::int64_t StartBackoff::until(JobId id) const {
  const auto it = jobs_.find(id.index());
  return it == jobs_.end() ? 0 : it->second.until;
}

}  // namespace ds::driver
