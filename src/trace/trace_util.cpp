#include "trace/trace_util.hpp"

#include "core/checked.hpp"
#include "core/limits.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

namespace ds {

FinalState parse_final_state(std::string_view s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
  if (u == "COMPLETED") return FinalState::Completed;
  if (u.starts_with("CANCELLED")) return FinalState::Cancelled;
  if (u == "FAILED") return FinalState::Failed;
  return FinalState::Other;
}

namespace {

// Reads exactly `n` digits at s[pos..]; nullopt when any is not a digit.
std::optional<int> digits(std::string_view s, std::size_t pos, std::size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

bool leap(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

// Howard Hinnant's days_from_civil: days since 1970-01-01 of a proleptic Gregorian date.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::int64_t> parse_date(std::string_view s) {
  s = trim(s);
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  const auto y = digits(s, 0, 4), m = digits(s, 5, 2), d = digits(s, 8, 2);
  if (!y || !m || !d || *m < 1 || *m > 12 || *d < 1) return std::nullopt;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const int month_days = kDays[*m - 1] + (*m == 2 && leap(*y) ? 1 : 0);
  if (*d > month_days) return std::nullopt;
  return days_from_civil(*y, static_cast<unsigned>(*m), static_cast<unsigned>(*d));
}

std::optional<std::int64_t> parse_datetime(std::string_view s) {
  s = trim(s);
  if (s.size() != 19 || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  const auto day = parse_date(s.substr(0, 10));
  const auto h = digits(s, 11, 2), mi = digits(s, 14, 2), sec = digits(s, 17, 2);
  if (!day || !h || !mi || !sec || *h > 23 || *mi > 59 || *sec > 59) return std::nullopt;
  return *day * 86400 + *h * 3600 + *mi * 60 + *sec;
}

std::string format_date(std::int64_t days) {
  // civil_from_days (Howard Hinnant).
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(y), m, d);
  return buf;
}

std::optional<Qos> parse_qos(std::string_view s) {
  std::string u(trim(s));
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::tolower(c); });
  if (u == "ls") return Qos::LatencySensitive;
  if (u == "be") return Qos::BestEffort;
  if (u == "burstable") return Qos::Burstable;
  if (u == "guaranteed") return Qos::Guaranteed;
  return std::nullopt;
}

std::vector<int> split_quota(int total, const std::vector<double>& demand) {
  std::vector<int> q(demand.size(), 0);
  if (demand.empty() || total <= 0) return q;
  double sum = 0;
  for (double d : demand) sum += d;
  std::vector<double> share(demand.size());
  for (std::size_t i = 0; i < demand.size(); ++i)
    share[i] = sum > 0 ? total * (demand[i] / sum) : static_cast<double>(total) / demand.size();
  int given = 0;
  for (std::size_t i = 0; i < q.size(); ++i) given += q[i] = static_cast<int>(std::floor(share[i]));
  while (given < total) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < q.size(); ++i)
      if (share[i] - q[i] > share[best] - q[best]) best = i;
    ++q[best];
    ++given;
  }
  return q;
}

TenantId add_tenant(Workload& w, const std::string& name, int quota_gpus, TenantClass cls) {
  Tenant t;
  t.id = TenantId(static_cast<std::uint32_t>(w.tenants.size()));
  t.name = name;
  t.quota_gpus = quota_gpus;
  t.cls = cls;
  w.tenants.push_back(t);
  return t.id;
}

std::string find_beside(const std::string& trace_path, std::initializer_list<const char*> names) {
  namespace fs = std::filesystem;
  fs::path p(trace_path);
  fs::path dir = fs::is_directory(p) ? p : p.parent_path();
  if (dir.empty()) dir = ".";
  for (const char* n : names)
    for (const fs::path& c : {dir / n, dir / "aux" / n})
      if (fs::is_regular_file(c)) return c.string();
  return {};
}

