#include "replay/replay_folder.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <unordered_map>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"

namespace ds::slurm {
namespace fs = std::filesystem;

namespace {

// Typed, range-checked keys of one JSON object; errors name the file and the key path.
class Fields {
 public:
  Fields(std::string file, const nlohmann::json& obj, std::string path = "")
      : file_(std::move(file)), obj_(obj), path_(std::move(path)) {
    if (!obj_.is_object()) fail("", "expected a JSON object");
  }

  [[nodiscard]] const nlohmann::json& get(const char* key) const {
    const auto it = obj_.find(key);
    if (it == obj_.end()) fail(key, "missing");
    return *it;
  }
  [[nodiscard]] std::string text(const char* key) const {
    const auto& v = get(key);
    if (!v.is_string() || v.get<std::string>().empty()) fail(key, "expected a non-empty string");
    return v.get<std::string>();
  }
  [[nodiscard]] double number(const char* key, double lo, double hi) const {
    const auto& v = get(key);
    const double d = v.is_number() ? v.get<double>() : NAN;
    if (!(d >= lo && d <= hi)) fail(key, "expected a number in " + range_text(lo, hi));
    return d;
  }
  [[nodiscard]] std::uint64_t whole(const char* key, std::uint64_t hi) const {
    const auto& v = get(key);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > hi)
      fail(key, "expected a whole number in 0.." + std::to_string(hi));
    return v.get<std::uint64_t>();
  }
  [[nodiscard]] bool has(const char* key) const { return obj_.contains(key); }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    const std::string name = path_ + key;
    throw InputError(SourceLocation{file_},
                     (name.empty() ? std::string() : "key '" + name + "': ") + what);
  }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string file_;
  const nlohmann::json& obj_;
  std::string path_;
};

constexpr double kMaxSeconds = 1e9;  // wall and latency seconds: finite, far beyond any run

LatencyStats latency(const Fields& parent, const nlohmann::json& obj, const char* key) {
  const Fields f(parent.file(), obj, parent.path() + key + ".");
  LatencyStats s;
  s.n = f.whole("n", limits::kMaxJobs * 1000);
  s.mean = f.number("mean", -kMaxSeconds, kMaxSeconds);  // an overhang may be negative
  s.p50 = f.number("p50", -kMaxSeconds, kMaxSeconds);
  s.p90 = f.number("p90", -kMaxSeconds, kMaxSeconds);
  return s;
}

nlohmann::json parse_json(const fs::path& file) {
  try {
    return nlohmann::json::parse(read_file(file.string()));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(SourceLocation{file.string()},
                     "not valid JSON: " + quote_input(e.what(), 200));
  }
}

ReplayRecord read_record(const fs::path& file) {
  const nlohmann::json j = parse_json(file);
  const Fields f(file.string(), j);
  ReplayRecord r;
  r.trace = f.text("trace");
  r.format = f.text("format");
  r.excerpt = f.text("excerpt");
  r.config = f.text("config");
  r.time_scale = f.number("time_scale", kMinTimeScale, kMaxTimeScale);
  r.jobs = f.whole("jobs", limits::kMaxJobs);
  r.submitted = f.whole("submitted", r.jobs);
  r.completed = f.whole("completed", r.submitted);
  r.wall_seconds = f.number("wall_seconds", 0, kMaxSeconds);
  r.start_latency_wall_s =
      f.has("start_latency_wall_s") ? f.number("start_latency_wall_s", 0, kMaxSeconds) : 0.0;
  const auto& nodes = f.get("nodes");
  if (!nodes.is_array() || nodes.empty() || nodes.size() > limits::kMaxNodes)
    f.fail("nodes", "expected a list of 1.." + std::to_string(limits::kMaxNodes) + " nodes");
  std::unordered_map<std::string, std::size_t> seen;
  for (const auto& n : nodes) {
    const Fields node(file.string(), n, "nodes[" + std::to_string(r.nodes.size()) + "].");
    const std::string name = node.text("name");
    const auto gpus = static_cast<int>(node.number("gpus", 1, 64));
    if (node.get("gpus").get<double>() != gpus) node.fail("gpus", "expected a whole GPU count");
    if (!seen.emplace(name, r.nodes.size()).second) node.fail("name", "names a node twice");
    r.nodes.emplace_back(name, gpus);
  }
  if (f.has("latency_wall_s")) {
    const Fields lat(file.string(), f.get("latency_wall_s"), "latency_wall_s.");
    r.detect = latency(lat, lat.get("detect"), "detect");
    r.actuate = latency(lat, lat.get("actuate"), "actuate");
    r.overhang = latency(lat, lat.get("overhang"), "overhang");
    r.has_latency = true;
  }
  return r;
}

