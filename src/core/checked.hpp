// Overflow-checked arithmetic for the places where values that came from input meet.
//
// Why: inputs are range-checked at the edges (core/limits.hpp), but a few computations
// combine them (a time scaled by a factor, seconds given as a double, a completion time
// divided by a slowdown). These helpers make such a step fail visibly instead of wrapping
// or, for a double converted to an integer, being undefined behaviour.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

#include "core/types.hpp"

namespace ds {

// a + b and a * b; nullopt on overflow.
inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// `v` rounded to the nearest integer when it is finite and within [lo, hi]; else nullopt.
// (Converting a double outside int64's range to an integer is undefined behaviour.)
inline std::optional<std::int64_t> round_in_range(double v, std::int64_t lo, std::int64_t hi) {
  if (!std::isfinite(v)) return std::nullopt;
  const double r = std::round(v);  // halves away from zero, as std::llround
  if (r < static_cast<double>(lo) || r > static_cast<double>(hi)) return std::nullopt;
  if (r >= 9223372036854775808.0 || r < -9223372036854775808.0) return std::nullopt;  // 2^63
  const auto i = static_cast<std::int64_t>(r);
  if (i < lo || i > hi) return std::nullopt;  // lo, hi are not all exact as doubles
  return i;
}

// Seconds (a double from input) -> milliseconds, rounded; nullopt when outside [lo, hi] ms.
inline std::optional<Time> seconds_to_ms(double s, Time lo, Time hi) {
  return round_in_range(s * static_cast<double>(kSecond), lo, hi);
}

// An int64 sum shown where an int is kept (a count in a sample), clamped to int's range.
inline int saturate_int(std::int64_t v) {
  constexpr std::int64_t kMax = 2147483647;
  return static_cast<int>(v > kMax ? kMax : v < -kMax ? -kMax : v);
}

// A time computed in floating point, clamped to +-2^61 ms: two of them still add up
// without overflow, and the simulator's cap on simulated time turns it into an error.
inline Time saturating_time(double ms) {
  constexpr double kLimit = 2305843009213693952.0;  // 2^61
  if (std::isnan(ms)) return static_cast<Time>(kLimit);
  if (ms >= kLimit) return static_cast<Time>(kLimit);
  if (ms <= -kLimit) return -static_cast<Time>(kLimit);
  return static_cast<Time>(ms);
}

}  // namespace ds
