// Online, tenant-specific run-time prediction (interface).
//
// A predictor learns only from jobs that have finished before "now" (observe()),
// never from the future; predict() may be called for any job not yet finished.
// The DeepShare policy, QSSF and Lucid (normal mode) use it through this interface.
#pragma once

#include <cstddef>
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

struct PredictorConfig {
  std::string kind = "history";  // see make_predictor
};

// Throws InputError for an unknown kind.
std::unique_ptr<RuntimePredictor> make_predictor(const PredictorConfig& config);

// Accuracy of predictions made at submit, scored when each job finishes:
// median |log2(predicted / actual)| and the share within 2x (both over jobs with
// actual > 0). Deterministic: depends only on the sequence of calls.
class AccuracyTracker {
 public:
  void predicted(JobId job, Time prediction);
  void finished(JobId job, Time actual);
  [[nodiscard]] std::size_t scored() const { return errors_.size(); }
  [[nodiscard]] double median_abs_log2_error() const;
  [[nodiscard]] double within_2x() const;

 private:
  std::vector<Time> pending_;   // by JobId; 0 = no prediction recorded
  std::vector<double> errors_;  // |log2 ratio| per scored job
};

}  // namespace ds
