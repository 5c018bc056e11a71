// The Slurm controller's configuration file (YAML, src/slurm/config.hpp), in memory: bad
// input may only be an InputError naming the field.
#include <string>

#include "core/error.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"
#include "slurm/config.hpp"

DEEPSHARE_FUZZ_TARGET(controller_config) {
  try {
    (void)ds::slurm::parse_controller_config(
        "fuzz.yaml", std::string(reinterpret_cast<const char*>(data), size));
  } catch (const ds::InputError&) {
    ds::fuzz::expected_error();
  }
  return 0;
}
