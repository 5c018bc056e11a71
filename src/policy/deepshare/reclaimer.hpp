// DeepShare's reclaim: when a lender's job that fits its quota finds no free GPUs, wait for
// borrowers predicted to end before its deadline, or preempt the cheapest set of victims that
// lets it place (plan_reclaim, reclaim.hpp). Absent with reclaim=off (jobs then wait).
//
// Algorithm:
//  1. Deadline: an entitled job's submit time (another job's queueing time) + the tenant's
//     SLO - deadline_margin. Urgent: due, or (assurance coupling on) the tenant is at risk.
//  2. Not urgent, with prediction and reclaim_wait: when borrowers predicted to end by the
//     deadline, with the free GPUs, would fit the job, it waits (a wake-up at the first end).
//  3. Victims: borrowers, and other tenants' guaranteed jobs away on the tenant's nodes, that
//     have run min_runtime (until due). Until an entitled job's deadline (always for other
//     jobs, which have no SLO) only victims at their checkpoint (the window of cheap victims;
//     a pair's joiner too), else any. At its deadline an entitled job may also take its own
//     tenant's guaranteed jobs when nothing else makes room (with time slicing).
//  4. The cheapest plan, home first (Layout::plan_home): its victims are preempted and the
//     job starts guaranteed; the tenant lends nothing for lend_backoff. No plan: the job
//     waits for the next checkpoint or its deadline, or (due) finds no room.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "policy/deepshare/book.hpp"
#include "policy/deepshare/checkpoints.hpp"
#include "policy/deepshare/cycle.hpp"
#include "policy/deepshare/handle.hpp"
#include "policy/deepshare/layout.hpp"
#include "policy/deepshare/lending.hpp"
#include "policy/deepshare/runs.hpp"
#include "policy/deepshare/tally.hpp"

namespace ds::deepshare {

enum class Outcome { Started, Waiting, NoRoom };

class Reclaimer : private Handle {
 public:
  Reclaimer(const Handle& h, Lender& lender) : Handle(h), lender_(lender) {}
  Outcome reclaim_or_wait(Cycle& cy, const JobSpec& j);

 private:
  struct Need {
    Time deadline = 0;
    bool due = false, cheap_only = false;
  };
  bool wait_for_ends(Cycle& cy, const JobSpec& j, Time deadline);              // step 2
  std::vector<Victim> victims(Cycle& cy, const JobSpec& j, const Need& need);  // step 3
  void take(Cycle& cy, const JobSpec& j, ReclaimPlan& plan);                   // step 4
  // The predicted ends of the borrowed running jobs (now + remaining()) with their GPUs,
  // computed once per cycle: a cycle may ask for them once per job that waits for reclaim,
  // and the snapshot, hence every end, is fixed during the cycle. A borrower added or removed
  // in the cycle (Book::borrowed_version) computes them again.
  const std::vector<std::pair<Time, int>>& borrowed_ends(const Cycle& cy);

  Lender& lender_;
  std::vector<std::pair<Time, int>> ends_;
  std::uint64_t ends_cycle_ = 0, ends_version_ = 0;  // when ends_ was computed (0: never)
};

}  // namespace ds::deepshare
