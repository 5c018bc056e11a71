// Assembles the report's JSON object from run folders (contracts in report_data.hpp).
#include "report/report_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "report/report_runs.hpp"
#include "report/report_series.hpp"

namespace ds::report {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// 6 significant digits: short JSON, and still exact for the counts and fractions shown.
double r6(double v) {
  if (!std::isfinite(v)) return 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::strtod(buf, nullptr);
}

ojson points_json(const std::vector<Point>& pts, double origin = 0) {
  ojson a = ojson::array();
  for (const Point& p : pts) a.push_back({r6(p.x - origin), r6(p.y)});
  return a;
}

struct Headline {
  const char* key;
  const char* label;
  const char* kind;  // duration (s), percent (fraction), ratio, count, gpu_hours
  bool higher_is_better;
};

// The headline table's rows: DESIGN §4's key metrics, as in comparison.md.
const std::vector<Headline>& headline_metrics() {
  static const std::vector<Headline> table = {
      {"avg_queue_s", "Avg queueing delay", "duration", false},
      {"p50_queue_s", "Median queueing delay", "duration", false},
      {"p99_queue_s", "p99 queueing delay", "duration", false},
      {"p999_queue_s", "p99.9 queueing delay", "duration", false},
      {"avg_jct_s", "Avg JCT", "duration", false},
      {"p99_jct_s", "p99 JCT", "duration", false},
      {"gpu_occupancy_submit_window", "GPU occupancy, submit window", "percent", true},
      {"gpu_occupancy_full", "GPU occupancy, to last completion", "percent", true},
      {"gpu_occupancy_lucid", "GPU occupancy, Lucid-compatible", "percent", true},
      {"sm_utilization_submit_window", "SM utilization, submit window", "percent", true},
      {"sm_utilization", "SM utilization, to last completion", "percent", true},
      {"qos_compliance", "QoS compliance (guaranteed)", "percent", true},
      {"jain_fairness", "Jain fairness index", "ratio", true},
      {"worst_tenant_share", "Worst tenant's received/entitled", "ratio", true},
      {"preemptions", "Preemptions", "count", false},
      {"lost_gpu_hours", "Lost work", "gpu_hours", false},
      {"jobs_completed", "Jobs completed", "count", true},
  };
  return table;
}

double number_or_nan(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

// Runs compared with each other: those at the same load factor (`compare` may run
// several loads; a best value is marked within each load).
std::vector<std::vector<int>> load_groups(const std::vector<RunData>& runs) {
  std::map<double, std::vector<int>> by_load;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double load = number_or_nan(runs[i].summary, "load_factor");
    by_load[std::isnan(load) ? 1.0 : load].push_back(static_cast<int>(i));
  }
  std::vector<std::vector<int>> out;
  for (auto& [load, idx] : by_load) out.push_back(std::move(idx));
  return out;
}

ojson headline_json(const std::vector<RunData>& runs) {
  ojson metrics = ojson::array(), values = ojson::array(), best = ojson::array();
  const auto groups = load_groups(runs);
  for (const Headline& h : headline_metrics()) {
    std::vector<double> v(runs.size(), NAN);
    ojson row = ojson::array();
    bool any = false;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double x = number_or_nan(runs[i].summary, h.key);
      v[i] = std::isnan(x) ? NAN : r6(x);
      any = any || !std::isnan(v[i]);
      row.push_back(std::isnan(v[i]) ? ojson(nullptr) : ojson(v[i]));
    }
    if (!any) continue;  // a metric no run reports
    std::vector<int> marked;
    for (const auto& group : groups) {
      std::vector<double> present;
      std::vector<int> where;
      for (int i : group)
        if (!std::isnan(v[i])) present.push_back(v[i]), where.push_back(i);
      for (int k : best_indices(present, h.higher_is_better)) marked.push_back(where[k]);
    }
    std::sort(marked.begin(), marked.end());
    metrics.push_back({{"key", h.key},
                       {"label", h.label},
                       {"kind", h.kind},
                       {"better", h.higher_is_better ? "higher" : "lower"}});
    values.push_back(std::move(row));
    best.push_back(marked);
  }
  return {{"metrics", metrics}, {"values", values}, {"best", best}};
}

ojson runs_json(const std::vector<RunData>& runs) {
  ojson out = ojson::array();
  for (const RunData& r : runs) {
    const double load = number_or_nan(r.summary, "load_factor");
    out.push_back({{"label", r.folder.label},
                   {"policy", r.summary.value("policy", r.folder.label)},
                   {"load", std::isnan(load) ? 1.0 : r6(load)}});
  }
  return out;
}

ojson cdf_json(std::vector<RunData>& runs, bool queue, const DataOptions& o) {
  ojson out = ojson::array();
  for (RunData& r : runs) {
    std::vector<double>& v = queue ? r.queue_s : r.jct_s;
    const std::size_t n = v.size();
    const auto pts = cdf_points(v, o.cdf_points, o.log_floor_s);
    out.push_back({{"policy", r.folder.label}, {"n", n}, {"points", points_json(pts)}});
  }
  return out;
}

