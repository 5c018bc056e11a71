// The native importer: DeepShare's CSV, then (after a NUL byte) its cluster file; without
// a NUL the fixed cluster file is used.
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"

DEEPSHARE_FUZZ_TARGET(native) {
  using namespace ds::fuzz;
  const Parts p = split(data, size);
  const std::string dir = fresh_folder();
  const std::string trace = write(dir, "jobs.csv", p.trace);
  load(trace, "native", write(dir, "cluster.yaml", p.has_side ? p.side : kCluster));
  return 0;
}
