#include "slurm/ops.hpp"

#include "core/error.hpp"
#include "core/types.hpp"
#include "slurm/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

namespace ds::slurm {
namespace {

std::string escape_label(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '\\' || c == '"')
      o += '\\', o += c;
    else if (c == '\n')
      o += "\\n";
    else
      o += c;
  }
  return o;
}

std::string label_text(const PromWriter::Labels& labels) {
  if (labels.empty()) return "";
  std::string o = "{";
  for (std::size_t i = 0; i < labels.size(); ++i)
    o += (i ? "," : "") + labels[i].first + "=\"" + escape_label(labels[i].second) + "\"";
  return o + "}";
}

bool same_knobs(const Tenant& a, const Tenant& b) {
  return a.slo_queue == b.slo_queue && a.max_slowdown == b.max_slowdown &&
         a.checkpoint_interval == b.checkpoint_interval;
}

bool same_tenants(const ControllerConfig& a, const ControllerConfig& b) {
  if (a.tenants.size() != b.tenants.size() || !same_knobs(a.tenant_defaults, b.tenant_defaults))
    return false;
  for (std::size_t i = 0; i < a.tenants.size(); ++i) {
    const auto &x = a.tenants[i], &y = b.tenants[i];
    if (x.account != y.account || x.tenant.name != y.tenant.name ||
        !same_knobs(x.tenant, y.tenant) || x.tenant.quota_gpus != y.tenant.quota_gpus ||
        x.tenant.cls != y.tenant.cls || x.tenant.weight != y.tenant.weight)
      return false;
  }
  return true;
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void Histogram::observe(double v) {
  const auto it = std::lower_bound(bounds.begin(), bounds.end(), v);  // first bound >= v
  ++counts[static_cast<std::size_t>(it - bounds.begin())];
  sum += v;
  ++count;
}

std::vector<double> latency_buckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::string prom_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

void PromWriter::family(const std::string& name, const char* type, const std::string& help) {
  o_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

void PromWriter::sample(const std::string& name, const Labels& labels, double value) {
  o_ << name << label_text(labels) << ' ' << prom_number(value) << '\n';
}

void PromWriter::histogram(const std::string& name, const Labels& labels, const Histogram& h) {
  std::uint64_t cum = 0;
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    cum += h.counts[i];
    Labels l = labels;
    l.emplace_back("le", i < h.bounds.size() ? prom_number(h.bounds[i]) : "+Inf");
    sample(name + "_bucket", l, static_cast<double>(cum));
  }
  sample(name + "_sum", labels, h.sum);
  sample(name + "_count", labels, static_cast<double>(h.count));
}

Lending account_lending(std::span<const int> quota, std::span<const int> held) {
  const std::size_t n = quota.size();
  Lending out;
  out.borrowed.assign(n, 0);
  out.lent.assign(n, 0);
  std::vector<int> idle(n, 0);
  long total_borrowed = 0, total_idle = 0;
  for (std::size_t t = 0; t < n; ++t) {
    const int q = std::max(0, quota[t]), h = std::max(0, held[t]);
    out.borrowed[t] = std::max(0, h - q);
    idle[t] = std::max(0, q - h);
    total_borrowed += out.borrowed[t];
    total_idle += idle[t];
  }
  const long from_quota = std::min(total_borrowed, total_idle);
  // Proportional shares of the idle quota, largest remainder first (ties: tenant order).
  long given = 0;
  std::vector<std::pair<long, std::size_t>> rest;
  for (std::size_t t = 0; t < n && total_idle > 0; ++t) {
    const long num = from_quota * idle[t];
    out.lent[t] = static_cast<int>(num / total_idle);
    given += out.lent[t];
    rest.emplace_back(-(num % total_idle), t);
  }
  std::sort(rest.begin(), rest.end());
  for (std::size_t k = 0; given < from_quota && k < rest.size(); ++k, ++given)
    ++out.lent[rest[k].second];
  out.unowned = static_cast<int>(total_borrowed - from_quota);
  return out;
}

ReloadPlan plan_reload(const ControllerConfig& a, const ControllerConfig& b) {
  ReloadPlan p;
  auto restart = [&](bool differs, const char* key) {
    if (differs) p.restart.emplace_back(key);
  };
  restart(a.partition != b.partition, "partition");
  restart(a.time_scale != b.time_scale, "time_scale");
  restart(a.metrics != b.metrics, "metrics");
  restart(a.journal != b.journal, "journal");
  restart(a.gpu_memory_mib != b.gpu_memory_mib, "gpu_memory_mib");
  restart(a.tenant_source != b.tenant_source, "tenant_source");
  restart(a.quota_tres != b.quota_tres, "quota_tres");
  auto live = [&](bool differs, const char* key) {
    if (differs) p.live.emplace_back(key);
  };
  live(a.poll_ms != b.poll_ms, "poll_ms");
  live(a.start_margin_s != b.start_margin_s, "start_margin_s");
  live(a.tenants_refresh_s != b.tenants_refresh_s, "tenants_refresh_s");
  const bool policy = a.policy != b.policy || a.options != b.options;
  live(a.policy != b.policy, "policy");
  live(a.options != b.options, "options");
  bool tenants = !same_tenants(a, b);
  // With tenant_source: config, the tenant list itself (accounts, their order: the tenant
  // ids) can only change with a restart; quotas and knobs of the same accounts apply live.
  if (tenants && a.tenant_source == TenantSource::Config && b.tenant_source == a.tenant_source) {
    bool same_accounts = a.tenants.size() == b.tenants.size();
    for (std::size_t i = 0; same_accounts && i < a.tenants.size(); ++i)
      same_accounts = a.tenants[i].account == b.tenants[i].account;
    if (!same_accounts) {
      p.restart.emplace_back("tenants");
      tenants = false;
    }
  }
  if (tenants && a.tenant_source != b.tenant_source) tenants = false;
  live(tenants, "tenants");
  p.rebuild_policy = policy || tenants;
  return p;
}

std::int64_t cycle_time(std::int64_t previous, std::int64_t clock, std::int64_t& wake_at) {
  std::int64_t t = clock;
  if (wake_at != kNever && wake_at <= clock) {
    t = wake_at;
    wake_at = kNever;
  }
  return std::max(previous, t);
}

void start_replay_journal(const std::string& path, std::int64_t wall0_ms, std::int64_t origin,
                          double scale) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec) || fs::is_symlink(path, ec)) {
    std::ifstream in(path);
    std::string first, second;
    std::getline(in, first);
    std::getline(in, second);
    if (!fs::is_regular_file(fs::symlink_status(path, ec)) || second != kReplayJournalMarker)
      throw InputError(path +
                       ": exists and was not written by a replay; a replay never replaces "
                       "such a file (choose another --out, or move the file away)");
    fs::remove(path, ec);
  }
  std::ofstream out(path, std::ios::trunc);
  out << "clock " << wall0_ms << ' ' << origin << ' ';
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", scale);
  out << buf << '\n' << kReplayJournalMarker << '\n';
  if (!out) throw InputError(path + ": cannot write the replay's journal");
}

