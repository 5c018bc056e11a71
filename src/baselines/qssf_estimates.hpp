// Lucid's own per-job run-time estimates, for fidelity runs of its baselines.
//
// Lucid artifact, simulation/estimator/: `lgb/Venus_Sept_lgb.csv` (LightGBM, what
// `simulator.py -s qssf` feeds QSSF) and `ebm/Venus_Sept_ebm_weekly_updated.csv`
// (EBM retrained weekly: what Lucid itself and the artifact's `--sweep` run of QSSF
// use). Both are `job_id,priority` with the estimate in seconds; the estimator
// (estimator.py, CombinedEstimator) replaces negative EBM values by 1000 and
// multiplies by the job's GPUs. The CLI reads the trace's aux/ folder (or `--aux DIR`)
// into AuxData, which holds both files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/aux_data.hpp"
#include "model/job.hpp"

namespace ds {

enum class LucidEstimateFile : std::uint8_t { Lgb, Ebm };

// File name inside the aux folder, e.g. "Venus_Sept_lgb.csv".
const char* file_name(LucidEstimateFile f);
// Reads "lgb" or "ebm"; InputError otherwise.
LucidEstimateFile parse_estimate_file(const std::string& name);

// The estimate file of that kind among the aux inputs; InputError when it was not found.
const EstimateFile& estimate_file(const AuxData* aux, LucidEstimateFile file);
// Lucid's estimated run time of `job` (exclusive, not yet multiplied by GPUs), matched on
// the trace's job id (JobSpec::name). EBM: negative estimates become 1000 s, as Lucid
// does. InputError naming the file when the job has none (Lucid would fail on it too).
Time lucid_estimate(const EstimateFile& estimates, LucidEstimateFile file, const JobSpec& job);

}  // namespace ds
