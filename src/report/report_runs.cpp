// Run-folder readers for the HTML report (contracts in report_runs.hpp).
#include "report/report_runs.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/manifest.hpp"

namespace ds::report {
namespace fs = std::filesystem;

namespace {

bool is_run(const fs::path& dir) {
  return fs::is_regular_file(dir / "summary.json");
}

// Run folder names in comparison.csv's row order: "<policy>" or, with a load column
// (`compare`), "<policy>@<load>".
std::vector<std::string> comparison_order(const fs::path& dir) {
  std::vector<std::string> order;
  const fs::path p = dir / "comparison.csv";
  if (!fs::is_regular_file(p)) return order;
  CsvReader csv = CsvReader::open(p.string());
  csv.read_header();
  const std::size_t col = csv.require_column("policy");
  const auto load = csv.find_column("load");
  while (csv.next()) {
    const std::string policy(csv.field(col));
    order.push_back(load && !csv.empty_field(*load) ? policy + "@" + std::string(csv.field(*load))
                                                    : policy);
  }
  return order;
}

nlohmann::json read_json(const fs::path& p) {
  constexpr std::size_t kMaxBytes = 64 << 20;  // a summary is a few KiB
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(SourceLocation{p.string()}, "cannot open");
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxBytes)
    throw InputError(SourceLocation{p.string()}, "larger than 64 MiB: not a run's summary");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(SourceLocation{p.string()}, "not valid JSON: " + quote_input(e.what(), 200));
  }
}

enum class Kind { String, Number, Bool, Object, Array };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::String:
      return "a string";
    case Kind::Number:
      return "a number";
    case Kind::Bool:
      return "true or false";
    case Kind::Object:
      return "an object";
    case Kind::Array:
      return "an array";
  }
  return "";
}

bool is(const nlohmann::json& v, Kind k) {
  switch (k) {
    case Kind::String:
      return v.is_string();
    case Kind::Number:
      return v.is_number();
    case Kind::Bool:
      return v.is_boolean();
    case Kind::Object:
      return v.is_object();
    case Kind::Array:
      return v.is_array();
  }
  return false;
}

std::string type_of(const nlohmann::json& v) {
  return v.is_null()      ? "null"
         : v.is_object()  ? "an object"
         : v.is_array()   ? "an array"
         : v.is_string()  ? "a string"
         : v.is_boolean() ? "a boolean"
                          : "a number";
}

// Each key the report reads must have this type where present (absent keys are shown as
// missing, so that older run folders still open).
void check_keys(const std::string& file, const std::string& where, const nlohmann::json& obj,
                const std::vector<std::pair<const char*, Kind>>& keys) {
  for (const auto& [key, kind] : keys) {
    const auto it = obj.find(key);
    if (it == obj.end() || is(*it, kind)) continue;
    throw InputError(SourceLocation{file}, where + "key '" + key + "': expected " +
                                               kind_name(kind) + ", got " + type_of(*it));
  }
}

double opt_double(const CsvReader& csv, std::size_t col, double fallback) {
  return col < csv.size() && !csv.empty_field(col) ? csv.get_double(col) : fallback;
}

void read_timeseries(const fs::path& p, RunData& run) {
  CsvReader csv = CsvReader::open(p.string());
  csv.read_header();
  const std::size_t time = csv.require_column("time_s"), scope = csv.require_column("scope"),
                    gpus = csv.require_column("gpus"), occ = csv.require_column("occupancy"),
                    sm = csv.require_column("sm_util"),
                    borrowed = csv.require_column("borrowed_gpus"),
                    lent = csv.require_column("lent_gpus"),
                    assurance = csv.require_column("assurance");
  // Cumulative preemptions and lost work (newer outputs): exact per sample interval.
  const auto preempt = csv.find_column("preemptions"), lost = csv.find_column("lost_gpu_hours");
  run.timed_preemptions = preempt && lost;
  double last_preempt = 0, last_lost = 0;
  std::map<std::string, std::size_t, std::less<>> index;
  bool any_assurance = false;
  bool first = true;
  // Times of a run: the simulator stops at 10,000 years (limits::kMaxSimulatedTime).
  const double max_t = static_cast<double>(limits::kMaxSimulatedTime / kSecond);
  while (csv.next()) {
    const double t = csv.get_double_in(time, -max_t, max_t, "a time in seconds");
    if (first) run.first_t = t;
    first = false;
    run.last_t = t;
    const std::string_view s = csv.field(scope);
    if (s == "cluster") {
      run.gpus = static_cast<int>(csv.get_int_in(gpus, 0, limits::kMaxClusterGpus, "a GPU count"));
      run.occupancy.push_back({t, opt_double(csv, occ, 0)});
      run.sm_util.push_back({t, opt_double(csv, sm, 0)});
      if (run.timed_preemptions) {
        const double n = opt_double(csv, *preempt, last_preempt);
        const double l = opt_double(csv, *lost, last_lost);
        if (n > last_preempt) run.preemptions.push_back({t, n - last_preempt});
        if (l > last_lost) run.lost_gpu_hours.push_back({t, l - last_lost});
        last_preempt = n;
        last_lost = l;
      }
      continue;
    }
    auto it = index.find(s);
    if (it == index.end()) {
      it = index.emplace(std::string(s), run.tenants.size()).first;
      run.tenants.push_back({std::string(s), {}, {}, {}});
    }
    TenantSeries& ts = run.tenants[it->second];
    if (!csv.empty_field(assurance)) {
      any_assurance = true;
      ts.assurance.push_back({t, csv.get_double(assurance)});
    }
    const double b = opt_double(csv, borrowed, 0), l = opt_double(csv, lent, 0);
    ts.borrowed.push_back({t, b});
    ts.lent.push_back({t, l});
    if (run.borrowed_total.empty() || run.borrowed_total.back().x != t) {
      run.borrowed_total.push_back({t, 0});
      run.lent_total.push_back({t, 0});
    }
    run.borrowed_total.back().y += b;
    run.lent_total.back().y += l;
  }
  if (!any_assurance) {
    run.tenants.clear();
    run.borrowed_total.clear();
    run.lent_total.clear();
  }
}

