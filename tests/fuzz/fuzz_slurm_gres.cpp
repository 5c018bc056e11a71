// The GRES strings the Slurm adapter reads (src/slurm/gres.hpp): a job's request
// (`parse_gres_request`, e.g. "gres:gpu:g0:1,gres:gpushare:g2:1"), a node's allocation
// ("gpu:g0:1(IDX:0),gpushare:g2:1(IDX:2)"), a node's GPU count, an array's task list. They
// come from Slurm, never fail, and a request DeepShare can write reads back as written.
#include <cstdlib>
#include <string>

#include "fuzz_target.hpp"
#include "slurm/gres.hpp"

DEEPSHARE_FUZZ_TARGET(slurm_gres) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const ds::slurm::GresRequest r = ds::slurm::parse_gres_request(text);
  if ((r.kind == ds::slurm::GresKind::Whole || r.kind == ds::slurm::GresKind::Slot) && r.mask) {
    const ds::slurm::GresRequest back =
        ds::slurm::parse_gres_request(ds::slurm::format_gres_request(r.kind, r.mask));
    if (back.kind != r.kind || back.mask != r.mask) std::abort();  // a codec bug
  }
  (void)ds::slurm::parse_gres_alloc(text);
  (void)ds::slurm::parse_gpu_count(text);
  (void)ds::slurm::expand_tasks(text, 10000);
  return 0;
}
