// The cluster from `scontrol show nodes`, read whole and for partition "gpu".
#include "core/error.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"
#include "trace/slurm_nodes.hpp"

DEEPSHARE_FUZZ_TARGET(slurm_nodes) {
  using namespace ds::fuzz;
  const std::string dir = fresh_folder();
  const std::string nodes =
      write(dir, "nodes.txt", std::string_view(reinterpret_cast<const char*>(data), size));
  for (const char* partition : {"", "gpu"}) {
    try {
      ds::SlurmNodesOptions o;
      o.partition = partition;
      o.gpu_memory = {"a100=80", "*=16"};
      (void)ds::read_slurm_nodes(nodes, o);
    } catch (const ds::InputError&) {
      expected_error();
    }
  }
  return 0;
}
