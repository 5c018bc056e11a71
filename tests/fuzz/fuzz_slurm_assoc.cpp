// Tenants from Slurm's accounts: `sacctmgr show assoc --parsable2`, then (after a NUL byte)
// `sacctmgr show qos --parsable2`.
#include "core/error.hpp"
#include "fuzz_target.hpp"
#include "fuzz_util.hpp"
#include "trace/slurm_assoc.hpp"

DEEPSHARE_FUZZ_TARGET(slurm_assoc) {
  using namespace ds::fuzz;
  const Parts p = split(data, size);
  const std::string dir = fresh_folder();
  const std::string assoc = write(dir, "assoc.txt", p.trace);
  const std::string qos = p.has_side ? write(dir, "qos.txt", p.side) : std::string();
  try {
    (void)ds::read_slurm_tenants(assoc, qos);
  } catch (const ds::InputError&) {
    expected_error();
  }
  return 0;
}
