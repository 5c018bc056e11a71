#include "driver/fence.hpp"

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

void Fence::depose(const std::string& why) {
  if (deposed_) return;
  deposed_ = true;
  log_.error("deposed", {{"epoch", epoch()}, {"detail", why + "; this controller stops acting"}});
  journal_.line("deposed " + why);
}

}  // namespace ds::driver