ojson cluster_series_json(const std::vector<RunData>& runs, double origin, const DataOptions& o) {
  ojson out = ojson::array();
  for (const RunData& r : runs)
    out.push_back(
        {{"policy", r.folder.label},
         {"gpus", r.gpus},
         {"occupancy", points_json(downsample_minmax(r.occupancy, o.series_buckets), origin)},
         {"sm_util", points_json(downsample_minmax(r.sm_util, o.series_buckets), origin)}});
  return out;
}

std::map<std::string, double> quotas(const nlohmann::json& summary) {
  std::map<std::string, double> q;
  if (const auto it = summary.find("tenants"); it != summary.end() && it->is_array())
    for (const auto& t : *it)
      if (t.contains("name")) q[t["name"].get<std::string>()] = number_or_nan(t, "quota_gpus");
  return q;
}

ojson assurance_json(const std::vector<RunData>& runs, double origin, const DataOptions& o) {
  ojson out = ojson::array();
  for (const RunData& r : runs) {
    if (r.tenants.empty()) continue;
    const auto q = quotas(r.summary);
    ojson tenants = ojson::array();
    for (const TenantSeries& t : r.tenants) {
      const auto it = q.find(t.name);
      tenants.push_back(
          {{"name", t.name},
           {"quota_gpus", it == q.end() || std::isnan(it->second) ? 0 : it->second},
           {"assurance", points_json(downsample_minmax(t.assurance, o.tenant_buckets), origin)},
           {"borrowed", points_json(downsample_minmax(t.borrowed, o.tenant_buckets), origin)},
           {"lent", points_json(downsample_minmax(t.lent, o.tenant_buckets), origin)}});
    }
    out.push_back(
        {{"policy", r.folder.label},
         {"tenants", std::move(tenants)},
         {"borrowed_total",
          points_json(downsample_minmax(r.borrowed_total, o.series_buckets), origin)},
         {"lent_total", points_json(downsample_minmax(r.lent_total, o.series_buckets), origin)}});
  }
  return out;
}

// Per-tenant average queueing delay: tenants in the first run's order, then new ones.
ojson tenant_bars_json(const std::vector<RunData>& runs) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::vector<std::map<std::string, double>> per_run;
  std::map<std::string, double> quota;
  for (const RunData& r : runs) {
    auto& m = per_run.emplace_back();
    if (const auto it = r.summary.find("tenants"); it != r.summary.end() && it->is_array())
      for (const auto& t : *it) {
        if (!t.contains("name")) continue;
        const std::string name = t["name"].get<std::string>();
        if (seen.insert(name).second) names.push_back(name);
        m[name] = number_or_nan(t, "avg_queue_s");
        quota.emplace(name, number_or_nan(t, "quota_gpus"));
      }
  }
  ojson series = ojson::array(), q = ojson::array();
  for (const auto& n : names) q.push_back(std::isnan(quota[n]) ? 0 : quota[n]);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ojson vals = ojson::array();
    for (const auto& n : names) {
      const auto it = per_run[i].find(n);
      if (it == per_run[i].end() || std::isnan(it->second))
        vals.push_back(nullptr);
      else
        vals.push_back(r6(it->second));
    }
    series.push_back({{"policy", runs[i].folder.label}, {"avg_queue_s", std::move(vals)}});
  }
  return {{"names", names}, {"quota_gpus", q}, {"series", series}};
}

ojson preemption_json(const std::vector<RunData>& runs, double origin, double end,
                      const DataOptions& o) {
  ojson out = ojson::array();
  for (const RunData& r : runs)
    out.push_back(
        {{"policy", r.folder.label},
         {"preemptions",
          points_json(cumulative_bins(r.preemptions, origin, end, o.event_bins), origin)},
         {"lost_gpu_hours",
          points_json(cumulative_bins(r.lost_gpu_hours, origin, end, o.event_bins), origin)}});
  return out;
}

ojson policy_metrics_json(const std::vector<RunData>& runs) {
  std::set<std::string> keys;
  for (const RunData& r : runs)
    if (const auto it = r.summary.find("policy_metrics"); it != r.summary.end() && it->is_object())
      for (const auto& [k, v] : it->items())
        if (v.is_number()) keys.insert(k);
  ojson values = ojson::array();
  for (const RunData& r : runs) {
    ojson row = ojson::object();
    if (const auto it = r.summary.find("policy_metrics"); it != r.summary.end() && it->is_object())
      for (const auto& [k, v] : it->items())
        if (v.is_number()) row[k] = r6(v.get<double>());
    values.push_back({{"policy", r.folder.label}, {"metrics", std::move(row)}});
  }
  return {{"keys", ojson(std::vector<std::string>(keys.begin(), keys.end()))}, {"runs", values}};
}

// Rejected jobs per run, by reason (most frequent first, at most kReasons of them), and the
// same as one line for the configuration table.
constexpr std::size_t kReasons = 20;

