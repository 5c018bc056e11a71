// `deepshare import slurm` and `deepshare import k8s`: a site's Slurm records (sacct,
// sacctmgr, scontrol; trace/slurm_import.hpp) or Kubernetes objects (pods, nodes, Kueue's
// queues, as kubectl saves them; trace/k8s_import.hpp) -> a native trace and a cluster file,
// and the pieces `whatif` reuses.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "trace/k8s_import.hpp"
#include "trace/slurm_import.hpp"

namespace CLI {
class App;
}

namespace ds {

struct SlurmImportArgs {
  SlurmFiles files;
  SlurmImportOptions options;
};

struct K8sImportArgs {
  K8sFiles files;
  K8sImportOptions options;
  std::string kubeconfig;  // non-empty: the Lists from the API server (cli/k8s_site.hpp)
  std::string context;
};

// Adds --sacct --assoc --qos --nodes --partition --gpu-memory to `cmd`; `required`: CLI11
// requires --sacct, --assoc and --nodes (`whatif` checks them itself, per --from).
void add_slurm_import_options(CLI::App* cmd, SlurmImportArgs& args, bool required = true);
// Adds --kubeconfig --context --pods --clusterqueues --localqueues and, with `nodes`, --nodes
// and --gpu-memory to `cmd` (`whatif` has those two of the Slurm options: one of each).
void add_k8s_import_options(CLI::App* cmd, K8sImportArgs& args, bool nodes);

// Adds --gpu-memory MODEL=GIB (GpuMemoryRule, trace/slurm_nodes.hpp) to `cmd`.
void add_gpu_memory_option(CLI::App* cmd, std::vector<std::string>& gpu_memory);

// Imports (notes to stderr) and writes DIR/trace.csv and DIR/cluster.yaml; an existing file
// there is an error unless `force`. Returns the import.
SlurmImport import_slurm_to(const SlurmImportArgs& args, const std::string& dir, bool force);
K8sImport import_k8s_to(const K8sImportArgs& args, const std::string& dir, bool force);

void register_import(CLI::App& app,
                     const std::function<void(CLI::App*, std::function<int()>)>& on_selected);

}  // namespace ds
