// `deepshare pack`: the FGD-style packing experiment (sim/pack.hpp) for several policies.
// Writes OUT/pack.md (admission and fragmentation per policy), OUT/pack.csv (the fill
// curves) and prints the table.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "cli/compare.hpp"
#include "cli/output_rules.hpp"
#include "cli/trace_args.hpp"
#include "cli/validators.hpp"
#include "core/atomic_file.hpp"
#include "core/checked.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/manifest.hpp"
#include "core/output_folder.hpp"
#include "registry/registry.hpp"
#include "sim/pack.hpp"
#include "trace/aux_files.hpp"

namespace ds {
namespace {

struct PackArgs {
  TraceArgs trace{"openb"};
  std::vector<std::string> policies;
  std::vector<std::string> sets;
  double interval_s = 600;
  std::string out;
};

PackArgs g_pack;

// The fill curve's GPU counts as ostream printed them (up to 6 significant digits).
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string pct(double num, double den) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", den > 0 ? 100.0 * num / den : 0.0);
  return buf;
}

int cmd_pack() {
  Workload w = load_workload(g_pack.trace);
  CompareRequest req;
  req.policies = g_pack.policies.empty() ? main_policies() : g_pack.policies;
  req.sets = g_pack.sets;
  const AuxData aux = load_aux(w.aux_dir);
  const auto options = options_per_policy(w, req, aux);
  // Checked, locked and staged before the runs: complete or absent (core/output_folder.hpp).
  OutputFolder folder(g_pack.out, pack_rules(inputs_of(g_pack.trace)));
  std::string csv = "policy,arrived_tasks,requested_gpus,allocated_gpus,fragmented_gpus\n";
  std::string md =
      "| policy | tasks | admitted (tasks) | admitted (GPUs) | LS admitted (GPUs) | "
      "BE admitted (GPUs) | allocated at end | fragmented at end |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (std::size_t i = 0; i < req.policies.size(); ++i) {
    const std::string& name = req.policies[i];
    const PolicyOptions& o = options[i];
    std::vector<Time> oracle;
    const PackResult r = run_packing(
        w,
        [&](const Workload& pw) {
          oracle.clear();  // true run times, for oracle policies only (make_policy filters)
          for (const auto& t : pw.truth) oracle.push_back(t.work);
          return make_policy(name, PolicyContext{pw.cluster, pw.tenants, o, oracle, &aux});
        },
        *seconds_to_ms(g_pack.interval_s, 1, limits::kMaxInterval));  // range checked
    for (const auto& p : r.curve) {
      append_csv_field(csv, name);
      csv += ',' + std::to_string(p.arrived) + ',' + num(p.requested_gpus) + ',' +
             num(p.allocated_gpus) + ',' + num(p.fragmented_gpus) + '\n';
    }
    auto get = [&](const char* k) {
      auto it = r.by_qos.find(k);
      return it == r.by_qos.end() ? PackClassResult{} : it->second;
    };
    const auto all = get("all"), ls = get("LS"), be = get("BE");
    const PackPoint last = r.curve.empty() ? PackPoint{} : r.curve.back();
    md += "| " + name + " | " + std::to_string(all.tasks) + " | " +
          pct(static_cast<double>(all.admitted), static_cast<double>(all.tasks)) + " | " +
          pct(all.admitted_gpus, all.requested_gpus) + " | " +
          pct(ls.admitted_gpus, ls.requested_gpus) + " | " +
          pct(be.admitted_gpus, be.requested_gpus) + " | " +
          pct(last.allocated_gpus, r.capacity_gpus) + " | " +
          pct(last.fragmented_gpus, r.capacity_gpus - last.allocated_gpus) + " of free |\n";
  }
  AtomicFileSet files;
  files.add(folder.path("pack.csv").string()).write(csv);
  files.add(folder.path("pack.md").string()).write(md);
  Manifest manifest;
  manifest.kind = "pack";
  manifest.command = "pack";
  manifest.version = DEEPSHARE_VERSION;
  manifest.identity = {{"trace", g_pack.trace.label()},  {"format", w.format},
                       {"workload_digest", w.digest()},  {"jobs", w.jobs.size()},
                       {"gpus", w.cluster.total_gpus()}, {"policies", req.policies},
                       {"interval_s", g_pack.interval_s}};
  for (const AtomicFile& f : files.finish_all()) manifest.add(f);
  files.add(folder.path(kManifestName).string()).write(manifest.json());
  files.commit();
  folder.commit();
  std::printf("%s\nPacking results written to %s (pack.md, pack.csv)\n", md.c_str(),
              g_pack.out.c_str());
  return 0;
}

}  // namespace

void register_pack(CLI::App& app,
                   const std::function<void(CLI::App*, std::function<int()>)>& on_selected) {
  auto* cmd = app.add_subcommand(
      "pack",
      "FGD-style packing: tasks arrive in trace order and never leave; report the share of "
      "GPU requests admitted (per QoS class) and the fragmentation as the cluster fills");
  add_trace_options(cmd, g_pack.trace, /*workload_options=*/false);
  cmd->add_option("--policies", g_pack.policies, "Comma-separated policy names")->delimiter(',');
  cmd->add_option("--set", g_pack.sets, "KEY=VALUE or POLICY:KEY=VALUE (repeatable)");
  cmd->add_option("--interval", g_pack.interval_s,
                  "Seconds between arrivals; a task not placed by the next arrival is dropped")
      ->capture_default_str()
      ->check(number_in(0.001, static_cast<double>(limits::kMaxInterval / kSecond)));
  cmd->add_option("--out", g_pack.out, "Output folder")->required()->check(non_empty_path());
  on_selected(cmd, cmd_pack);
}

}  // namespace ds
