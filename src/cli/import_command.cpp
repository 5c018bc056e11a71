#include "cli/import_command.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/k8s_site.hpp"
#include "cli/validators.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "trace/native_writer.hpp"

namespace ds {
namespace {

struct ImportArgs {
  SlurmImportArgs slurm;
  K8sImportArgs k8s;
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

std::vector<ExtraColumn> recorded_columns(const K8sImport& imp) {
  std::vector<ExtraColumn> cols = {
      {"k8s_start_s", {}}, {"k8s_end_s", {}}, {"k8s_node", {}}, {"k8s_job", {}}};
  for (const auto& r : imp.recorded) {
    cols[0].values.push_back(std::to_string(r.start_s));
    cols[1].values.push_back(std::to_string(r.end_s));
    cols[2].values.push_back(r.node);
    cols[3].values.push_back(r.job);
  }
  return cols;
}

void refuse_existing(const std::string& dir, bool force) {
  namespace fs = std::filesystem;
  for (const char* name : {"trace.csv", "cluster.yaml"})
    if (const fs::path p = fs::path(dir) / name; !force && fs::exists(p))
      throw InputError(SourceLocation{p.string()},
                       "exists already (pass --force to replace it, or another --out)");
}

// Notes to stderr, then DIR/trace.csv and DIR/cluster.yaml.
void write_site(const std::string& dir, const Workload& w, const std::vector<ExtraColumn>& extra,
                const std::string& source, double import_s) {
  namespace fs = std::filesystem;
  for (const auto& n : w.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  fs::create_directories(dir);
  write_file_atomic((fs::path(dir) / "trace.csv").string(), native_trace_csv(w, extra));
  write_file_atomic((fs::path(dir) / "cluster.yaml").string(),
                    cluster_file_yaml(w, "written by " + source +
                                             "\nedit the tenants' slo_queue_s, "
                                             "checkpoint_interval_s and max_slowdown "
                                             "(defaults here)"));
  std::fprintf(stderr, "imported in %.1f s\n", import_s);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void print_imported(const Workload& w) {
  namespace fs = std::filesystem;
  const std::string trace = (fs::path(g_args.out) / "trace.csv").string();
  const std::string cluster = (fs::path(g_args.out) / "cluster.yaml").string();
  std::printf(
      "imported %zu jobs of %zu tenants on %zu nodes (%d GPUs): %s, %s\n"
      "replay them: deepshare compare --format native --trace %s --cluster %s --out DIR\n",
      w.jobs.size(), w.tenants.size(), w.cluster.nodes.size(), w.cluster.total_gpus(),
      trace.c_str(), cluster.c_str(), trace.c_str(), cluster.c_str());
}

int cmd_import() {
  print_imported(import_slurm_to(g_args.slurm, g_args.out, g_args.force).workload);
  return 0;
}

int cmd_import_k8s() {
  print_imported(import_k8s_to(g_args.k8s, g_args.out, g_args.force).workload);
  return 0;
}

void register_import_k8s(CLI::App* imp,
                         const std::function<void(CLI::App*, std::function<int()>)>& on_selected) {
  auto* k8s = imp->add_subcommand(
      "k8s",
      "Kubernetes pods and nodes (and Kueue's ClusterQueues and LocalQueues), as kubectl saves "
      "them -> OUT/trace.csv (native format) and OUT/cluster.yaml (docs/formats.md, \"k8s\")");
  add_k8s_import_options(k8s, g_args.k8s, true);
  k8s->add_option("--out", g_args.out, "Folder for trace.csv and cluster.yaml")
      ->required()
      ->check(non_empty_path());
  k8s->add_flag("--force", g_args.force, "Replace trace.csv and cluster.yaml in --out");
  k8s->footer(
      "Examples:\n"
      "  deepshare import k8s --kubeconfig ~/.kube/config --out site   # from the API server\n"
      "  kubectl get pods -A -o json > pods.json\n"
      "  kubectl get nodes -o json > nodes.json\n"
      "  kubectl get clusterqueues -o json > clusterqueues.json   # with Kueue\n"
      "  kubectl get localqueues -A -o json > localqueues.json\n"
      "  deepshare import k8s --pods pods.json --nodes nodes.json --clusterqueues "
      "clusterqueues.json --localqueues localqueues.json --out site");
  on_selected(k8s, cmd_import_k8s);
}

}  // namespace

void add_slurm_import_options(CLI::App* cmd, SlurmImportArgs& a, bool required) {
  cmd->add_option("--sacct", a.files.sacct,
                  "Jobs: the output of `sacct --parsable2 --allusers --duplicates --starttime S "
                  "--endtime E --format JobID,JobIDRaw,Account,User,Partition,QOS,Submit,Start,"
                  "End,Elapsed,State,AllocTRES,ReqTRES,NNodes,Timelimit` (run with TZ=UTC)")
      ->required(required)
      ->check(non_empty_path());
  cmd->add_option("--assoc", a.files.assoc,
                  "Accounts: `sacctmgr show assoc --parsable2 format=Cluster,Account,User,"
                  "Partition,ParentName,Share,GrpTRES,QOS,DefaultQOS`")
      ->required(required)
      ->check(non_empty_path());
  cmd->add_option("--qos", a.files.qos,
                  "QOS limits (optional): `sacctmgr show qos --parsable2 format=Name,GrpTRES`")
      ->check(non_empty_path());
  cmd->add_option("--nodes", a.files.nodes,
                  required ? "Nodes: `scontrol show nodes` (or --oneliner)"
                           : "Nodes: `scontrol show nodes` (--from slurm) or `kubectl get nodes "
                             "-o json` (--from k8s)")
      ->required(required)
      ->check(non_empty_path());
  cmd->add_option("--partition", a.options.partition,
                  "Only this partition's jobs and nodes (default: all)");
  add_gpu_memory_option(cmd, a.options.gpu_memory);
}

void add_gpu_memory_option(CLI::App* cmd, std::vector<std::string>& gpu_memory) {
  cmd->add_option("--gpu-memory", gpu_memory,
                  "GPU memory of a model in GiB, MODEL=GIB (repeatable), for models whose name "
                  "(or, on Kubernetes, label nvidia.com/gpu.memory) does not say it, e.g. "
                  "a100=80; '*=GIB' for every model (or none) not known");
}

void add_k8s_import_options(CLI::App* cmd, K8sImportArgs& a, bool nodes) {
  cmd->add_option("--kubeconfig", a.kubeconfig,
                  "Read pods, nodes and Kueue's queues straight from the API server of this "
                  "kubeconfig (instead of --pods, --nodes and the queue files)")
      ->check(non_empty_path());
  cmd->add_option("--context", a.context,
                  "The kubeconfig's context to use (default: its current-context)");
  cmd->add_option("--pods", a.files.pods,
                  "Pods: `kubectl get pods -A -o json` (finished pods with nvidia.com/gpu "
                  "become jobs)")
      ->check(non_empty_path());
  if (nodes) {
    cmd->add_option("--nodes", a.files.nodes, "Nodes: `kubectl get nodes -o json`")
        ->check(non_empty_path());
    add_gpu_memory_option(cmd, a.options.gpu_memory);
  }
  cmd->add_option("--clusterqueues", a.files.clusterqueues,
                  "Kueue's quotas (optional, with --localqueues): `kubectl get clusterqueues -o "
                  "json`; without them the namespaces share the GPUs evenly")
      ->check(non_empty_path());
  cmd->add_option("--localqueues", a.files.localqueues,
                  "Kueue's namespaces (optional, with --clusterqueues): `kubectl get localqueues "
                  "-A -o json`")
      ->check(non_empty_path());
}

SlurmImport import_slurm_to(const SlurmImportArgs& args, const std::string& dir, bool force) {
  refuse_existing(dir, force);
  const auto t0 = std::chrono::steady_clock::now();
  std::fprintf(stderr, "importing %s ...\n", args.files.sacct.c_str());
  SlurmImport imp = import_slurm(args.files, args.options);
  write_site(dir, imp.workload, recorded_columns(imp),
             "`deepshare import slurm` from " + args.files.nodes + " and " + args.files.assoc,
             seconds_since(t0));
  return imp;
}

namespace {

// The Lists from the files, or from the API server with --kubeconfig (then no file is given).
K8sSiteLists k8s_lists(const K8sImportArgs& args) {
  if (args.kubeconfig.empty()) {
    if (!args.context.empty())
      throw InputError("--context: names a context of --kubeconfig, which is not given");
    return {read_k8s_files(args.files), "", {}};
  }
  const auto& f = args.files;
  for (const auto& [option, value] : {std::pair{"--pods", f.pods},
                                      {"--nodes", f.nodes},
                                      {"--clusterqueues", f.clusterqueues},
                                      {"--localqueues", f.localqueues}})
    if (!value.empty())
      throw InputError(std::string(option) +
                       ": --kubeconfig reads the objects from the API server; give files "
                       "(--pods, --nodes...) or --kubeconfig, not both");
#ifdef DEEPSHARE_HAVE_K8S
  return fetch_k8s_lists(args.kubeconfig, args.context);
#else
  throw InputError(
      "--kubeconfig: this build has no Kubernetes client (libcurl was not found when it was "
      "built); save the objects with kubectl and pass --pods and --nodes (deepshare import "
      "k8s --help)");
#endif
}

}  // namespace

K8sImport import_k8s_to(const K8sImportArgs& args, const std::string& dir, bool force) {
  refuse_existing(dir, force);
  const auto t0 = std::chrono::steady_clock::now();
  if (!args.kubeconfig.empty())
    std::fprintf(stderr, "reading pods, nodes and Kueue's queues from the API server of %s ...\n",
                 args.kubeconfig.c_str());
  else if (!args.files.pods.empty())
    std::fprintf(stderr, "importing %s ...\n", args.files.pods.c_str());
  K8sSiteLists site = k8s_lists(args);
  K8sImport imp = import_k8s(site.lists, args.options);
  imp.workload.notes.insert(imp.workload.notes.begin(), site.notes.begin(), site.notes.end());
  const std::string queues = !site.lists.clusterqueues
                                 ? std::string(" (no Kueue queues: quotas split evenly)")
                                 : " and " + site.lists.clusterqueues->source;
  write_site(dir, imp.workload, recorded_columns(imp),
             "`deepshare import k8s` from " + site.lists.nodes.source + queues, seconds_since(t0));
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
  register_import_k8s(imp, on_selected);
}

}  // namespace ds
