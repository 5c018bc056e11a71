// The cluster-file parser (YAML), in memory.
#include <string>

#include "core/error.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"
#include "trace/cluster_file.hpp"

DEEPSHARE_FUZZ_TARGET(cluster_file) {
  try {
    (void)ds::parse_cluster_yaml("fuzz.yaml",
                                 std::string(reinterpret_cast<const char*>(data), size));
  } catch (const ds::InputError&) {
    ds::fuzz::expected_error();
  }
  return 0;
}
