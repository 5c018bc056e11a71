// `deepshare compare`: every policy x load on one workload, in parallel.
//
// Algorithm:
//  1. Options: `KEY=VALUE` goes to every policy that reads KEY (found by building each
//     policy once with all of them), `POLICY:KEY=VALUE` to that policy only; a key that
//     no policy reads is an error, as in `simulate`.
//  2. One workload per load factor (Workload::scale_load of the loaded trace).
//  3. Runs = policies x loads, in that order, each with its own folder
//     OUT/<policy>@<load>/ (a policy or load given twice, or two loads with the same
//     label, is an error: two threads must never write one folder). OUT must be empty or
//     absent; with `force`, an earlier comparison there is replaced, and a folder holding
//     anything else is refused (so that --force cannot delete a user's files). Everything
//     is written into a staging folder that replaces OUT only when complete
//     (core/output_folder.hpp, cli/output_rules.hpp).
//     A pool of std::thread (hardware concurrency, at most one per run) takes the runs in
//     order; every run is independent (own policy, options and simulator; the workload is
//     shared read-only) and writes the outputs of `simulate`.
//  4. Results are kept by run index, so comparison.csv / comparison.md (one row per
//     policy x load, in request order) do not depend on which thread finished first.
//  5. Last: the extra files, manifest.json (core/manifest.hpp: the workload's identity,
//     the files and run folders), report.html (when asked; it reads the runs back through
//     their manifests), then the folder replaces OUT.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cli/run.hpp"
#include "report/comparison.hpp"

namespace CLI {
class App;
}

namespace ds {

struct CompareRequest {
  std::vector<std::string> policies;
  std::vector<double> loads = {1.0};
  std::vector<std::string> sets;  // KEY=VALUE or POLICY:KEY=VALUE
  std::string out_dir;
  std::uint64_t seed = 1;
  unsigned threads = 0;             // 0: std::thread::hardware_concurrency()
  bool progress = true;             // one line on stderr per finished run
  bool by_policy_only = false;      // one load: folders and rows named by the policy alone (demo)
  bool force = false;               // clear OUT's previous DeepShare outputs first (step 3)
  std::string title;                // heads comparison.md
  TruthOptions truth;               // the simulator's ground truth of every run
  std::string command = "compare";  // recorded in the manifests
  std::vector<std::string> inputs;  // files the command read: not inside a replaced OUT
  // More files of the folder (demo: workload.md), written before its manifest.
  std::vector<std::pair<std::string, std::string>> extra_files;
  bool html_report = false;  // write OUT/report.html before the folder is committed
};

// Workload::scale_load after checking the factor's range (limits::kMinFactor..kMaxFactor)
// and that the scaled submit times stay within +-100 years (an InputError otherwise).
void scale_load_checked(Workload& workload, double factor);

// Runs every policy x load of `workload` (unscaled) and writes OUT/comparison.csv and
// OUT/comparison.md; returns the rows in request order. Throws InputError for bad
// requests (unknown policy or option, no policy, a load <= 0) before running anything.
// A run that fails rethrows its error after all runs ended, or, when `failed` is given,
// is left out of the table and named there (its error goes to stderr).
std::vector<ComparisonRow> run_compare(const Workload& workload, const CompareRequest& request,
                                       const std::string& trace_label,
                                       std::vector<std::string>* failed = nullptr);

// Options of each policy of the request (step 1 above), in request order; `aux` is the
// workload's auxiliary data (policies are built once to see which keys they read).
std::vector<PolicyOptions> options_per_policy(const Workload& workload,
                                              const CompareRequest& request, const AuxData& aux);

// Folder (and row label) of one run: "<policy>@<load>", e.g. "sjf@1.25".
std::string run_name(const std::string& policy, double load);

// `--checkpoint-interval SECONDS`: replaces every tenant's checkpoint interval
// (0 = a job checkpoints when it is preempted, as Lucid assumes). Negative: no change.
void override_checkpoint_interval(Workload& workload, double seconds);

// The registered policies `demo` compares by default: the baselines we must beat
// (fifo-isolated, fifo-pooled, sjf, srtf, qssf, tiresias, lucid, kueue) and deepshare.
std::vector<std::string> main_policies();

// Adds the `compare` subcommand to `app`; `on_selected(cmd, action)` registers the
// action to run when `cmd` is the selected subcommand (compare_command.cpp).
void register_compare(CLI::App& app,
                      const std::function<void(CLI::App*, std::function<int()>)>& on_selected);

}  // namespace ds
