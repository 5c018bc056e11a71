#include "driver/fence.hpp"

#include <limits>

namespace ds::driver {

bool Fence::acting() {
  if (deposed_) return false;
  if (lease_ && !lease_->held()) {
    depose("the lease was lost or taken over: " + lease_->describe());
    return false;
  }
  return true;
}

bool Fence::may_send() {
  if (!acting()) {
    ++fenced_;
    error_ = "not the leader: nothing sent";
    return false;
  }
  error_.clear();
  ++sent_;
  return true;
}

std::int64_t Fence::send_window_ms() const {
  if (deposed_) return 0;
  return lease_ ? lease_->held_for_ms() : std::numeric_limits<std::int64_t>::max();
}

void Fence::depose(const std::string& why) {
  if (deposed_) return;
  deposed_ = true;
  log_.error("deposed", {{"epoch", epoch()}, {"detail", why + "; this controller stops acting"}});
  journal_.line("deposed " + why);
}

}  // namespace ds::driver