std::size_t read_jobs(const fs::path& p, RunData& run) {
  CsvReader csv = CsvReader::open(p.string());
  csv.read_header();
  const std::size_t gpus = csv.require_column("gpus"), end = csv.require_column("end_s"),
                    queue = csv.require_column("queue_s"), jct = csv.require_column("jct_s"),
                    preempt = csv.require_column("preemptions"),
                    lost = csv.require_column("lost_work_s");
  const auto status = csv.find_column("status"), reason = csv.find_column("reason");
  std::size_t rows = 0;
  while (csv.next()) {
    ++rows;
    if (status && csv.field(*status) == "rejected")
      ++run.rejected[reason && !csv.empty_field(*reason) ? std::string(csv.field(*reason))
                                                         : std::string("(no reason recorded)")];
    if (!csv.empty_field(queue)) run.queue_s.push_back(csv.get_double(queue));
    if (!csv.empty_field(jct)) run.jct_s.push_back(csv.get_double(jct));
    if (run.timed_preemptions) continue;  // timeseries.csv had them, exactly timed
    const double n = opt_double(csv, preempt, 0);
    const double lost_s = opt_double(csv, lost, 0);
    if (n <= 0 && lost_s <= 0) continue;
    const double t = opt_double(csv, end, run.last_t);
    if (n > 0) run.preemptions.push_back({t, n});
    if (lost_s > 0)
      run.lost_gpu_hours.push_back({t, lost_s *
                                           static_cast<double>(csv.get_int_in(
                                               gpus, 0, limits::kMaxClusterGpus, "a GPU count")) /
                                           3600.0});
  }
  return rows;
}

// The run folder against its manifest: every file whole and unchanged, the counts and the
// identity agreeing with summary.json and jobs.csv, the workload the comparison's.
void verify_run(const RunFolder& folder, const nlohmann::json& summary, std::size_t rows) {
  const Manifest m = read_manifest(folder.dir);
  const std::string mf = (folder.dir / kManifestName).string();
  // A replay folder holds a run's files too (`report` of a `slurm replay`), beside what the
  // replay and `fidelity` add.
  const bool replay = m.kind == "replay" && folder.workload_digest.empty();
  if (m.kind != "run" && !replay)
    throw InputError(SourceLocation{mf}, "describes a '" + m.kind + "' folder, not a run");
  if (replay)
    verify_manifest(folder.dir, m, {"report.html", "journal.log", "work", "fidelity"});
  else
    verify_manifest(folder.dir, m, {"report.html"});
  const std::string sf = (folder.dir / "summary.json").string();
  auto count = [&](const nlohmann::json& j, const char* key) -> std::int64_t {
    const auto it = j.find(key);
    return it != j.end() && it->is_number_unsigned() ? it->get<std::int64_t>() : -1;
  };
  const std::int64_t jobs = count(m.identity, "jobs");
  if (count(summary, "jobs") != jobs || static_cast<std::int64_t>(rows) != jobs)
    throw InputError(SourceLocation{(folder.dir / "jobs.csv").string()},
                     std::to_string(rows) + " rows, summary.json counts " +
                         std::to_string(count(summary, "jobs")) + " jobs and manifest.json " +
                         std::to_string(jobs) + ": the files are not of one run");
  for (const char* key : {"policy", "trace"})
    if (summary.value(key, std::string()) != m.identity.value(key, std::string()))
      throw InputError(SourceLocation{sf}, std::string("key '") + key +
                                               "' differs from manifest.json's: not this run's");
  if (!folder.workload_digest.empty() &&
      m.identity.value("workload_digest", std::string()) != folder.workload_digest)
    throw InputError(SourceLocation{mf},
                     "this run simulated another workload than the comparison it is in "
                     "(its workload digest differs): it belongs to another comparison");
}

