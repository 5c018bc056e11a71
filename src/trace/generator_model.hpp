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
// mean duration matches a target. Means are exact: log d is linear within each
// quantile segment, so each segment integrates in closed form.
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
  [[nodiscard]] double multi_share() const { return multi_share_; }
  // Mean GPUs of the multi-GPU jobs (0 when there are none).
  [[nodiscard]] double multi_mean() const;
  // The multi-GPU sizes and their probabilities among multi-GPU jobs.
  [[nodiscard]] const std::vector<int>& multi_sizes() const { return sizes_; }
  [[nodiscard]] const std::vector<double>& multi_probs() const { return prob_; }

 private:
  double multi_share_ = 0;
  std::vector<int> sizes_;    // multi-GPU sizes that fit
  std::vector<double> prob_;  // their tilted probabilities (sum 1)
};

class DurationModel {
 public:
  DurationModel(double median_s, double stretch)
      : log_median_(std::log(median_s)), stretch_(stretch) {}
  // The model with the given median whose value(model), increasing in the stretch,
  // matches `target` (bisection; the stretch stays within [0.05, 4]).
  template <class Value>
  static DurationModel calibrate(double median_s, double target, Value value);
  static DurationModel calibrate(double median_s, double target_mean_s) {
    return calibrate(median_s, target_mean_s, [](const DurationModel& m) { return m.mean(); });
  }
  // Duration in seconds at quantile u in [0, 1].
  [[nodiscard]] double quantile(double u) const;
  // Whole seconds, at least 1.
  long long sample(Rng& rng) const;
  // P(d <= cap) and E[d | d <= cap] (cap in seconds; the default: no cap).
  [[nodiscard]] double share_below(double cap) const;
  [[nodiscard]] double mean(double cap = 1e300) const;
  [[nodiscard]] double stretch() const { return stretch_; }

 private:
  double log_at(double u) const;  // log d(u) before clamping
  double log_median_;
  double stretch_;
};

template <class Value>
DurationModel DurationModel::calibrate(double median_s, double target, Value value) {
  double lo = 0.05, hi = 4.0;
  for (int it = 0; it < 40; ++it) {
    const double mid = 0.5 * (lo + hi);
    (value(DurationModel(median_s, mid)) < target ? lo : hi) = mid;
  }
  return DurationModel(median_s, 0.5 * (lo + hi));
}

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
