#include "replay/replay_files.hpp"

#include <filesystem>

#include "core/csv.hpp"
#include "report/outputs.hpp"

namespace ds::slurm {
namespace {

nlohmann::json stats(std::vector<double> v) {
  nlohmann::json j = {{"n", v.size()}, {"mean", 0.0}, {"p50", 0.0}, {"p90", 0.0}};
  if (v.empty()) return j;
  double sum = 0;
  for (double x : v) sum += x;
  j["mean"] = sum / static_cast<double>(v.size());
  j["p50"] = quantile(v, 0.5);
  j["p90"] = quantile(v, 0.9);
  return j;
}

// observed.csv (RFC 4180: a job or tenant name with a comma stays one field).
std::string observed_csv(const ReplayFiles& f, const RunRecord& result) {
  const Workload& w = *f.workload;
  std::string csv = "job," + f.id_header +
                    ",tenant,gpus,submit_ms,first_start_ms,end_ms,queue_ms,runs,preemptions,"
                    "completed,shared_runs,borrowed_runs," +
                    f.tail_header + "\n";
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const auto& o = (*f.observed)[i];
    const auto& jo = result.jobs[i];
    int shared = 0, borrowed = 0;
    for (const auto& r : o.runs) shared += r.shared, borrowed += r.borrowed;
    std::vector<std::string> row = {
        w.jobs[i].name,
        f.ids.at(i),
        w.tenants[w.jobs[i].tenant.index()].name,
        std::to_string(w.jobs[i].gpus),
        std::to_string(o.submit),
        std::to_string(jo.first_start == kNever ? Time{-1} : jo.first_start),
        std::to_string(jo.end == kNever ? Time{-1} : jo.end),
        std::to_string(jo.queue),
        std::to_string(o.runs.size()),
        std::to_string(jo.preemptions),
        o.completed ? "1" : "0",
        std::to_string(shared),
        std::to_string(borrowed)};
    row.insert(row.end(), f.tails.at(i).begin(), f.tails.at(i).end());
    append_csv_row(csv, row);
  }
  return csv;
}

}  // namespace

ReplayFiles replay_files(const Workload& w, const std::vector<ObservedJob>& observed,
                         const ExcerptSpec& spec, const ControllerConfig& config,
                         const std::string& config_path, const std::vector<NodeShape>& nodes) {
  ReplayFiles f;
  f.workload = &w;
  f.observed = &observed;
  f.excerpt = spec;
  f.config_path = config_path;
  f.policy = config.policy;
  f.options = config.options;
  f.nodes = nodes;
  return f;
}

ReplayResult write_replay_files(const std::string& out_dir, const ReplayFiles& f) {
  namespace fs = std::filesystem;
  const Workload& w = *f.workload;
  fs::create_directories(out_dir);
  ReplayResult out;
  out.record = result_from_observation(w, *f.observed);
  out.metrics = compute_metrics(w, out.record);
  for (const auto& o : *f.observed) out.completed += o.completed;
  RunInfo info;
  info.policy = f.policy;
  info.trace = w.name;
  info.format = w.format;
  info.load_factor = f.excerpt.load;
  info.options = f.options;
  info.wall_seconds = f.wall_seconds;
  info.version = f.version;

  nlohmann::json rj;
  rj["latency_wall_s"] = observed_latencies(w, *f.observed, f.excerpt.time_scale, false);
  rj["start_latency_wall_s"] = rj["latency_wall_s"]["detect"]["mean"].get<double>() +
                               rj["latency_wall_s"]["actuate"]["mean"].get<double>();
  out.start_latency_wall_s = rj["start_latency_wall_s"].get<double>();
  rj["trace"] = fs::absolute(f.excerpt.trace).string();
  rj["format"] = f.excerpt.format;
  rj["excerpt"] = format_excerpt(f.excerpt);
  rj["time_scale"] = f.excerpt.time_scale;
  rj["config"] = fs::absolute(f.config_path).string();
  rj["nodes"] = nlohmann::json::array();
  for (const auto& s : f.nodes) rj["nodes"].push_back({{"name", s.name}, {"gpus", s.gpus}});
  rj["jobs"] = w.jobs.size();
  rj["submitted"] = f.submitted;
  rj["completed"] = out.completed;
  rj["wall_seconds"] = f.wall_seconds;
  rj.update(f.extra);
  // One checked set of files, manifest.json last (kind "replay": what `fidelity` verifies,
  // replay/replay_folder.hpp); the caller commits the folder (core/output_folder.hpp).
  info.kind = "replay";
  info.command = f.command;
  info.extra_files = {{"observed.csv", observed_csv(f, out.record)},
                      {"replay.json", rj.dump(2) + "\n"}};
  info.extra_identity = {{"submitted", f.submitted}, {"completed", out.completed}};
  write_outputs(out_dir, w, out.record, out.metrics, info);
  return out;
}

nlohmann::json observed_latencies(const Workload& w, const std::vector<ObservedJob>& obs,
                                  double scale, bool native) {
  std::vector<double> detect, actuate, overhang;
  const double to_wall_s = 1.0 / (scale * 1000.0);
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const auto& o = obs[i];
    for (std::size_t k = 0; k < o.runs.size(); ++k) {
      const ObservedRun& run = o.runs[k];
      if (native && k == 0) {
        // No decision to time: submit -> RUNNING of the jobs the engine started at once (< 2 s).
        const double d = static_cast<double>(run.start - o.submit) * to_wall_s;
        if (d < 2.0) actuate.push_back(std::max(0.0, d));
      }
      if (run.decided == kNever) continue;
      actuate.push_back(static_cast<double>(run.start - run.decided) * to_wall_s);
      const double d = static_cast<double>(run.decided - o.submit) * to_wall_s;
      if (k == 0 && d < 1.0) detect.push_back(std::max(0.0, d));
    }
    if (o.completed && o.runs.size() == 1 && o.runs[0].end != kNever)
      overhang.push_back(static_cast<double>(o.runs[0].end - o.runs[0].start - w.truth[i].work) *
                         to_wall_s);
  }
  return {{"detect", stats(detect)}, {"actuate", stats(actuate)}, {"overhang", stats(overhang)}};
}

}  // namespace ds::slurm
