// Exponential backoff with full jitter, for retrying API calls that failed retryably.
//
// The n-th consecutive failure (n from 0) waits a uniform draw from [c/2, c], with
// c = min(max, initial * 2^n): the jitter keeps clients that failed together from retrying
// together, the floor keeps a failing server from being hammered. reset() after a success. The
// draws come from a seeded ds::Rng, so a test sees the same waits every run.
#pragma once

#include <chrono>
#include <cstdint>

#include "core/rng.hpp"

namespace ds::k8s {

struct BackoffOptions {
  std::chrono::milliseconds initial{200};
  std::chrono::milliseconds max{30000};
  std::uint64_t seed = 1;
};

class Backoff {
 public:
  explicit Backoff(BackoffOptions options = {}) : options_(options), rng_(options.seed) {}
  // The wait before the next retry; each call counts one more failure.
  std::chrono::milliseconds next();
  void reset() { failures_ = 0; }
  [[nodiscard]] int failures() const { return failures_; }
  // The cap of the next wait (before jitter): initial * 2^failures, at most max.
  [[nodiscard]] std::chrono::milliseconds ceiling() const;

 private:
  BackoffOptions options_;
  Rng rng_;
  int failures_ = 0;
};

}  // namespace ds::k8s