RpcStats::RpcStats() = default;

void RpcStats::record(const char* op, double seconds, bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(ops_.begin(), ops_.end(), [&](const Op& o) { return o.name == op; });
  if (it == ops_.end()) {
    ops_.push_back({op, Histogram(latency_buckets()), 0});
    it = ops_.end() - 1;
  }
  it->latency.observe(seconds);
  it->errors += ok ? 0 : 1;
}

void RpcStats::write(PromWriter& w) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const Op*> sorted;
  for (const auto& o : ops_) sorted.push_back(&o);
  std::sort(sorted.begin(), sorted.end(),
            [](const Op* x, const Op* y) { return x->name < y->name; });
  w.family("deepshare_slurm_rpc_duration_seconds", "histogram",
           "Latency of the controller's Slurm RPCs (libslurm calls), by call");
  for (const Op* o : sorted)
    w.histogram("deepshare_slurm_rpc_duration_seconds", {{"rpc", o->name}}, o->latency);
  w.family("deepshare_slurm_rpc_errors_total", "counter",
           "Slurm RPCs that failed (the call returned an error), by call");
  for (const Op* o : sorted)
    w.sample("deepshare_slurm_rpc_errors_total", {{"rpc", o->name}},
             static_cast<double>(o->errors));
}

}  // namespace ds::slurm
