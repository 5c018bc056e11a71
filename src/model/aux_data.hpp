// Auxiliary inputs beside a trace (the Venus `aux/` folder), read once by the CLI
// (src/trace/aux_files.hpp) and handed to policies and to the simulator's ground truth
// as values.
//
// Why: a policy must not read files (DESIGN §2: no I/O in the core), and the same data
// must reach every run of a comparison exactly once. Which files exist decides what is
// available; nothing here is required:
//  - colocate_info.csv + single_data.csv: measured colocation pairs (ColocationTable);
//  - Venus_Sept_lgb.csv, Venus_Sept_ebm_weekly_updated.csv: Lucid's per-job run-time
//    estimates, `job_id,priority` in seconds, as written (the rules Lucid applies to them
//    are the baselines', src/baselines/qssf_estimates.hpp);
//  - Venus_throughput_pred.csv: Lucid's arrival forecast, `time,pred_gpu_job,pred_gpu_num`.
// A file that exists but is malformed is an InputError naming file, line, column, field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/colocation.hpp"

namespace ds {

// One of Lucid's estimate files: the trace's job id -> estimate in seconds, as written.
struct EstimateFile {
  std::string path;
  std::unordered_map<std::string, double> seconds;
};

// Lucid's arrival forecast: 10-minute bins in file order.
struct ForecastRow {
  std::int64_t time_s = 0;  // the row's time (Unix seconds, as Lucid wrote it)
  double jobs = 0;          // pred_gpu_job: GPU jobs submitted in the bin
  double gpus = 0;          // pred_gpu_num: GPUs submitted in the bin
};
struct ForecastFile {
  std::string path;
  std::vector<ForecastRow> rows;  // times strictly ascending
};

struct AuxData {
  std::string dir;  // where it was read; empty when there is none
  std::optional<ColocationTable> colocation;
  std::optional<EstimateFile> lgb;  // Venus_Sept_lgb.csv (QSSF's)
  std::optional<EstimateFile> ebm;  // Venus_Sept_ebm_weekly_updated.csv (Lucid's)
  std::optional<ForecastFile> forecast;
};

}  // namespace ds
