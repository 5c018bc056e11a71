// The helios importer: cluster_log.csv, then (after a NUL byte) cluster_gpu_number.csv;
// without a NUL the fixed cluster file supplies the VCs instead.
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"

DEEPSHARE_FUZZ_TARGET(helios) {
  using namespace ds::fuzz;
  const Parts p = split(data, size);
  const std::string dir = fresh_folder();
  const std::string trace = write(dir, "cluster_log.csv", p.trace);
  if (p.has_side) {
    write(dir, "cluster_gpu_number.csv", p.side);
    load(trace, "helios", "");
  } else {
    load(trace, "helios", write(dir, "cluster.yaml", kCluster));
  }
  return 0;
}
