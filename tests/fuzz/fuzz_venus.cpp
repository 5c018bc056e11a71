// The venus importer: the input is the jobs CSV, then (after a NUL byte) aux/vc_config.csv;
// without a NUL the fixed cluster file supplies the VCs instead.
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"

DEEPSHARE_FUZZ_TARGET(venus) {
  using namespace ds::fuzz;
  const Parts p = split(data, size);
  const std::string dir = fresh_folder();
  const std::string trace = write(dir, "jobs.csv", p.trace);
  if (p.has_side) {
    write(dir, "aux/vc_config.csv", p.side);
    load(trace, "venus", "");
  } else {
    load(trace, "venus", write(dir, "cluster.yaml", kCluster));
  }
  return 0;
}
