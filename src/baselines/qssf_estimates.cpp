#include "baselines/qssf_estimates.hpp"

#include <cmath>
#include <filesystem>
#include <unordered_map>

#include "core/csv.hpp"
#include "core/error.hpp"

namespace ds {

const char* file_name(LucidEstimateFile f) {
  return f == LucidEstimateFile::Lgb ? "Venus_Sept_lgb.csv" : "Venus_Sept_ebm_weekly_updated.csv";
}

LucidEstimateFile parse_estimate_file(const std::string& name) {
  if (name == "lgb") return LucidEstimateFile::Lgb;
  if (name == "ebm") return LucidEstimateFile::Ebm;
  throw InputError("--set estimates: expected lgb or ebm, got '" + name + "'");
}

std::vector<Time> read_lucid_estimates(const std::string& aux_dir, LucidEstimateFile file,
                                       std::span<const JobSpec> jobs) {
  if (aux_dir.empty())
    throw InputError(std::string("Lucid's estimates (") + file_name(file) +
                     ") need the trace's aux folder: --set aux=DIR");
  const std::string path = (std::filesystem::path(aux_dir) / file_name(file)).string();
  CsvReader csv = CsvReader::open(path);
  csv.read_header();
  const std::size_t c_id = csv.require_column("job_id");
  const std::size_t c_value = csv.require_column("priority");
  std::unordered_map<std::string, double> by_id;
  while (csv.next()) {
    double v = csv.get_double(c_value);
    if (!std::isfinite(v)) csv.fail(c_value, "a finite number of seconds");
    if (file == LucidEstimateFile::Ebm && v < 0) v = 1000;  // CombinedEstimator's rule
    by_id[std::string(csv.field(c_id))] = v;
  }
  std::vector<Time> out(jobs.size(), 0);
  std::size_t missing = 0;
  std::string first_missing;
  for (const JobSpec& j : jobs) {
    auto it = by_id.find(j.name);
    if (it == by_id.end()) {
      if (missing++ == 0) first_missing = j.name;
      continue;
    }
    out[j.id.index()] = static_cast<Time>(std::llround(it->second * kSecond));
  }
  if (missing > 0)
    throw InputError(path + ": no estimate for job '" + first_missing + "'" +
                     (missing > 1 ? " and " + std::to_string(missing - 1) + " other jobs" : "") +
                     " (Lucid's estimate files cover the Venus September trace only)");
  return out;
}

}  // namespace ds
