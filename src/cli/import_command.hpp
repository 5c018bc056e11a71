// `deepshare import slurm`: a site's Slurm records (sacct, sacctmgr, scontrol) -> a native
// trace and a cluster file (trace/slurm_import.hpp), and the pieces `whatif` reuses.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "trace/slurm_import.hpp"

namespace CLI {
class App;
}

namespace ds {

struct SlurmImportArgs {
  SlurmFiles files;
  SlurmImportOptions options;
};

// Adds --sacct --assoc --qos --nodes --partition --gpu-memory to `cmd`.
void add_slurm_import_options(CLI::App* cmd, SlurmImportArgs& args);

// Imports (notes to stderr) and writes DIR/trace.csv and DIR/cluster.yaml; an existing file
// there is an error unless `force`. Returns the import.
SlurmImport import_slurm_to(const SlurmImportArgs& args, const std::string& dir, bool force);

void register_import(CLI::App& app,
                     const std::function<void(CLI::App*, std::function<int()>)>& on_selected);

}  // namespace ds
