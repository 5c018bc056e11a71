// Which existing --out folder each command may replace (core/output_folder.hpp does the
// replacing): only what an earlier run of the same kind wrote, never a user's files.
//
//  - simulate, excerpt: a run folder (summary.json, jobs.csv, tenants.csv, timeseries.csv,
//    manifest.json, report.html) is replaced without asking, as before;
//  - compare, demo: a comparison folder (comparison.csv/.md, workload.md, report.html,
//    manifest.json, run folders) only with --force;
//  - pack: pack.csv, pack.md, manifest.json;
//  - slurm replay: a run folder's files and observed.csv, replay.json, journal.log, work/
//    and fidelity/ (what `fidelity` adds);
//  - fidelity: fidelity.json/.md, fidelity_jobs.csv, manifest.json and sim/ (a run folder).
// Anything else in the folder (a trace, notes, a half-written folder of another program)
// refuses it, naming the entry. Temporary files of dead processes (".NAME.tmp-PID-N") count
// as ours. The command's inputs may not lie inside a folder that is replaced.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/output_folder.hpp"

namespace ds {

struct TraceArgs;

// Whether `dir` holds only a run's files (a run folder of simulate or of a comparison).
bool is_run_folder(const std::filesystem::path& dir);

OutputRules run_folder_rules(std::vector<std::string> inputs);
OutputRules comparison_rules(bool force, std::vector<std::string> inputs);
OutputRules pack_rules(std::vector<std::string> inputs);
OutputRules replay_rules(std::vector<std::string> inputs);
OutputRules fidelity_rules(std::vector<std::string> inputs);

// The files and folders a command reads for `args` (trace, cluster file, aux folder).
std::vector<std::string> inputs_of(const TraceArgs& args);

}  // namespace ds
