#include "baselines/lucid_sharing.hpp"

#include <algorithm>
#include <cmath>

#include "core/csv.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

constexpr Time kBin = 10 * kMinute;
constexpr std::size_t kWindow = 5;  // Lucid: time_df.head() after dropping past bins

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// "YYYY-MM-DD HH:MM:SS" -> seconds (differences only matter); nullopt when malformed.
std::optional<std::int64_t> parse_time(std::string_view s) {
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto num = [&](std::size_t pos, std::size_t len) { return parse_int(s.substr(pos, len)); };
  auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2),
       se = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !se || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 ||
      *mi > 59 || *se > 60)
    return std::nullopt;
  const auto days = days_from_civil(*y, static_cast<unsigned>(*mo), static_cast<unsigned>(*d));
  return days * 86400 + *h * 3600 + *mi * 60 + *se;
}

}  // namespace

ThroughputForecast ThroughputForecast::from_file(const std::string& path, Time origin) {
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  const auto c_time = csv.require_column("time");
  const auto c_jobs = csv.require_column("pred_gpu_job");
  const auto c_gpus = csv.require_column("pred_gpu_num");
  ThroughputForecast f;
  f.origin_ = origin;
  std::optional<std::int64_t> first;
  while (csv.next()) {
    auto t = parse_time(csv.field(c_time));
    if (!t) csv.fail(c_time, "a time 'YYYY-MM-DD HH:MM:SS'");
    if (!first) first = *t;
    const Time start = origin + seconds(*t - *first);
    if (!f.start_.empty() && start <= f.start_.back())
      csv.fail(c_time, "a time after the previous row's");
    f.start_.push_back(start);
    f.jobs_.push_back(csv.get_double(c_jobs));
    f.gpus_.push_back(csv.get_double(c_gpus));
  }
  return f;
}

ThroughputForecast ThroughputForecast::online(Time origin) {
  ThroughputForecast f;
  f.online_ = true;
  f.origin_ = origin;
  return f;
}

void ThroughputForecast::observe_arrival(Time t, int gpus) {
  if (!online_ || t < origin_) return;
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
