#include "cli/whatif.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/compare.hpp"
#include "cli/import_command.hpp"
#include "cli/report_command.hpp"
#include "cli/validators.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "registry/registry.hpp"

namespace ds {
namespace {

struct WhatifArgs {
  std::string from = "slurm";
  SlurmImportArgs slurm;
  K8sImportArgs k8s;
  std::string site_policy;
  std::vector<std::string> policies;
  std::vector<std::string> sets;
  std::string out;
  unsigned threads = 0;
  bool force = false;
  bool quiet = false;
};

WhatifArgs g_args;

// 1234567.8 -> "1,234,568".
std::string grouped(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", std::fabs(v));
  std::string digits(buf), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 && out != "0" ? "-" : "") + out;
}

// "(-95.5 %)", "(+7.0 %)", "(unchanged)", "(was 0)".
std::string change(double before, double after) {
  if (before == after) return "(unchanged)";
  if (before == 0) return "(was 0)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "(%+.1f %%)", 100.0 * (after - before) / std::fabs(before));
  return buf;
}

std::vector<std::string> default_others(const std::string& site) {
  std::vector<std::string> out = {site};
  if (site != "deepshare") out.push_back("deepshare");
  for (const auto& p : main_policies()) {
    const PolicyInfo* info = find_policy(p);
    if (info && !info->oracle && std::find(out.begin(), out.end(), p) == out.end())
      out.push_back(p);
  }
  return out;
}

const ComparisonRow* row_of(const std::vector<ComparisonRow>& rows, const std::string& policy) {
  for (const auto& r : rows)
    if (r.policy == policy) return &r;
  return nullptr;
}

// Step 1's result, whichever the source.
struct Site {
  Workload workload;
  std::string records;   // named in messages: sacct's file, the pods' file or the API's URL
  std::string recorded;  // recorded_line
};

// Options of the other source are refused rather than ignored.
void check_source_options(CLI::App* cmd) {
  const bool k8s = g_args.from == "k8s";
  if (!k8s && g_args.from != "slurm")
    throw InputError("whatif --from " + quote_input(g_args.from) + ": expected slurm or k8s");
  const std::vector<std::string> slurm_only = {"--sacct", "--assoc", "--qos", "--partition"};
  const std::vector<std::string> k8s_only = {"--kubeconfig", "--context", "--pods",
                                             "--clusterqueues", "--localqueues"};
  for (const auto& o : k8s ? slurm_only : k8s_only)
    if (cmd->count(o) > 0)
      throw InputError("whatif --from " + g_args.from + ": " + o + " is an option of --from " +
                       (k8s ? "slurm" : "k8s"));
}

Site import_site(const std::string& dir) {
  if (g_args.from == "k8s") {
    g_args.k8s.files.nodes = g_args.slurm.files.nodes;  // one --nodes for both sources
    g_args.k8s.options.gpu_memory = g_args.slurm.options.gpu_memory;  // and one --gpu-memory
    K8sImport imp = import_k8s_to(g_args.k8s, dir, g_args.force);
    std::string rec = recorded_line(imp);
    std::string records = imp.workload.name;  // the pods' file, or the API's URL
    return {std::move(imp.workload), std::move(records), std::move(rec)};
  }
  SlurmImport imp = import_slurm_to(g_args.slurm, dir, g_args.force);
  std::string rec = recorded_line(imp);
  return {std::move(imp.workload), g_args.slurm.files.sacct, std::move(rec)};
}

std::vector<std::string> whatif_policies(const std::string& site) {
  std::vector<std::string> policies = default_others(site);
  if (!g_args.policies.empty()) {
    policies = {site};
    if (site != "deepshare") policies.push_back("deepshare");
    for (const auto& p : g_args.policies)
      if (std::find(policies.begin(), policies.end(), p) == policies.end()) policies.push_back(p);
  }
  for (const auto& p : policies)
    if (!find_policy(p))
      throw InputError("unknown policy " + quote_input(p) + " (see `deepshare policies`)");
  return policies;
}

int cmd_whatif(CLI::App* cmd) {
  check_source_options(cmd);
  const std::string site =
      g_args.site_policy.empty() ? default_site_policy(g_args.from) : g_args.site_policy;
  const std::vector<std::string> policies = whatif_policies(site);
  namespace fs = std::filesystem;
  const fs::path out(g_args.out);
  const std::string report = (out / "report").string();
  // Step 1.
  const Site imp = import_site((out / "site").string());
  const Workload& w = imp.workload;
  std::printf("%s: %zu jobs of %zu tenants on %d GPUs; simulating %zu policies\n",
              imp.records.c_str(), w.jobs.size(), w.tenants.size(), w.cluster.total_gpus(),
              policies.size());
  std::fflush(stdout);
  // Step 2.
  CompareRequest req;
  req.policies = policies;
  req.sets = g_args.sets;
  req.out_dir = report;
  req.threads = g_args.threads;
  req.progress = !g_args.quiet;
  req.by_policy_only = true;
  req.force = g_args.force;
  req.title = "What would DeepShare do on " + imp.records + "?";
  const auto rows = run_compare(w, req, imp.records);
  // Step 3.
  const ComparisonRow* s = row_of(rows, site);
  const ComparisonRow* d = row_of(rows, "deepshare");
  std::string verdict;
  if (!imp.recorded.empty()) verdict += imp.recorded + "\n";
  verdict += "site's policy: " + site +
             (g_args.site_policy.empty() && g_args.from == "slurm" && site != "slurm"
                  ? " (the slurm baseline is not in this build: Slurm's defaults, FIFO with "
                    "backfill, stand in for it)"
                  : "") +
             "\n";
  for (const auto& line : whatif_verdict(s->metrics, d->metrics, site)) verdict += line + "\n";
  write_file_atomic((out / "verdict.txt").string(), verdict);
  std::printf("\n%s\n%s", comparison_table(rows).c_str(), verdict.c_str());
  std::printf("Report written to %s (site/: the imported trace and cluster file)\n",
              out.string().c_str());
  write_report_after_runs(report);
  return 0;
}

}  // namespace

