// Lucid's own per-job run-time estimates, for fidelity runs of its baselines.
//
// Lucid artifact, simulation/estimator/: `lgb/Venus_Sept_lgb.csv` (LightGBM, what
// `simulator.py -s qssf` feeds QSSF) and `ebm/Venus_Sept_ebm_weekly_updated.csv`
// (EBM retrained weekly: what Lucid itself and the artifact's `--sweep` run of QSSF
// use). Both are `job_id,priority` with the estimate in seconds; the estimator
// (estimator.py, CombinedEstimator) replaces negative EBM values by 1000 and
// multiplies by the job's GPUs. The Venus importer points PolicyContext::aux_dir at
// the trace's aux/ folder, which holds copies of both files.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/job.hpp"

namespace ds {

enum class LucidEstimateFile : std::uint8_t { Lgb, Ebm };

// File name inside the aux folder, e.g. "Venus_Sept_lgb.csv".
const char* file_name(LucidEstimateFile f);
// Reads "lgb" or "ebm"; InputError otherwise.
LucidEstimateFile parse_estimate_file(const std::string& name);

// Estimated run time (exclusive, per job, not yet multiplied by GPUs) of every job,
// indexed by JobId, matched on the trace's job id (JobSpec::name). EBM: negative
// estimates become 1000 s, as Lucid does. Throws InputError naming the file when it
// cannot be read, when a value is not a number (file:line:column), or when a job has
// no estimate (Lucid would fail on it too).
std::vector<Time> read_lucid_estimates(const std::string& aux_dir, LucidEstimateFile file,
                                       std::span<const JobSpec> jobs);

}  // namespace ds
