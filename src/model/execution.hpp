// The execution rules every driver and policy share, written once (DESIGN §2a):
// what a preemption costs and when a job is entitled.
//
//  - Restart overhead: a preempted job pays 40 s to restart (<= 8 GPUs) or 60 s (more),
//    as Lucid models Tiresias' measured checkpoint-restore time.
//  - Checkpoint loss: a job checkpoints every `interval` of progress (0: at preemption);
//    preemption keeps the progress up to its last checkpoint and loses the rest.
//  - Entitlement (DESIGN §4): a job is entitled when, at submit, its tenant's guaranteed
//    (non-borrowed) running GPUs + the GPUs of its queued entitled jobs + its own GPUs fit
//    the tenant's quota. Quantities in milli-GPUs (GPUs x share), so that fractional
//    requests count the share of a GPU they ask for.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/types.hpp"

namespace ds {

// The memory of a GPU when nothing says otherwise (an RTX 3090-class 24 GiB GPU, as Lucid
// assumes for Venus).
inline constexpr std::int64_t kDefaultGpuMemoryMib = 24 * 1024;

struct RestartOverhead {
  Time small = seconds(40);  // jobs of <= large_above GPUs
  Time large = seconds(60);
  int large_above = 8;
  [[nodiscard]] Time of(int gpus) const { return gpus <= large_above ? small : large; }
};

// The default rule (Lucid's): 40 s for <= 8 GPUs, 60 s above.
inline Time restart_overhead(int gpus) {
  return RestartOverhead{}.of(gpus);
}

// Progress kept by a preemption after `done` of progress, checkpointing every `interval`
// (0: at the preemption itself, nothing lost). `done` < 0: preempted again before the
// restart overhead was paid; the unpaid rest is carried (kept = done), never rounded down
// to -interval, which added a phantom checkpoint interval of work per such preemption
// (31 years at 1e9 s: `srtf --checkpoint-interval 1e9` on Venus ran out of memory).
inline double checkpoint_kept(double done, Time interval) {
  if (interval <= 0 || done <= 0) return done;
  return std::floor(done / static_cast<double>(interval)) * static_cast<double>(interval);
}
inline Time checkpoint_kept(Time done, Time interval) {
  return interval > 0 && done > 0 ? done / interval * interval : done;
}

// DESIGN §4, in milli-GPUs.
inline bool entitled_at_submit(std::int64_t guaranteed, std::int64_t queued_entitled,
                               std::int64_t job, std::int64_t quota) {
  return guaranteed + queued_entitled + job <= quota;
}

}  // namespace ds