void require_file(const fs::path& p) {
  if (!fs::is_regular_file(p))
    throw InputError(SourceLocation{p.string()},
                     "missing (every run folder holds summary.json, "
                     "jobs.csv and timeseries.csv)");
}

}  // namespace

std::vector<RunFolder> find_runs(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw InputError(SourceLocation{dir.string()}, "not a folder");
  if (is_run(dir)) {
    const fs::path abs = fs::absolute(dir).lexically_normal();
    std::string label = (abs.has_filename() ? abs : abs.parent_path()).filename().string();
    return {{label, dir, {}}};
  }
  std::error_code ec;
  if (!fs::exists(dir / kManifestName, ec)) {
    bool any_run = false;
    for (const auto& e : fs::directory_iterator(dir))
      any_run = any_run || (e.is_directory() && is_run(e.path()));
    if (!any_run)
      throw InputError(SourceLocation{dir.string()},
                       "no run found: expected summary.json here or in its sub-folders (the "
                       "output of `deepshare simulate`, `demo` or `compare`)");
  }
  // A comparison folder: its manifest lists the run folders; comparison.csv names each.
  const Manifest m = read_manifest(dir);
  if (m.kind != "comparison")
    throw InputError(SourceLocation{(dir / kManifestName).string()},
                     "describes a '" + m.kind + "' folder, not a comparison of runs");
  verify_manifest(dir, m, {"report.html"});
  const std::vector<std::string> order = comparison_order(dir);
  std::set<std::string> listed(m.folders.begin(), m.folders.end());
  if (listed.size() != order.size() ||
      !std::all_of(order.begin(), order.end(), [&](const auto& n) { return listed.count(n) > 0; }))
    throw InputError(SourceLocation{(dir / "comparison.csv").string()},
                     "its rows do not name the run folders manifest.json lists (" +
                         std::to_string(order.size()) + " rows, " +
                         std::to_string(m.folders.size()) + " folders)");
  const std::string digest = m.identity.value("workload_digest", std::string());
  std::vector<RunFolder> runs;
  for (const auto& name : order) runs.push_back({name, dir / name, digest});
  if (runs.empty())
    throw InputError(SourceLocation{dir.string()}, "the comparison holds no run (all failed)");
  return runs;
}

void validate_summary(const std::string& file, const nlohmann::json& s) {
  if (!s.is_object())
    throw InputError(SourceLocation{file}, "expected a JSON object, got " + type_of(s));
  using K = Kind;
  check_keys(file, "", s,
             {{"policy", K::String},
              {"trace", K::String},
              {"format", K::String},
              {"version", K::String},
              {"worst_tenant", K::String},
              {"load_factor", K::Number},
              {"seed", K::Number},
              {"jobs", K::Number},
              {"first_submit_s", K::Number},
              {"last_end_s", K::Number},
              {"wall_seconds", K::Number},
              {"oracle", K::Bool},
              {"options", K::Object},
              {"policy_metrics", K::Object},
              {"tenants", K::Array}});
  if (const auto it = s.find("jobs");
      it != s.end() && !(it->is_number_unsigned() || (it->is_number_integer() && *it >= 0)))
    throw InputError(SourceLocation{file}, "key 'jobs': expected a count >= 0");
  if (const auto it = s.find("tenants"); it != s.end()) {
    std::size_t i = 0;
    for (const auto& t : *it) {
      const std::string where = "tenants[" + std::to_string(i++) + "]: ";
      if (!t.is_object())
        throw InputError(SourceLocation{file}, where + "expected an object, got " + type_of(t));
      check_keys(file, where, t,
                 {{"name", K::String}, {"quota_gpus", K::Number}, {"avg_queue_s", K::Number}});
    }
  }
  for (const char* key : {"policy", "trace", "jobs"})  // every run has them (`{}` is no run)
    if (!s.contains(key))
      throw InputError(SourceLocation{file}, std::string("missing key '") + key + "'");
}

RunData load_run(const RunFolder& folder) {
  RunData run;
  run.folder = folder;
  for (const char* f : {"summary.json", "jobs.csv", "timeseries.csv"}) require_file(folder.dir / f);
  run.summary = read_json(folder.dir / "summary.json");
  validate_summary((folder.dir / "summary.json").string(), run.summary);
  read_timeseries(folder.dir / "timeseries.csv", run);
  const std::size_t rows = read_jobs(folder.dir / "jobs.csv", run);
  verify_run(folder, run.summary, rows);
  return run;
}

}  // namespace ds::report
