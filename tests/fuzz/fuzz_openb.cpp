// The openb importer: the pod list, then (after a NUL byte) the GPU node list; without a
// NUL the fixed cluster file supplies the nodes instead.
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"

DEEPSHARE_FUZZ_TARGET(openb) {
  using namespace ds::fuzz;
  const Parts p = split(data, size);
  const std::string dir = fresh_folder();
  const std::string trace = write(dir, "pods.csv", p.trace);
  if (p.has_side) {
    write(dir, "openb_node_list_gpu_node.csv", p.side);
    load(trace, "openb", "");
  } else {
    load(trace, "openb", write(dir, "cluster.yaml", kCluster));
  }
  return 0;
}
