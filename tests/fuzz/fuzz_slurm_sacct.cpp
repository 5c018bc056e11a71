// The Slurm importer from its jobs: a `sacct --parsable2` dump, imported with small fixed
// associations and nodes (so that folding, the model check and the workload's own checks
// run too), and the native files written from the result.
#include "core/error.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"
#include "trace/native_writer.hpp"
#include "trace/slurm_import.hpp"

DEEPSHARE_FUZZ_TARGET(slurm_sacct) {
  using namespace ds::fuzz;
  const std::string dir = fresh_folder();
  ds::SlurmFiles f;
  f.sacct = write(dir, "sacct.txt", std::string_view(reinterpret_cast<const char*>(data), size));
  f.assoc = write(dir, "assoc.txt",
                  "Account|User|GrpTRES|Share\nalpha||gres/gpu=4|1\nbeta||gres/gpu=2|2\n");
  f.nodes = write(dir, "nodes.txt",
                  "NodeName=n1 Gres=gpu:a100:4 Partitions=gpu\n"
                  "NodeName=n2 Gres=gpu:4 Partitions=gpu,debug\n");
  try {
    const ds::SlurmImport imp = ds::import_slurm(f, {});
    (void)ds::native_trace_csv(imp.workload);
    (void)ds::cluster_file_yaml(imp.workload);
  } catch (const ds::InputError&) {
    expected_error();
  }
  return 0;
}