HeliosJobColumns require_helios_job_columns(const CsvReader& csv) {
  return {csv.require_column("job_id"),  csv.require_column("user"),
          csv.require_column("vc"),      csv.require_column("gpu_num"),
          csv.require_column("state"),   csv.require_column("submit_time"),
          csv.require_column("duration")};
}

ProfileColumns::ProfileColumns(const CsvReader& csv)
    : model_(csv.find_column("model")),
      dataset_(csv.find_column("dataset")),
      batch_(csv.find_column("batchsize")),
      amp_(csv.find_column("amp")),
      util_(csv.find_column("gpu_util")),
      gmem_(csv.find_column("gmem")) {
  if (!gmem_) gmem_ = csv.find_column("gmem_mib");
}

void ProfileColumns::read(const CsvReader& csv, Workload& w, JobSpec& job) const {
  if (model_ && !csv.empty_field(*model_)) {
    Profile p;
    p.model = std::string(csv.field(*model_));
    if (dataset_) p.dataset = std::string(csv.field(*dataset_));
    if (batch_ && !csv.empty_field(*batch_))
      p.batch_size =
          static_cast<int>(csv.get_int_in(*batch_, 0, limits::kMaxBatchSize, "a batch size"));
    if (amp_ && !csv.empty_field(*amp_)) p.amp = csv.get_int_in(*amp_, 0, 1, "an AMP flag") != 0;
    job.profile = w.intern_profile(p);
  }
  if (util_ && !csv.empty_field(*util_))
    job.gpu_util = csv.get_double_in(*util_, 0, 100, "a GPU utilization in percent");
  if (gmem_ && !csv.empty_field(*gmem_)) job.gpu_memory_mib = read_gpu_memory_mib(csv, *gmem_);
}

double read_gpu_memory_mib(const CsvReader& csv, std::size_t column) {
  return csv.get_double_in(column, 0, static_cast<double>(limits::kMaxGpuMemoryMib),
                           "GPU memory per GPU in MiB");
}

std::int64_t read_gpu_count(const CsvReader& csv, std::size_t column, std::int64_t min) {
  return csv.get_int_in(column, min, limits::kMaxClusterGpus, "a GPU count");
}

std::int64_t read_whole_seconds(const CsvReader& csv, std::size_t column, bool duration) {
  const Time hi = duration ? limits::kMaxDuration : limits::kMaxAbsTime;
  const Time lo = duration ? 0 : -limits::kMaxAbsTime;
  return csv.get_int_in(column, lo / kSecond, hi / kSecond,
                        duration ? "a duration (whole seconds)" : "a time (whole seconds)");
}

std::string read_gpu_type(const CsvReader& csv, std::size_t column) {
  const std::string_view s = csv.field(column);
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t bar = std::min(s.find('|', at), s.size());
    const std::string_view name = s.substr(at, bar - at);
    if (name.empty() || name.front() == ' ' || name.back() == ' ')
      csv.fail(column, "GPU model names separated by '|', e.g. A100 or V100M16|V100M32");
    at = bar + 1;
  }
  return std::string(s);
}

void NodeTally::add(const SourceLocation& where, std::int64_t nodes, std::int64_t gpus_each) {
  const auto gpus = checked_mul(nodes, gpus_each);
  const auto n = checked_add(nodes_, nodes);
  const auto g = gpus ? checked_add(gpus_, *gpus) : std::nullopt;
  nodes_ = n.value_or(limits::kMaxNodes + 1);  // an overflow is over the limit too
  gpus_ = g.value_or(limits::kMaxClusterGpus + 1);
  if (nodes_ > limits::kMaxNodes)
    throw InputError(
        where, "the cluster would have more than " + std::to_string(limits::kMaxNodes) + " nodes");
  if (gpus_ > limits::kMaxClusterGpus)
    throw InputError(where, "the cluster would have more than " +
                                std::to_string(limits::kMaxClusterGpus) + " GPUs");
}

}  // namespace ds