std::vector<std::pair<std::string, std::size_t>> top_reasons(const RunData& r) {
  std::vector<std::pair<std::string, std::size_t>> v(r.rejected.begin(), r.rejected.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

std::string rejected_text(const RunData& r) {
  std::size_t total = 0;
  for (const auto& [reason, n] : r.rejected) total += n;
  if (total == 0) return "none";
  std::string s = std::to_string(total) + (total == 1 ? " job: " : " jobs: ");
  const auto reasons = top_reasons(r);
  for (std::size_t i = 0; i < reasons.size() && i < 3; ++i)
    s += (i ? "; " : "") + reasons[i].first + " (" + std::to_string(reasons[i].second) + ")";
  if (reasons.size() > 3) s += "; and " + std::to_string(reasons.size() - 3) + " more reasons";
  return s;
}

ojson rejections_json(const std::vector<RunData>& runs) {
  ojson out = ojson::array();
  for (const RunData& r : runs) {
    ojson reasons = ojson::array();
    std::size_t total = 0;
    const auto top = top_reasons(r);
    for (std::size_t i = 0; i < top.size(); ++i) {
      total += top[i].second;
      if (i < kReasons) reasons.push_back({top[i].first, top[i].second});
    }
    out.push_back({{"policy", r.folder.label},
                   {"jobs", total},
                   {"reasons", std::move(reasons)},
                   {"more_reasons", top.size() > kReasons ? top.size() - kReasons : 0}});
  }
  return out;
}

ojson config_json(const std::vector<RunData>& runs) {
  static const char* const kFields[] = {"policy",       "trace",   "format",         "load_factor",
                                        "seed",         "options", "oracle",         "version",
                                        "wall_seconds", "jobs",    "first_submit_s", "last_end_s"};
  ojson out = ojson::array();
  for (const RunData& r : runs) {
    ojson c;
    c["label"] = r.folder.label;
    for (const char* f : kFields)
      if (const auto it = r.summary.find(f); it != r.summary.end()) c[f] = *it;
    c["rejected"] = rejected_text(r);
    out.push_back(std::move(c));
  }
  return out;
}

std::string folder_name(const fs::path& dir) {
  const fs::path abs = fs::absolute(dir).lexically_normal();
  return (abs.has_filename() ? abs : abs.parent_path()).filename().string();
}

nlohmann::ordered_json build(const std::string& dir, const DataOptions& o) {
  std::vector<RunData> runs;
  for (const RunFolder& f : find_runs(dir)) runs.push_back(load_run(f));
  double origin = INFINITY, end = -INFINITY;
  int gpus = 0;
  for (const RunData& r : runs) {
    const double first = number_or_nan(r.summary, "first_submit_s");
    origin = std::min(origin, std::isnan(first) ? r.first_t : std::min(first, r.first_t));
    end = std::max(end, r.last_t);
    gpus = std::max(gpus, r.gpus);
  }
  if (!std::isfinite(origin)) origin = 0;
  if (!(end > origin)) end = origin + 1;

  const nlohmann::json& first = runs.front().summary;
  ojson j;
  j["schema"] = 1;
  j["meta"] = {{"trace", first.value("trace", "")},
               {"format", first.value("format", "")},
               {"folder", folder_name(o.folder.empty() ? fs::path(dir) : fs::path(o.folder))},
               {"runs", runs.size()},
               {"gpus", gpus},
               {"jobs", r6(number_or_nan(first, "jobs"))},
               {"origin_s", r6(origin)},
               {"span_s", r6(end - origin)},
               {"log_floor_s", o.log_floor_s}};
  ojson policies = ojson::array();
  for (const RunData& r : runs) policies.push_back(r.folder.label);
  j["policies"] = std::move(policies);
  j["runs"] = runs_json(runs);
  j["headline"] = headline_json(runs);
  j["cdf_jct"] = cdf_json(runs, false, o);
  j["cdf_queue"] = cdf_json(runs, true, o);
  j["cluster"] = cluster_series_json(runs, origin, o);
  j["assurance"] = assurance_json(runs, origin, o);
  j["tenant_queue"] = tenant_bars_json(runs);
  j["preemption"] = preemption_json(runs, origin, end, o);
  j["policy_metrics"] = policy_metrics_json(runs);
  j["config"] = config_json(runs);
  j["rejections"] = rejections_json(runs);
  const fs::path workload = fs::path(dir) / "workload.md";
  j["workload_md"] = fs::is_regular_file(workload) ? read_file(workload.string()) : "";
  return j;
}

}  // namespace

nlohmann::ordered_json build_report_data(const std::string& dir, const DataOptions& o) {
  try {
    return build(dir, o);
  } catch (const nlohmann::json::exception& e) {
    // load_run checks the keys the report reads; anything it missed is still bad input.
    throw InputError(SourceLocation{dir},
                     "unexpected content in a run's summary.json: " + quote_input(e.what(), 200));
  }
}

}  // namespace ds::report
