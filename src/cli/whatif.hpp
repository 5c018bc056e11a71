// `deepshare whatif`: "what would DeepShare do on my cluster?" in one command.
//
// Algorithm:
//  1. Import the site's records (--from slurm or --from k8s: import_command.hpp) into
//     OUT/site/ (trace.csv, cluster.yaml: the same workload `compare --format native` replays).
//  2. Compare, on that workload at its own load, the site's policy (--from slurm: the `slurm`
//     baseline when the build registers it, else fifo-pooled: Slurm's defaults, priority/basic
//     = FIFO with sched/backfill, no preemption; --from k8s: the `kueue` baseline), DeepShare
//     and the other baselines that need no oracle; OUT/report/ holds `compare`'s outputs and
//     its report.html.
//  3. Print the table, what the site recorded (the jobs' average wait until their first start),
//     and the verdict: three lines (queueing delay, QoS of guaranteed tenants, utilisation),
//     each as the site's policy -> DeepShare with the change; also in OUT/verdict.txt.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "report/metrics.hpp"
#include "trace/k8s_import.hpp"
#include "trace/slurm_import.hpp"

namespace CLI {
class App;
}

namespace ds {

// The site's policy when none is named: for records `from` slurm, `slurm` if registered, else
// `fifo-pooled`; from k8s, `kueue`.
std::string default_site_policy(const std::string& from = "slurm");

// Step 3's three lines: `site` is the site's policy's run, named `site_name`.
std::vector<std::string> whatif_verdict(const Metrics& site, const Metrics& deepshare,
                                        const std::string& site_name);

// What Slurm recorded: "as recorded by Slurm: N jobs waited X s on average until they first
// started"; empty when no job started.
std::string recorded_line(const SlurmImport& imp);
// What the Kubernetes API recorded: "as recorded by Kubernetes: the N pods waited X s on
// average from their creation to their start" (a start before the creation counts as 0).
std::string recorded_line(const K8sImport& imp);

void register_whatif(CLI::App& app,
                     const std::function<void(CLI::App*, std::function<int()>)>& on_selected);

}  // namespace ds