std::vector<ObservedRow> read_observed(const fs::path& file) {
  CsvReader csv = CsvReader::open(file.string());
  csv.read_header();
  const auto c_job = csv.require_column("job"), c_sub = csv.require_column("submit_ms"),
             c_first = csv.require_column("first_start_ms"), c_end = csv.require_column("end_ms"),
             c_queue = csv.require_column("queue_ms"), c_runs = csv.require_column("runs"),
             c_pre = csv.require_column("preemptions"), c_done = csv.require_column("completed"),
             c_sh = csv.require_column("shared_runs"), c_bo = csv.require_column("borrowed_runs");
  constexpr std::int64_t kMaxMs = limits::kMaxSimulatedTime, kMaxRuns = 1'000'000;
  std::vector<ObservedRow> rows;
  std::unordered_map<std::string, long> seen;
  while (csv.next()) {
    ObservedRow r;
    r.job = std::string(csv.field(c_job));
    if (r.job.empty()) csv.fail(c_job, "a job name");
    if (auto [it, fresh] = seen.emplace(r.job, csv.line()); !fresh)
      throw InputError(csv.where(c_job), "field 'job': " + quote_input(r.job) +
                                             " appears twice (first on line " +
                                             std::to_string(it->second) + ")");
    r.submit_ms = csv.get_int_in(c_sub, 0, kMaxMs, "milliseconds", false);
    r.first_start_ms = csv.get_int_in(c_first, -1, kMaxMs, "milliseconds (-1: never)", false);
    r.end_ms = csv.get_int_in(c_end, -1, kMaxMs, "milliseconds (-1: never)", false);
    r.queue_ms = csv.get_int_in(c_queue, 0, kMaxMs, "milliseconds", false);
    r.runs = static_cast<std::uint32_t>(csv.get_int_in(c_runs, 0, kMaxRuns, "a run count", false));
    const std::int64_t runs = r.runs;
    r.preemptions =
        static_cast<std::uint32_t>(csv.get_int_in(c_pre, 0, runs, "preemptions (<= runs)", false));
    r.shared_runs =
        static_cast<std::uint32_t>(csv.get_int_in(c_sh, 0, runs, "runs (<= runs)", false));
    r.borrowed_runs =
        static_cast<std::uint32_t>(csv.get_int_in(c_bo, 0, runs, "runs (<= runs)", false));
    r.completed = csv.get_int_in(c_done, 0, 1, "0 or 1", false) == 1;
    if (r.first_start_ms >= 0 && r.first_start_ms < r.submit_ms)
      csv.fail(c_first,
               "a start at or after the submit time (" + std::to_string(r.submit_ms) + ")");
    if (r.end_ms >= 0 && r.end_ms < std::max<Time>(r.first_start_ms, 0))
      csv.fail(c_end, "an end at or after the first start");
    rows.push_back(std::move(r));
  }
  return rows;
}

double summary_qos(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return 1;
  const nlohmann::json j = parse_json(file);
  const Fields f(file.string(), j);
  return f.has("qos_compliance") ? f.number("qos_compliance", 0, 1) : 1.0;
}

}  // namespace

ReplayFolder read_replay_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(SourceLocation{dir.string()},
                     "not a folder (the --out of `deepshare slurm replay`)");
  ReplayFolder out;
  out.manifest = read_manifest(dir);  // 1
  const std::string mf = (dir / kManifestName).string();
  if (out.manifest.kind != "replay")
    throw InputError(SourceLocation{mf}, "describes a '" + out.manifest.kind +
                                             "' folder, not the outputs of `slurm replay`");
  verify_manifest(dir, out.manifest, {"report.html", "journal.log", "work", "fidelity"});
  for (const char* needed : {"replay.json", "observed.csv"})
    if (!out.manifest.find(needed))
      throw InputError(SourceLocation{mf}, std::string("does not list ") + needed);
  out.record = read_record(dir / "replay.json");  // 2
  const auto& id = out.manifest.identity;
  const auto jobs = id.find("jobs");
  if (jobs == id.end() || !jobs->is_number_unsigned() ||
      jobs->get<std::uint64_t>() != out.record.jobs)
    throw InputError(SourceLocation{(dir / "replay.json").string()},
                     "key 'jobs': " + std::to_string(out.record.jobs) +
                         " differs from manifest.json's count: not this replay's");
  out.excerpt_digest = id.value("workload_digest", std::string());
  out.observed = read_observed(dir / "observed.csv");  // 3
  if (out.observed.size() != out.record.jobs)
    throw InputError(SourceLocation{(dir / "observed.csv").string()},
                     std::to_string(out.observed.size()) + " rows, replay.json counts " +
                         std::to_string(out.record.jobs) + " jobs: not of one replay");
  out.real_qos = summary_qos(dir / "summary.json");  // 4
  return out;
}

}  // namespace ds::slurm
