#include "baselines/lucid_sharing.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace ds {
namespace {

constexpr Time kBin = 10 * kMinute;
constexpr std::size_t kWindow = 5;  // Lucid: time_df.head() after dropping past bins

}  // namespace

ThroughputForecast ThroughputForecast::from_rows(const ForecastFile& file) {
  ThroughputForecast f;
  for (const ForecastRow& r : file.rows) {
    f.offset_.push_back(seconds(r.time_s - file.rows.front().time_s));
    f.jobs_.push_back(r.jobs);
    f.gpus_.push_back(r.gpus);
  }
  return f;
}

ThroughputForecast ThroughputForecast::online() {
  ThroughputForecast f;
  f.online_ = true;
  return f;
}

ThroughputForecast& ThroughputForecast::anchor(Time origin) {
  anchored_ = true;
  origin_ = origin;
  if (!online_) {
    start_.clear();
    for (Time o : offset_) start_.push_back(origin + o);
  }
  return *this;
}

void ThroughputForecast::observe_arrival(Time t, int gpus) {
  if (!online_ || !anchored_ || t < origin_) return;
  const auto bin = static_cast<std::size_t>((t - origin_) / kBin);
  while (start_.size() <= bin) {
    start_.push_back(origin_ + static_cast<Time>(start_.size()) * kBin);
    jobs_.push_back(0);
    gpus_.push_back(0);
  }
  jobs_[bin] += 1;
  gpus_[bin] += gpus;
}

std::optional<double> ThroughputForecast::window_mean(Time t, Field f) const {
  if (!anchored_) return std::nullopt;
  const auto& v = f == Field::Jobs ? jobs_ : gpus_;
  if (online_) {
    // Persistence: the mean of the last kWindow bins that have ended by t.
    if (t < origin_) return std::nullopt;
    const auto hi = static_cast<std::size_t>((t - origin_) / kBin);  // bins [0, hi) ended
    if (hi == 0) return std::nullopt;
    const std::size_t lo = hi > kWindow ? hi - kWindow : 0;
    double sum = 0;
    for (std::size_t k = lo; k < hi; ++k) sum += k < v.size() ? v[k] : 0.0;
    return sum / static_cast<double>(hi - lo);
  }
  // Bins that start strictly after t.
  const auto first =
      static_cast<std::size_t>(std::upper_bound(start_.begin(), start_.end(), t) - start_.begin());
  const std::size_t left = start_.size() - first;
  if (left == 0) return std::nullopt;
  const std::size_t n = left >= kWindow + 1 ? kWindow : left;
  double sum = 0;
  for (std::size_t k = first; k < first + n; ++k) sum += v[k];
  return sum / static_cast<double>(n);
}

Time ThroughputForecast::next_change(Time t) const {
  if (!anchored_) return kNever;
  if (online_) {
    if (t < origin_) return origin_;
    return origin_ + ((t - origin_) / kBin + 1) * kBin;
  }
  auto it = std::upper_bound(start_.begin(), start_.end(), t);
  return it == start_.end() ? kNever : *it;
}

int lucid_share_score(const ColocationTable* table, const Profile* profile, double gpu_util) {
  if (table && profile)
    if (const SingleProfile* s = table->single(*profile)) return std::clamp(s->share_label, 0, 2);
  if (gpu_util < 0) return 2;
  if (gpu_util < 25) return 0;
  if (gpu_util < 60) return 1;
  return 2;
}

bool lucid_can_pair(const PairView& job, const PairView& target, double gpu_memory_mib) {
  return target.gpus == job.gpus && target.gmem_mib < gpu_memory_mib - job.gmem_mib &&
         job.score + target.score <= 2 && job.priority <= 2 * target.priority;
}

std::optional<std::size_t> lucid_pick_partner(const PairView& job,
                                              std::span<const PairView> candidates,
                                              double gpu_memory_mib) {
  if (job.gpus > 8) return std::nullopt;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (lucid_can_pair(job, candidates[i], gpu_memory_mib)) return i;
  return std::nullopt;
}

}  // namespace ds