std::string default_site_policy(const std::string& from) {
  if (from == "k8s") return "kueue";
  return find_policy("slurm") ? "slurm" : "fifo-pooled";
}

std::vector<std::string> whatif_verdict(const Metrics& site, const Metrics& ds,
                                        const std::string& site_name) {
  std::vector<std::string> out;
  out.push_back("queueing delay: " + grouped(site.avg_queue_s) + " s on average with " + site_name +
                " -> " + grouped(ds.avg_queue_s) + " s with DeepShare " +
                change(site.avg_queue_s, ds.avg_queue_s) + "; p99 " + grouped(site.p99_queue_s) +
                " -> " + grouped(ds.p99_queue_s) + " s");
  char buf[200];
  if (site.entitled_jobs == 0 && ds.entitled_jobs == 0) {
    out.push_back("QoS of guaranteed tenants: no job was entitled (no tenant has a GPU quota)");
  } else {
    std::snprintf(buf, sizeof buf,
                  "QoS of guaranteed tenants: %.1f %% of entitled jobs within their SLO -> "
                  "%.1f %% (%+.1f points)",
                  100 * site.qos_compliance, 100 * ds.qos_compliance,
                  100 * (ds.qos_compliance - site.qos_compliance));
    out.emplace_back(buf);
  }
  std::snprintf(buf, sizeof buf, "utilisation: GPU occupancy %.3f -> %.3f ",
                site.gpu_occupancy_submit_window, ds.gpu_occupancy_submit_window);
  out.push_back(buf + change(site.gpu_occupancy_submit_window, ds.gpu_occupancy_submit_window) +
                " over the submission window");
  return out;
}

std::string recorded_line(const SlurmImport& imp) {
  double wait = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < imp.recorded.size(); ++i) {
    wait +=
        static_cast<double>(imp.recorded[i].first_start_s - imp.workload.jobs[i].submit / kSecond);
    ++n;
  }
  if (n == 0) return {};
  return "as recorded by Slurm: the " + std::to_string(n) + " jobs waited " +
         grouped(wait / static_cast<double>(n)) + " s on average until they first started";
}

std::string recorded_line(const K8sImport& imp) {
  double wait = 0;
  for (std::size_t i = 0; i < imp.recorded.size(); ++i)  // a node's clock may run behind
    wait += static_cast<double>(
        std::max<std::int64_t>(0, imp.recorded[i].start_s - imp.workload.jobs[i].submit / kSecond));
  const std::size_t n = imp.recorded.size();
  if (n == 0) return {};
  return "as recorded by Kubernetes: the " + std::to_string(n) + " pods waited " +
         grouped(wait / static_cast<double>(n)) +
         " s on average from their creation to their start";
}

void register_whatif(CLI::App& app,
                     const std::function<void(CLI::App*, std::function<int()>)>& on_selected) {
  auto* cmd = app.add_subcommand(
      "whatif",
      "What would DeepShare do on my cluster? Import the site's records, compare DeepShare "
      "with the site's policy and the other baselines, write the report, print a verdict");
  cmd->add_option("--from", g_args.from,
                  "Where the records come from: slurm (sacct, sacctmgr, scontrol) or k8s "
                  "(kubectl's JSON of pods, nodes and Kueue's queues, or --kubeconfig)")
      ->capture_default_str();
  add_slurm_import_options(cmd, g_args.slurm, false);
  add_k8s_import_options(cmd, g_args.k8s, false);
  cmd->add_option("--site-policy", g_args.site_policy,
                  "The policy that stands for the site's scheduler (default: --from slurm: "
                  "slurm when the build has it, else fifo-pooled; --from k8s: kueue)");
  cmd->add_option("--policies", g_args.policies,
                  "Other policies to compare (default: every baseline that needs no oracle)")
      ->delimiter(',');
  cmd->add_option("--set", g_args.sets,
                  "KEY=VALUE for every policy that reads KEY, or POLICY:KEY=VALUE (repeatable)");
  cmd->add_option("--threads", g_args.threads, "Parallel runs (default: one per core)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--out", g_args.out,
                  "Folder: site/ (trace.csv, cluster.yaml), report/ (compare's outputs and "
                  "report.html), verdict.txt")
      ->required()
      ->check(non_empty_path());
  cmd->add_flag("--force", g_args.force, "Replace the results of an earlier whatif in --out");
  cmd->add_flag("--quiet", g_args.quiet, "No progress output");
  cmd->footer(
      "Examples (the dumps: `deepshare import slurm --help`, `deepshare import k8s --help`):\n"
      "  deepshare whatif --from slurm --sacct sacct.txt --assoc assoc.txt --qos qos.txt "
      "--nodes nodes.txt --out whatif\n"
      "  deepshare whatif --from k8s --pods pods.json --nodes nodes.json --clusterqueues "
      "clusterqueues.json --localqueues localqueues.json --out whatif\n"
      "  deepshare whatif --from k8s --kubeconfig ~/.kube/config --out whatif");
  on_selected(cmd, [cmd] { return cmd_whatif(cmd); });
}

}  // namespace ds
