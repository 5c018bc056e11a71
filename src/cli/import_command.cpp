#include "cli/import_command.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/validators.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "trace/native_writer.hpp"

namespace ds {
namespace {

struct ImportArgs {
  SlurmImportArgs slurm;
  std::string out;
  bool force = false;
};

ImportArgs g_args;

std::vector<ExtraColumn> recorded_columns(const SlurmImport& imp) {
  std::vector<ExtraColumn> cols = {{"slurm_first_start_s", {}},
                                   {"slurm_start_s", {}},
                                   {"slurm_end_s", {}},
                                   {"slurm_time_limit_s", {}},
                                   {"slurm_runs", {}}};
  for (const auto& r : imp.recorded) {
    cols[0].values.push_back(std::to_string(r.first_start_s));
    cols[1].values.push_back(std::to_string(r.start_s));
    cols[2].values.push_back(std::to_string(r.end_s));
    cols[3].values.push_back(r.time_limit_s < 0 ? "" : std::to_string(r.time_limit_s));
    cols[4].values.push_back(std::to_string(r.runs));
  }
  return cols;
}

int cmd_import() {
  const SlurmImport imp = import_slurm_to(g_args.slurm, g_args.out, g_args.force);
  const Workload& w = imp.workload;
  namespace fs = std::filesystem;
  const std::string trace = (fs::path(g_args.out) / "trace.csv").string();
  const std::string cluster = (fs::path(g_args.out) / "cluster.yaml").string();
  std::printf(
      "imported %zu jobs of %zu tenants on %zu nodes (%d GPUs): %s, %s\n"
      "replay them: deepshare compare --format native --trace %s --cluster %s --out DIR\n",
      w.jobs.size(), w.tenants.size(), w.cluster.nodes.size(), w.cluster.total_gpus(),
      trace.c_str(), cluster.c_str(), trace.c_str(), cluster.c_str());
  return 0;
}

}  // namespace

void add_slurm_import_options(CLI::App* cmd, SlurmImportArgs& a) {
  cmd->add_option("--sacct", a.files.sacct,
                  "Jobs: the output of `sacct --parsable2 --allusers --duplicates --starttime S "
                  "--endtime E --format JobID,JobIDRaw,Account,User,Partition,QOS,Submit,Start,"
                  "End,Elapsed,State,AllocTRES,ReqTRES,NNodes,Timelimit` (run with TZ=UTC)")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--assoc", a.files.assoc,
                  "Accounts: `sacctmgr show assoc --parsable2 format=Cluster,Account,User,"
                  "Partition,ParentName,Share,GrpTRES,QOS,DefaultQOS`")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--qos", a.files.qos,
                  "QOS limits (optional): `sacctmgr show qos --parsable2 format=Name,GrpTRES`")
      ->check(non_empty_path());
  cmd->add_option("--nodes", a.files.nodes, "Nodes: `scontrol show nodes` (or --oneliner)")
      ->required()
      ->check(non_empty_path());
  cmd->add_option("--partition", a.options.partition,
                  "Only this partition's jobs and nodes (default: all)");
  cmd->add_option("--gpu-memory", a.options.gpu_memory,
                  "GPU memory of a model in GiB, MODEL=GIB (repeatable), for models whose name "
                  "does not say it, e.g. a100=80; '*=GIB' for every model (or none) not known");
}

SlurmImport import_slurm_to(const SlurmImportArgs& args, const std::string& dir, bool force) {
  namespace fs = std::filesystem;
  const fs::path trace = fs::path(dir) / "trace.csv", cluster = fs::path(dir) / "cluster.yaml";
  for (const auto& p : {trace, cluster})
    if (!force && fs::exists(p))
      throw InputError(SourceLocation{p.string()},
                       "exists already (pass --force to replace it, or another --out)");
  const auto t0 = std::chrono::steady_clock::now();
  std::fprintf(stderr, "importing %s ...\n", args.files.sacct.c_str());
  SlurmImport imp = import_slurm(args.files, args.options);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& n : imp.workload.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  fs::create_directories(dir);
  write_file_atomic(trace.string(), native_trace_csv(imp.workload, recorded_columns(imp)));
  write_file_atomic(
      cluster.string(),
      cluster_file_yaml(imp.workload, "written by `deepshare import slurm` from " +
                                          args.files.nodes + " and " + args.files.assoc +
                                          "\nedit the tenants' slo_queue_s, "
                                          "checkpoint_interval_s and max_slowdown "
                                          "(defaults here)"));
  std::fprintf(stderr, "imported in %.1f s\n", s);
  return imp;
}

void register_import(CLI::App& app,
                     const std::function<void(CLI::App*, std::function<int()>)>& on_selected) {
  auto* imp = app.add_subcommand("import", "Import a site's own records as a native trace");
  imp->require_subcommand(1);
  auto* slurm = imp->add_subcommand(
      "slurm",
      "Slurm accounting (sacct), accounts and QOS (sacctmgr) and nodes (scontrol) -> "
      "OUT/trace.csv (native format) and OUT/cluster.yaml (docs/formats.md, \"slurm\")");
  add_slurm_import_options(slurm, g_args.slurm);
  slurm->add_option("--out", g_args.out, "Folder for trace.csv and cluster.yaml")
      ->required()
      ->check(non_empty_path());
  slurm->add_flag("--force", g_args.force, "Replace trace.csv and cluster.yaml in --out");
  slurm->footer(
      "Example:\n"
      "  TZ=UTC sacct --parsable2 -a -D -S 2026-11-01 -E 2026-12-01 --format JobID,JobIDRaw,"
      "Account,User,Partition,QOS,Submit,Start,End,Elapsed,State,AllocTRES,ReqTRES,NNodes,"
      "Timelimit > sacct.txt\n"
      "  sacctmgr show assoc --parsable2 format=Cluster,Account,User,Partition,ParentName,Share,"
      "GrpTRES,QOS,DefaultQOS > assoc.txt\n"
      "  sacctmgr show qos --parsable2 format=Name,GrpTRES > qos.txt\n"
      "  scontrol show nodes > nodes.txt\n"
      "  deepshare import slurm --sacct sacct.txt --assoc assoc.txt --qos qos.txt --nodes "
      "nodes.txt --out site");
  on_selected(slurm, cmd_import);
}

}  // namespace ds
