// The `history` run-time predictor: hierarchical shrinkage of decayed log means.
//
// Assumptions:
//  - What is observable at submit: tenant, user, GPU count and workload profile (when the
//    trace has one). Run times of one user's jobs of one size cluster tightly (users
//    resubmit the same experiment), tenant and global history are only a weak prior.
//  - Run times are roughly log-normal, so we average log2(run time) and errors are
//    ratios; the score (median |log2 error|) is also on that scale.
//  - Only finished jobs are observed (the driver calls observe() at completion), so no
//    prediction uses the future.
// Algorithm:
//  1. observe(job, r): x = log2(max(r, floor) in seconds). For each level l (global,
//     tenant, tenant+user, +GPU count, +profile) update the job's cell there:
//     W <- d_l * W + 1, S <- d_l * S + x (older jobs fade with decay d_l per newer job).
//  2. predict(job): mu_{-1} = log2(prior_runtime); for l = 0..4, with the job's cell
//     (W_l, S_l) at level l (0, 0 when it has none):
//       mu_l = (S_l + k_l * mu_{l-1}) / (W_l + k_l)
//     i.e. a level's decayed mean shrunk toward its parent's estimate with k_l
//     pseudo-observations. A level the job lacks (no profile) repeats its parent.
//  3. Return 2^mu_4 seconds, clamped to [floor, 1 year].
#pragma once

#include <array>
#include <cstdint>
#include <tuple>
#include <unordered_map>

#include "policy/predict/predictor.hpp"

namespace ds {

class HistoryPredictor final : public RuntimePredictor {
 public:
  // `levels`: how many levels (from Global) are used; fewer gives the coarse baselines.
  explicit HistoryPredictor(const PredictorConfig& config, std::size_t levels = kHistoryLevels);
  void observe(const JobSpec& job, Time runtime) override;
  [[nodiscard]] Time predict(const JobSpec& job) const override;
  // mu_l of step 2 (log2 seconds) at every level, for tests and diagnostics.
  [[nodiscard]] std::array<double, kHistoryLevels> estimates(const JobSpec& job) const;

 private:
  struct Cell {
    double weight = 0;  // W: decayed count
    double sum = 0;     // S: decayed sum of log2 run times
  };
  // (tenant, user, gpus, profile) with the fields a level ignores set to -1. Cells are only
  // looked up, never iterated, so a hash map gives exactly the results of an ordered one;
  // it keeps predict() O(1) on large clusters (issue #14: an std::map of a million jobs'
  // cells cost Lucid and QSSF a quarter of their run time).
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept;
  };
  static Key key(const JobSpec& job, std::size_t level);

  PredictorConfig cfg_;
  std::size_t levels_;
  std::array<std::unordered_map<Key, Cell, KeyHash>, kHistoryLevels> cells_;
};

}  // namespace ds
