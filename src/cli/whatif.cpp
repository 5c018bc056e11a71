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

int cmd_whatif() {
  if (g_args.from == "k8s")
    throw InputError(
        "whatif --from k8s: not available yet (no importer reads the Kubernetes API's records "
        "yet); export the cluster's history as a native trace and use `compare`");
  if (g_args.from != "slurm")
    throw InputError("whatif --from " + quote_input(g_args.from) + ": expected slurm");
  const std::string site = g_args.site_policy.empty() ? default_site_policy() : g_args.site_policy;
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
  namespace fs = std::filesystem;
  const fs::path out(g_args.out);
  const std::string report = (out / "report").string();
  // Step 1.
  const SlurmImport imp = import_slurm_to(g_args.slurm, (out / "site").string(), g_args.force);
  const Workload& w = imp.workload;
  std::printf("%s: %zu jobs of %zu tenants on %d GPUs; simulating %zu policies\n",
              g_args.slurm.files.sacct.c_str(), w.jobs.size(), w.tenants.size(),
              w.cluster.total_gpus(), policies.size());
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
  req.title = "What would DeepShare do on " + g_args.slurm.files.sacct + "?";
  const auto rows = run_compare(w, req, g_args.slurm.files.sacct);
  // Step 3.
  const ComparisonRow* s = row_of(rows, site);
  const ComparisonRow* d = row_of(rows, "deepshare");
  std::string verdict;
  if (const std::string rec = recorded_line(imp); !rec.empty()) verdict += rec + "\n";
  verdict += "site's policy: " + site +
             (g_args.site_policy.empty() && site != "slurm"
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

std::string default_site_policy() {
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

void register_whatif(CLI::App& app,
                     const std::function<void(CLI::App*, std::function<int()>)>& on_selected) {
  auto* cmd = app.add_subcommand(
      "whatif",
      "What would DeepShare do on my cluster? Import the site's records, compare DeepShare "
      "with the site's policy and the other baselines, write the report, print a verdict");
  cmd->add_option("--from", g_args.from, "Where the records come from: slurm (k8s: not yet)")
      ->capture_default_str();
  add_slurm_import_options(cmd, g_args.slurm);
  cmd->add_option("--site-policy", g_args.site_policy,
                  "The policy that stands for the site's scheduler (default: slurm when the "
                  "build has it, else fifo-pooled)");
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
      "Example (the dumps: `deepshare import slurm --help`):\n"
      "  deepshare whatif --from slurm --sacct sacct.txt --assoc assoc.txt --qos qos.txt "
      "--nodes nodes.txt --out whatif");
  on_selected(cmd, cmd_whatif);
}

}  // namespace ds
