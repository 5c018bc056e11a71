#include "trace/aux_files.hpp"

#include <cmath>
#include <filesystem>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace fs = std::filesystem;

EstimateFile read_estimate_file(const std::string& path) {
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  const std::size_t c_id = csv.require_column("job_id");
  const std::size_t c_value = csv.require_column("priority");
  EstimateFile f;
  f.path = path;
  while (csv.next()) {
    const double v = csv.get_double(c_value);
    if (!std::isfinite(v) || std::abs(v) > 1e10) csv.fail(c_value, "a finite number of seconds");
    f.seconds[std::string(csv.field(c_id))] = v;
  }
  return f;
}

ForecastFile read_forecast_file(const std::string& path) {
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  const auto c_time = csv.require_column("time");
  const auto c_jobs = csv.require_column("pred_gpu_job");
  const auto c_gpus = csv.require_column("pred_gpu_num");
  ForecastFile f;
  f.path = path;
  while (csv.next()) {
    const auto t = parse_datetime(csv.field(c_time));
    if (!t) csv.fail(c_time, "a time 'YYYY-MM-DD HH:MM:SS'");
    if (!f.rows.empty() && *t <= f.rows.back().time_s)
      csv.fail(c_time, "a time after the previous row's");
    ForecastRow r{*t, csv.get_double(c_jobs), csv.get_double(c_gpus)};
    // Predictions, not counts: a model may forecast below zero (Lucid's file does).
    if (!std::isfinite(r.jobs) || std::abs(r.jobs) > 1e9) csv.fail(c_jobs, "a finite number");
    if (!std::isfinite(r.gpus) || std::abs(r.gpus) > 1e9) csv.fail(c_gpus, "a finite number");
    f.rows.push_back(r);
  }
  return f;
}

AuxData load_aux(const std::string& dir) {
  AuxData a;
  if (dir.empty()) return a;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir + ": not a folder (--aux DIR)");
  a.dir = dir;
  auto file = [&](const char* name) -> std::string {
    const fs::path p = fs::path(dir) / name;
    return fs::is_regular_file(p, ec) ? p.string() : std::string();
  };
  if (ColocationTable::available(dir)) a.colocation = ColocationTable::load(dir);
  if (auto p = file(kLgbEstimateFile); !p.empty()) a.lgb = read_estimate_file(p);
  if (auto p = file(kEbmEstimateFile); !p.empty()) a.ebm = read_estimate_file(p);
  if (auto p = file(kForecastFile); !p.empty()) a.forecast = read_forecast_file(p);
  return a;
}

}  // namespace ds
