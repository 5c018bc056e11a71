// Comparison table writer (formats in comparison.hpp). One column table drives
// both the CSV and the Markdown output so that they always list the same metrics.
#include "report/comparison.hpp"

#include <cstdio>
#include <filesystem>
#include <functional>

#include "core/atomic_file.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

namespace fs = std::filesystem;

struct Column {
  const char* csv;  // CSV header
  const char* md;   // Markdown header
  int decimals;     // Markdown rounding
  std::function<double(const ComparisonRow&)> value;
};

const std::vector<Column>& columns() {
  static const std::vector<Column> table = {
      {"jobs", "jobs", 0, [](const ComparisonRow& r) { return double(r.metrics.jobs); }},
      {"completed", "completed", 0,
       [](const ComparisonRow& r) { return double(r.metrics.jobs_completed); }},
      {"avg_queue_s", "avg queue (s)", 0,
       [](const ComparisonRow& r) { return r.metrics.avg_queue_s; }},
      {"p50_queue_s", "p50 queue (s)", 0,
       [](const ComparisonRow& r) { return r.metrics.p50_queue_s; }},
      {"p99_queue_s", "p99 queue (s)", 0,
       [](const ComparisonRow& r) { return r.metrics.p99_queue_s; }},
      {"p999_queue_s", "p99.9 queue (s)", 0,
       [](const ComparisonRow& r) { return r.metrics.p999_queue_s; }},
      {"avg_jct_s", "avg JCT (s)", 0, [](const ComparisonRow& r) { return r.metrics.avg_jct_s; }},
      {"p99_jct_s", "p99 JCT (s)", 0, [](const ComparisonRow& r) { return r.metrics.p99_jct_s; }},
      {"gpu_occupancy_full", "occupancy (full)", 3,
       [](const ComparisonRow& r) { return r.metrics.gpu_occupancy_full; }},
      {"gpu_occupancy_submit_window", "occupancy (submit window)", 3,
       [](const ComparisonRow& r) { return r.metrics.gpu_occupancy_submit_window; }},
      {"gpu_occupancy_lucid", "occupancy (Lucid-compatible)", 3,
       [](const ComparisonRow& r) { return r.metrics.gpu_occupancy_lucid; }},
      {"sm_utilization", "SM util", 3,
       [](const ComparisonRow& r) { return r.metrics.sm_utilization; }},
      {"qos_compliance", "QoS compliance", 3,
       [](const ComparisonRow& r) { return r.metrics.qos_compliance; }},
      {"jain_fairness", "Jain fairness", 3,
       [](const ComparisonRow& r) { return r.metrics.jain_fairness; }},
      {"worst_tenant_share", "worst tenant share", 3,
       [](const ComparisonRow& r) { return r.metrics.worst_tenant_share; }},
      {"preemptions", "preemptions", 0,
       [](const ComparisonRow& r) { return double(r.metrics.preemptions); }},
      {"lost_gpu_hours", "lost GPU-h", 1,
       [](const ComparisonRow& r) { return r.metrics.lost_gpu_hours; }},
      {"wall_seconds", "wall (s)", 2, [](const ComparisonRow& r) { return r.wall_seconds; }},
  };
  return table;
}

std::string csv_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Markdown numbers: fixed decimals, thousands separators on whole numbers.
std::string md_number(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (decimals > 0) return s;
  const std::size_t digits_start = (!s.empty() && s[0] == '-') ? 1 : 0;
  for (auto i = static_cast<long>(s.size()) - 3; i > static_cast<long>(digits_start); i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

bool has_loads(const std::vector<ComparisonRow>& rows) {
  for (const auto& r : rows)
    if (r.load) return true;
  return false;
}

}  // namespace

std::string comparison_csv(const std::vector<ComparisonRow>& rows) {
  const bool loads = has_loads(rows);
  std::string out = loads ? "policy,load" : "policy";
  for (const auto& c : columns()) out += std::string(",") + c.csv;
  out += '\n';
  for (const auto& r : rows) {
    append_csv_field(out, r.policy);
    if (loads) out += "," + (r.load ? csv_number(*r.load) : std::string());
    for (const auto& c : columns()) out += "," + csv_number(c.value(r));
    out += '\n';
  }
  return out;
}

std::string comparison_table(const std::vector<ComparisonRow>& rows) {
  const bool loads = has_loads(rows);
  std::string head = loads ? "| policy | load |" : "| policy |";
  std::string rule = loads ? "| --- | ---: |" : "| --- |";
  for (const auto& c : columns()) {
    head += std::string(" ") + c.md + " |";
    rule += " ---: |";
  }
  std::string out = head + "\n" + rule + "\n";
  for (const auto& r : rows) {
    out += "| " + r.policy + " |";
    if (loads) out += " " + (r.load ? csv_number(*r.load) : std::string()) + " |";
    for (const auto& c : columns()) out += " " + md_number(c.value(r), c.decimals) + " |";
    out += '\n';
  }
  return out;
}

void write_comparison(const std::string& dir, const std::vector<ComparisonRow>& rows,
                      const std::string& title) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(SourceLocation{dir}, "cannot create folder: " + ec.message());
  AtomicFileSet files;  // both or neither
  files.add((fs::path(dir) / "comparison.csv").string()).write(comparison_csv(rows));
  std::string md = "# " + title + "\n\n" + comparison_table(rows) +
                   "\nQueue and JCT in seconds; occupancy = time-average share of GPUs with at "
                   "least one job (full run, submission window, and Lucid's 60 s per-VC "
                   "sampling); SM util = time-average SM utilization from the jobs' profiles; "
                   "QoS compliance = share of entitled jobs that started within their tenant's "
                   "SLO and kept within its sharing-slowdown bound; Jain fairness over tenants' "
                   "received / entitled GPU-time, and the worst tenant's ratio; lost GPU-h = "
                   "work lost to preemption. Per-policy "
                   "outputs are in the folders beside this file.\n";
  files.add((fs::path(dir) / "comparison.md").string()).write(md);
  files.commit();
}

}  // namespace ds
