// Core vocabulary shared by every layer: typed dense ids and integer time.
//
// Why: the simulator, the policies and the Slurm driver index plain vectors by id,
// so ids are dense uint32 values; the tag type keeps a JobId from being passed
// where a NodeId is expected. Time is int64 milliseconds so that every run is
// exact and reproducible (no floating-point clock).
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace ds {

template <class Tag>
struct Id {
  std::uint32_t value = std::numeric_limits<std::uint32_t>::max();

  constexpr Id() = default;
  constexpr explicit Id(std::uint32_t v) : value(v) {}
  [[nodiscard]] constexpr bool valid() const {
    return value != std::numeric_limits<std::uint32_t>::max();
  }
  [[nodiscard]] constexpr std::uint32_t index() const { return value; }
  constexpr auto operator<=>(const Id&) const = default;
};

using JobId = Id<struct JobTag>;
using TenantId = Id<struct TenantTag>;
using NodeId = Id<struct NodeTag>;
using UserId = Id<struct UserTag>;

// Milliseconds since the trace's epoch.
using Time = std::int64_t;
constexpr Time kMillisecond = 1;
constexpr Time kSecond = 1000;
constexpr Time kMinute = 60 * kSecond;
constexpr Time kHour = 60 * kMinute;
constexpr Time kDay = 24 * kHour;
constexpr Time kNever = std::numeric_limits<Time>::max();

constexpr Time seconds(std::int64_t s) {
  return s * kSecond;
}
constexpr double to_seconds(Time t) {
  return static_cast<double>(t) / kSecond;
}

}  // namespace ds

template <class Tag>
struct std::hash<ds::Id<Tag>> {
  std::size_t operator()(ds::Id<Tag> id) const noexcept { return id.value; }
};
