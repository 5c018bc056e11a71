// Time of an online driver. The engine's wall clock (Unix ms) comes through the Clock port
// (a fake cluster gives a manual one); the driver's own time, in which the policy and
// ClusterState count, is wall time x scale from an origin (DriverClock: 1 for a production
// controller, e.g. 60 for a time-scaled replay), persisted in the journal so that a
// restarted controller keeps it.
#pragma once

#include <cstdint>

#include "core/types.hpp"

namespace ds::driver {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::int64_t now_ms() = 0;  // wall time, Unix ms
};

class SystemClock final : public Clock {
 public:
  std::int64_t now_ms() override;
};

std::int64_t wall_now_ms();

struct DriverClock {
  std::int64_t wall0_ms = 0;  // wall time (Unix ms) at driver time `origin`
  Time origin = 0;
  double scale = 1.0;
  [[nodiscard]] Time at(std::int64_t wall_ms) const {
    return origin + static_cast<Time>(static_cast<double>(wall_ms - wall0_ms) * scale);
  }
};

// The time of a controller cycle whose clock reads `clock`, after a cycle at `previous`:
// the clock, except that a cycle that has passed the time the policy asked to be woken at
// (`wake_at`, Decisions::wake_at; kNever: none) runs at exactly that time, and never earlier
// than the previous cycle. A wake time that is reached is consumed (set to kNever).
Time cycle_time(Time previous, Time clock, Time& wake_at);

}  // namespace ds::driver
