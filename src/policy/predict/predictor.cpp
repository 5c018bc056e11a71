#include "policy/predict/predictor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.hpp"
#include "policy/predict/history.hpp"

namespace ds {
namespace {

constexpr const char* kKinds[] = {"history", "user", "tenant", "global"};

}  // namespace

std::span<const char* const> predictor_kinds() {
  return kKinds;
}

std::unique_ptr<RuntimePredictor> make_predictor(const PredictorConfig& config) {
  // One table from kind to depth: the baselines are the same estimator, cut short.
  if (config.kind == "history") return std::make_unique<HistoryPredictor>(config);
  if (config.kind == "user")
    return std::make_unique<HistoryPredictor>(config,
                                              static_cast<std::size_t>(HistoryLevel::UserGpus) + 1);
  if (config.kind == "tenant")
    return std::make_unique<HistoryPredictor>(config,
                                              static_cast<std::size_t>(HistoryLevel::Tenant) + 1);
  if (config.kind == "global") return std::make_unique<HistoryPredictor>(config, 1);
  std::string known;
  for (const char* k : kKinds) known += std::string(known.empty() ? "" : ", ") + k;
  throw InputError("unknown predictor '" + config.kind + "' (known: " + known + ")");
}

void AccuracyTracker::predicted(JobId job, Time prediction) {
  if (!job.valid() || prediction <= 0) return;
  if (pending_.size() <= job.index()) pending_.resize(job.index() + 1, 0);
  if (pending_[job.index()] == 0) pending_[job.index()] = prediction;  // first one counts
}

void AccuracyTracker::finished(JobId job, Time actual) {
  if (!job.valid() || job.index() >= pending_.size()) return;
  const Time p = pending_[job.index()];
  pending_[job.index()] = 0;
  if (p <= 0 || actual <= 0) return;
  errors_.push_back(std::abs(std::log2(static_cast<double>(p) / static_cast<double>(actual))));
}

double AccuracyTracker::median_abs_log2_error() const {
  if (errors_.empty()) return -1;
  std::vector<double> e = errors_;
  const std::size_t mid = e.size() / 2;
  std::nth_element(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(mid), e.end());
  const double hi = e[mid];
  if (e.size() % 2 == 1) return hi;
  const double lo = *std::max_element(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2;
}

double AccuracyTracker::mean_abs_log2_error() const {
  if (errors_.empty()) return -1;
  double s = 0;
  for (double e : errors_) s += e;
  return s / static_cast<double>(errors_.size());
}

double AccuracyTracker::within_2x() const {
  if (errors_.empty()) return -1;
  const auto n = std::count_if(errors_.begin(), errors_.end(), [](double e) { return e <= 1.0; });
  return static_cast<double>(n) / static_cast<double>(errors_.size());
}

}  // namespace ds
