// DeepShare's run-time prediction: the online predictor (docs/prediction.md; learns only from
// jobs that have finished) and the accuracy of its predictions at submit, reported every run.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "policy/deepshare/config.hpp"
#include "policy/predict/predictor.hpp"

namespace ds::deepshare {

class Prediction {
 public:
  explicit Prediction(const Config& c)
      : predictor_(make_predictor(PredictorConfig{.kind = c.predictor})) {}
  // The predicted run time of `j` now (at least a second).
  [[nodiscard]] Time predict(const JobSpec& j) const {
    return std::max<Time>(kSecond, predictor_->predict(j));
  }
  void predicted_at_submit(JobId id, Time predicted) { accuracy_.predicted(id, predicted); }
  void finished(JobId id, const JobSpec& j, Time runtime) {
    predictor_->observe(j, runtime);
    accuracy_.finished(id, runtime);
  }
  void summarize(std::map<std::string, double>& out) const {
    out["predictor_scored_jobs"] = static_cast<double>(accuracy_.scored());
    out["predictor_median_abs_log2_error"] = accuracy_.median_abs_log2_error();
    out["predictor_within_2x"] = accuracy_.within_2x();
  }

 private:
  std::unique_ptr<RuntimePredictor> predictor_;
  AccuracyTracker accuracy_;
};

}  // namespace ds::deepshare
