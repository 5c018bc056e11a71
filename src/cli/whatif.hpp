// `deepshare whatif`: "what would DeepShare do on my cluster?" in one command.
//
// Algorithm:
//  1. Import the site's records (--from slurm: import_command.hpp) into OUT/site/
//     (trace.csv, cluster.yaml: the same workload `compare --format native` replays).
//  2. Compare, on that workload at its own load, the site's policy (the `slurm` baseline
//     when the build registers it, else fifo-pooled: Slurm's defaults, priority/basic = FIFO
//     with sched/backfill, no preemption), DeepShare and the other baselines that need no
//     oracle; OUT/report/ holds `compare`'s outputs and its report.html.
//  3. Print the table, what Slurm recorded (the jobs' average wait until their first start),
//     and the verdict: three lines (queueing delay, QoS of guaranteed tenants, utilisation),
//     each as the site's policy -> DeepShare with the change; also in OUT/verdict.txt.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "report/metrics.hpp"
#include "trace/slurm_import.hpp"

namespace CLI {
class App;
}

namespace ds {

// The site's policy when none is named: `slurm` if registered, else `fifo-pooled`.
std::string default_site_policy();

// Step 3's three lines: `site` is the site's policy's run, named `site_name`.
std::vector<std::string> whatif_verdict(const Metrics& site, const Metrics& deepshare,
                                        const std::string& site_name);

// What Slurm recorded: "as recorded by Slurm: N jobs waited X s on average until they first
// started"; empty when no job started.
std::string recorded_line(const SlurmImport& imp);

void register_whatif(CLI::App& app,
                     const std::function<void(CLI::App*, std::function<int()>)>& on_selected);

}  // namespace ds
