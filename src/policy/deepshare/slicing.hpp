// DeepShare's time slicing of long-running work (step "time slicing").
//
// Assumptions: run times are heavy-tailed, so a job that has already run far longer than a
// pending job is predicted to run will most likely still run far longer (least attained
// service first, as Tiresias, but with predictions and checkpoints). A preemption right
// after a checkpoint loses almost nothing but the restart overhead. A tenant's quota is
// its own: it may slice its own guaranteed jobs, never another tenant's; borrowed work
// is preemptible by anyone.
//
// Algorithm:
//  1. Candidates: running jobs that hold their GPUs (alone, or as the host of a sharing
//     pair: pair_victims) that have run at least slice_min (their attained service) and at
//     least slice_past x their own prediction, and would lose at most slice_lost of work if
//     preempted now. Those that would lose more become candidates at their next checkpoint
//     (a wake-up is asked for when a job waits for one). A host goes with its joiner
//     when the joiner has run as long and would lose at most pair_lost of its checkpoint
//     interval (pair_victims); the joiner's work since its own checkpoint counts in the cost.
//  2. Pending fresh jobs that are not entitled (those reclaim, step "entitled"): of each
//     tenant that has victims to take, its first by predicted GPU time and its
//     longest-waiting; tenants in turn from a rotating start, at most slice_attempts attempts
//     per cycle.
//  3. For a pending job j predicted to run p: victims are the candidates that have run at
//     least slice_ratio x p — borrowed ones of any tenant, guaranteed ones of j's tenant —
//     and the cheapest set that lets j place is chosen (plan_reclaim, cost = lost work +
//     restart overhead, in GPU-seconds).
//  4. j runs guaranteed (at home) when its tenant's quota, less its own victims, fits it
//     (and the quota owed to queued entitled jobs); otherwise borrowed (anywhere, borrowed
//     victims only) when the lent capacity left (Cycle::borrow_room), plus its victims', fits
//     it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "policy/deepshare/book.hpp"
#include "policy/deepshare/checkpoints.hpp"
#include "policy/deepshare/cycle.hpp"
#include "policy/deepshare/handle.hpp"
#include "policy/deepshare/layout.hpp"
#include "policy/deepshare/runs.hpp"
#include "policy/deepshare/tally.hpp"

namespace ds::deepshare {

class Slicer : private Handle {
 public:
  explicit Slicer(const Handle& h) : Handle(h), tried_(~std::uint64_t{0}) {}
  void make_room(Cycle& cy);
  void forget(JobId id) { tried_.reset(id); }

 private:
  [[nodiscard]] bool long_running(const ClusterSnapshot& s, JobId id) const;
  [[nodiscard]] std::vector<JobId> candidates(const ClusterSnapshot& s) const;  // step 1
  // Step 2 over the tenants in turn; whether some tenant's fresh job waits.
  bool attempts(Cycle& cy, std::span<const std::size_t> waiting, std::span<const JobId> candidates);
  bool slice_for(Cycle& cy, const JobSpec& j, std::span<const JobId> candidates);  // 3, 4
  [[nodiscard]] std::vector<Victim> victims(const ClusterSnapshot& s, const JobSpec& j, Run run,
                                            std::span<const JobId> candidates) const;
  bool take(Cycle& cy, const JobSpec& j, Run run, ReclaimPlan& plan);  // step 4

  PerJob<std::uint64_t> tried_;  // window epoch of its last failed slice
  std::vector<char> own_;        // per tenant, scratch of attempts() (kept all clear)
};

}  // namespace ds::deepshare
