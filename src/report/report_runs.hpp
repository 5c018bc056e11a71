// Reading run folders for the HTML report: finds the runs under a report folder and
// loads from each what the charts need, complete (no downsampling here).
//
// Assumptions: the files follow docs/formats.md's output section (summary.json,
// jobs.csv, timeseries.csv); columns are found by name, so added columns are fine.
// Empty fields mean "not applicable" (a job that never started has no queue_s).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report_series.hpp"

namespace ds::report {

struct RunFolder {
  std::string label;  // the folder's name (the policy label in demo/compare)
  std::filesystem::path dir;
  std::string workload_digest;  // of the comparison it is in; empty for a single run
};

// Runs under `dir` (see report_data.hpp); throws InputError when there is none. A
// comparison folder must be complete and consistent: its manifest.json (core/manifest.hpp)
// lists every file and run folder, each file whole and unchanged, no other entry, and
// comparison.csv names exactly those runs.
std::vector<RunFolder> find_runs(const std::filesystem::path& dir);

struct TenantSeries {
  std::string name;
  std::vector<Point> assurance, borrowed, lent;  // (time_s, value)
};

struct RunData {
  RunFolder folder;
  nlohmann::json summary;
  std::vector<double> queue_s;  // jobs that started
  std::vector<double> jct_s;    // jobs that completed
  std::vector<Event> preemptions, lost_gpu_hours;
  bool timed_preemptions = false;         // taken from timeseries.csv (exact) rather than jobs.csv
  std::vector<Point> occupancy, sm_util;  // cluster scope, (time_s, fraction)
  std::vector<TenantSeries> tenants;      // only when the run has an assurance signal
  std::vector<Point> borrowed_total, lent_total;  // sums over tenants, with `tenants`
  int gpus = 0;
  double first_t = 0, last_t = 0;               // first and last sample time
  std::map<std::string, std::size_t> rejected;  // jobs.csv's rejected jobs, by reason
};

// Throws InputError naming the file when one is missing or malformed: summary.json must be
// a JSON object whose known keys have their documented types (docs/outputs.md), and the
// folder must agree with its manifest.json: every file whole and unchanged, as many
// jobs.csv rows as summary.json's and the manifest's jobs, the same policy and trace, and
// (in a comparison) the comparison's workload.
RunData load_run(const RunFolder& folder);

// The checks load_run makes on summary.json (InputError naming the file and the key).
void validate_summary(const std::string& file, const nlohmann::json& summary);

}  // namespace ds::report
