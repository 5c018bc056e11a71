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
  const double e = std::abs(std::log2(static_cast<double>(p) / static_cast<double>(actual)));
  ++scored_;
  sum_ += e;
  if (e <= 1.0) ++within_2x_;
  if (!exact()) return add_to_histogram(e);
  errors_.push_back(e);
  if (errors_.size() < kExactSamples) return;
  // From here on a fixed-size histogram: the exact errors move into it and are freed.
  histogram_.assign(static_cast<std::size_t>(kMaxError) * kBinsPerUnit + 1, 0);
  for (double x : errors_) add_to_histogram(x);
  std::vector<double>().swap(errors_);
}

void AccuracyTracker::add_to_histogram(double error) {
  const double bin = std::floor(error * static_cast<double>(kBinsPerUnit));
  const std::size_t last = histogram_.size() - 1;
  ++histogram_[bin >= static_cast<double>(last) ? last : static_cast<std::size_t>(bin)];
}

double AccuracyTracker::median_abs_log2_error() const {
  if (scored_ == 0) return -1;
  if (!exact()) {
    // The bin that holds the middle rank (the lower middle one for an even count).
    const std::uint64_t rank = (scored_ - 1) / 2;
    std::uint64_t seen = 0;
    std::size_t b = 0;
    while (seen + histogram_[b] <= rank) seen += histogram_[b++];
    return (static_cast<double>(b) + 0.5) / static_cast<double>(kBinsPerUnit);
  }
  std::vector<double> e = errors_;
  const std::size_t mid = e.size() / 2;
  std::nth_element(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(mid), e.end());
  const double hi = e[mid];
  if (e.size() % 2 == 1) return hi;
  const double lo = *std::max_element(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2;
}

double AccuracyTracker::mean_abs_log2_error() const {
  if (scored_ == 0) return -1;
  return sum_ / static_cast<double>(scored_);
}

double AccuracyTracker::within_2x() const {
  if (scored_ == 0) return -1;
  return static_cast<double>(within_2x_) / static_cast<double>(scored_);
}

}  // namespace ds
