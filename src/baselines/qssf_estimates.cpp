#include "baselines/qssf_estimates.hpp"

#include <cmath>

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

const EstimateFile& estimate_file(const AuxData* aux, LucidEstimateFile file) {
  const std::optional<EstimateFile>* f = nullptr;
  if (aux) f = file == LucidEstimateFile::Lgb ? &aux->lgb : &aux->ebm;
  if (!f || !*f)
    throw InputError(std::string("Lucid's estimates (") + file_name(file) +
                     ") need the trace's aux folder: --aux DIR" +
                     (aux && !aux->dir.empty() ? " ('" + aux->dir + "' has no such file)" : ""));
  return **f;
}

Time lucid_estimate(const EstimateFile& estimates, LucidEstimateFile file, const JobSpec& job) {
  auto it = estimates.seconds.find(job.name);
  if (it == estimates.seconds.end())
    throw InputError(estimates.path + ": no estimate for job '" + job.name +
                     "' (Lucid's estimate files cover the Venus September trace only)");
  double v = it->second;
  if (file == LucidEstimateFile::Ebm && v < 0) v = 1000;  // CombinedEstimator's rule
  return static_cast<Time>(std::llround(v * kSecond));
}

}  // namespace ds
