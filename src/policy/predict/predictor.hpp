// Online, tenant-specific run-time prediction (interface).
//
// A predictor learns only from jobs that have finished before "now" (observe()),
// never from the future; predict() may be called for any job not yet finished.
// The DeepShare policy, QSSF and Lucid (normal mode) use it through this interface.
// The `history` predictor and its formula: history.hpp and docs/prediction.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/job.hpp"

namespace ds {

class RuntimePredictor {
 public:
  virtual ~RuntimePredictor() = default;
  // A job finished after running `runtime` (wall time of all its runs).
  virtual void observe(const JobSpec& job, Time runtime) = 0;
  // Predicted run time of `job` (> 0).
  [[nodiscard]] virtual Time predict(const JobSpec& job) const = 0;
};

// Levels of the history predictor, coarse to fine; each is shrunk toward the one before.
enum class HistoryLevel : std::uint8_t { Global, Tenant, User, UserGpus, UserGpusProfile };
constexpr std::size_t kHistoryLevels = 5;

struct PredictorConfig {
  std::string kind = "history";  // see make_predictor
  // history: prior strength k_l of each level (pseudo-observations of its parent's
  // estimate; larger = trust the parent longer). k_Global pulls toward `prior_runtime`.
  // Defaults tuned on Venus Sept (docs/prediction.md); all levels are observable at submit.
  std::array<double, kHistoryLevels> strength = {1.0, 1.0, 1.0, 1.0, 0.5};
  // history: per-observation decay of older jobs' weight at each level (1 = plain mean);
  // users' workloads drift, so the fine levels forget faster than the global one.
  std::array<double, kHistoryLevels> decay = {0.99, 0.95, 0.95, 0.9, 0.9};
  Time prior_runtime = kHour;  // the estimate before anything has finished
  Time floor = kSecond;        // shorter run times are learned as this (log of 0 is undefined)
};

// Kinds: "history" (hierarchical shrinkage, all levels), "user" (without the profile
// level: on Venus, Lucid assigned profiles by run time, see docs/prediction.md),
// "tenant" (global -> tenant only), "global" (one decayed mean: the trivial baseline).
// Throws InputError for an unknown kind.
std::unique_ptr<RuntimePredictor> make_predictor(const PredictorConfig& config);
// The kinds make_predictor accepts, for help texts.
std::span<const char* const> predictor_kinds();

// Accuracy of predictions made at submit, scored when each job finishes:
// median |log2(predicted / actual)| and the share within 2x (both over jobs with
// actual > 0; -1 while nothing is scored). Deterministic: depends only on the sequence
// of calls.
// Only the first prediction recorded for a job counts (the one made at submit), so a
// policy that re-predicts every cycle cannot improve its score with hindsight.
// Memory is bounded on long runs (a controller that runs for months): the errors are kept
// exactly up to kExactSamples scored jobs, then in a histogram of kBinsPerUnit bins per
// unit of |log2| error up to kMaxError (larger errors in the last bin). The mean and the
// share within 2x stay exact; the median is then the middle of its bin (within
// 1 / (2 kBinsPerUnit) of the exact one, i.e. 0.05 % in ratio).
class AccuracyTracker {
 public:
  static constexpr std::size_t kExactSamples = 65'536;
  static constexpr std::size_t kBinsPerUnit = 1024;
  static constexpr double kMaxError = 32;  // |log2| error: a factor of 2^32

  void predicted(JobId job, Time prediction);
  void finished(JobId job, Time actual);
  [[nodiscard]] std::size_t scored() const { return scored_; }
  [[nodiscard]] bool exact() const { return histogram_.empty(); }
  [[nodiscard]] double median_abs_log2_error() const;
  [[nodiscard]] double mean_abs_log2_error() const;
  [[nodiscard]] double within_2x() const;
  // Adds predictor_scored, predictor_median_abs_log2_error, predictor_within_2x
  // (keys prefixed by `prefix`) for summary.json.
  template <class Map>
  void summarize(Map& out, const std::string& prefix = "predictor_") const {
    out[prefix + "scored"] = static_cast<double>(scored());
    out[prefix + "median_abs_log2_error"] = median_abs_log2_error();
    out[prefix + "within_2x"] = within_2x();
  }

 private:
  void add_to_histogram(double error);

  std::vector<Time> pending_;             // by JobId; 0 = no prediction recorded
  std::vector<double> errors_;            // |log2 ratio| per scored job, while exact()
  std::vector<std::uint64_t> histogram_;  // after kExactSamples: counts per bin
  std::size_t scored_ = 0, within_2x_ = 0;
  double sum_ = 0;  // of the errors, in the order scored
};

}  // namespace ds
