// What the DeepShare policy did, counted for summary.json: written by the steps, read by no
// decision.
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace ds::deepshare {

struct Tally {
  std::size_t reclaims = 0, reclaim_victims = 0, reclaim_waits = 0;
  std::size_t shared_starts = 0, borrowed_starts = 0, pair_splits = 0;
  std::size_t slices = 0, slice_victims = 0, drains = 0, drain_victims = 0;
  // Estimated lost work (GPU-seconds) of preemptions by reclaim, by time slicing (and pair
  // splits) and by drains.
  double reclaim_lost = 0, slice_lost = 0, drain_lost = 0;

  void summarize(std::map<std::string, double>& out) const {
    out["reclaims"] = static_cast<double>(reclaims);
    out["reclaim_victims"] = static_cast<double>(reclaim_victims);
    out["reclaim_waits"] = static_cast<double>(reclaim_waits);
    out["shared_starts"] = static_cast<double>(shared_starts);
    out["pair_splits"] = static_cast<double>(pair_splits);
    out["borrowed_starts"] = static_cast<double>(borrowed_starts);
    out["slices"] = static_cast<double>(slices);
    out["slice_victims"] = static_cast<double>(slice_victims);
    out["drains"] = static_cast<double>(drains);
    out["drain_victims"] = static_cast<double>(drain_victims);
    out["reclaim_lost_gpu_hours"] = reclaim_lost / 3600;
    out["slice_lost_gpu_hours"] = slice_lost / 3600;
    out["drain_lost_gpu_hours"] = drain_lost / 3600;
  }
};

}  // namespace ds::deepshare
