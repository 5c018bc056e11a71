#include "k8s/backoff.hpp"

namespace ds::k8s {

std::chrono::milliseconds Backoff::ceiling() const {
  std::int64_t c = options_.initial.count();
  for (int i = 0; i < failures_ && c < options_.max.count(); ++i) c *= 2;
  return std::chrono::milliseconds(c < options_.max.count() ? c : options_.max.count());
}

std::chrono::milliseconds Backoff::next() {
  const auto cap = ceiling().count();
  ++failures_;
  const auto half = cap / 2;
  return std::chrono::milliseconds(
      half + static_cast<std::int64_t>(rng_.below(static_cast<std::uint64_t>(cap - half) + 1)));
}

}  // namespace ds::k8s
