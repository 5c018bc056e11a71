// Per-tenant samplers of the built-in workload generator: GPU count and duration.
//
// GPU count (SizeModel): a job is single-GPU with probability 1 - multi_share;
// otherwise its size comes from the published multi-GPU mix, restricted to sizes
// that fit the tenant (<= cap) and exponentially tilted, weight(s) = jobs(s) * s^lambda,
// with lambda found by bisection so that the tenant's mean GPUs per job matches the
// published one (clamped when the cap makes it unreachable).
//
// Duration (DurationModel): the published quantiles (p10 ... p99.9, max) joined by
// straight lines in log(seconds) form a quantile function Q(u). A tenant keeps the
// global shape but moves it to its own median m and stretches the upper half:
//   log d(u) = log m + (log Q(u) - log Q(0.5)) * (u > 0.5 ? stretch : 1),
// clamped to [1 s, published max]. The stretch is found by bisection so that the
// mean duration matches a target (the tenant's published GPU-hours per job / mean
// GPUs). Means are integrated per quantile segment with the midpoint rule.
#pragma once

#include <cmath>
#include <vector>

#include "core/rng.hpp"

namespace ds::gen {

class SizeModel {
 public:
  // cap: the most GPUs a job may ask for (the tenant's GPUs), >= 1.
  static SizeModel calibrate(double multi_share, double mean_gpus, int cap);
  int sample(Rng& rng) const;
  [[nodiscard]] double mean() const;

 private:
  double multi_share_ = 0;
  std::vector<int> sizes_;    // multi-GPU sizes that fit
  std::vector<double> prob_;  // their tilted probabilities (sum 1)
};

class DurationModel {
 public:
  DurationModel(double median_s, double stretch)
      : log_median_(std::log(median_s)), stretch_(stretch) {}
  static DurationModel calibrate(double median_s, double target_mean_s);
  // Duration in seconds at quantile u in [0, 1].
  [[nodiscard]] double quantile(double u) const;
  // Whole seconds, at least 1.
  long long sample(Rng& rng) const;
  [[nodiscard]] double mean() const;
  [[nodiscard]] double stretch() const { return stretch_; }

 private:
  double log_median_;
  double stretch_;
};

// Index drawn from a table of non-negative weights (its cumulative sums).
class Categorical {
 public:
  Categorical() = default;
  explicit Categorical(const std::vector<double>& weights);
  std::size_t sample(Rng& rng) const;

 private:
  std::vector<double> cumulative_;
};

}  // namespace ds::gen
