// The HTML report's data: one JSON object built from run folders (summary.json,
// jobs.csv, timeseries.csv, as written by write_outputs) and embedded in the page.
//
// Assumptions:
//  - `dir` is either one run folder (it holds summary.json) or a comparison folder
//    (`demo`, `compare`): one sub-folder per policy run, each with summary.json, in
//    comparison.csv's order when that file is there, else by name.
//  - All runs replayed the same workload, so their time stamps share one origin: the
//    earliest first submit. Times in the JSON are seconds since that origin.
//  - The CSVs stay complete on disk; the JSON carries display-sized extracts (CDFs of at
//    most `cdf_points` exact points, time series downsampled with per-bucket min and max)
//    so that the page stays fast on month-long traces. Numbers are rounded to 6
//    significant digits. The object is a pure function of the folder's files.
//  - Preemptions and lost work come from timeseries.csv's cumulative columns (per sample);
//    older run folders without them fall back to jobs.csv's per-job totals, counted at the
//    job's end (at the last sample for jobs that never ended).
//
// Layout (schema 1): see docs/report.md.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace ds::report {

struct DataOptions {
  std::size_t cdf_points = 500;      // per policy and metric
  std::size_t series_buckets = 500;  // cluster time series: at most 2x points
  std::size_t tenant_buckets = 200;  // per-tenant series: at most 2x points
  std::size_t event_bins = 300;      // cumulative preemptions / lost work
  double log_floor_s = 1;            // CDF values (delay, JCT) below are drawn at this value
  std::string folder;                // the folder's name as shown; empty: `dir`'s own name
};

// Throws InputError (naming the file) when `dir` holds no run or a file is malformed.
nlohmann::ordered_json build_report_data(const std::string& dir, const DataOptions& options = {});

}  // namespace ds::report
