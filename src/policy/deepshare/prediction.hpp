// DeepShare's run-time prediction: the online predictor (docs/prediction.md; learns only from
// jobs that have finished) and the accuracy of its predictions at submit, reported every run.
//
// Blind predictions (`repredict`): a job that arrives before any job of its user (in its
// tenant) has finished is predicted from its tenant's and the cluster's history only. Its
// queue key is its predicted GPU time, fixed while it waits (book.hpp), so without a second
// look the user's later jobs, predicted from the user's own history, may pass it for good
// (found simulating the Kubernetes testbed's excerpt with its trace's users: docs/results.md,
// "Why Kueue is ahead"; on Kubernetes itself the user is the namespace). So such jobs
// are listed per user and predicted again once, when the user's first job finishes: each job
// at most once, whatever the depth of the queue.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "policy/deepshare/config.hpp"
#include "policy/predict/predictor.hpp"

namespace ds::deepshare {

class Prediction {
 public:
  explicit Prediction(const Config& c)
      : predictor_(make_predictor(PredictorConfig{.kind = c.predictor})),
        repredict_(c.prediction && c.repredict) {}
  // The predicted run time of `j` now (at least a second).
  [[nodiscard]] Time predict(const JobSpec& j) const {
    return std::max<Time>(kSecond, predictor_->predict(j));
  }
  void predicted_at_submit(JobId id, Time predicted) { accuracy_.predicted(id, predicted); }
  // `j` arrived and was predicted now: blind while no job of its user has finished. Listed
  // only when `repredict` is on.
  void arrived(const JobSpec& j) {
    if (repredict_ && j.user.valid() && !seen_.contains(user_key(j)))
      blind_[user_key(j)].push_back(j.id);
  }
  // `j` finished after `runtime`. On the first finish of its user, appends the jobs that
  // arrived blind to `again` (some may have left, or their ids been reused since: the
  // caller re-predicts only those still queued).
  void finished(JobId id, const JobSpec& j, Time runtime, std::vector<JobId>& again) {
    predictor_->observe(j, runtime);
    accuracy_.finished(id, runtime);
    if (!repredict_ || !j.user.valid() || !seen_.insert(user_key(j)).second) return;
    if (auto it = blind_.find(user_key(j)); it != blind_.end()) {
      again.insert(again.end(), it->second.begin(), it->second.end());
      blind_.erase(it);
    }
  }
  void summarize(std::map<std::string, double>& out) const {
    out["predictor_scored_jobs"] = static_cast<double>(accuracy_.scored());
    out["predictor_median_abs_log2_error"] = accuracy_.median_abs_log2_error();
    out["predictor_within_2x"] = accuracy_.within_2x();
  }

 private:
  static std::uint64_t user_key(const JobSpec& j) {
    return (static_cast<std::uint64_t>(j.tenant.value) << 32) | j.user.value;
  }
  std::unique_ptr<RuntimePredictor> predictor_;
  AccuracyTracker accuracy_;
  bool repredict_;
  std::unordered_set<std::uint64_t> seen_;                       // users with a finished job
  std::unordered_map<std::uint64_t, std::vector<JobId>> blind_;  // their jobs predicted blind
};

}  // namespace ds::deepshare
