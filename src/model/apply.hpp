// One apply for every driver (DESIGN §2a "one driver core"): the simulator and every online
// controller hand a cycle's decisions to apply(), which applies them to the ClusterState in
// one fixed order:
//   1. rejections       a job that can never run under this policy leaves the queue;
//   2. preemptions      before the starts: a reclaiming start takes its victims' GPUs;
//   3. starts           in the policy's order (a later start may rely on an earlier one);
//   4. waiting reasons  last: a job preempted in this cycle is pending by then and gets the
//                       reason stated for it; a job started in this cycle is not pending.
// Every decision is checked against the state before it is applied; one that would break an
// invariant is refused with a typed Refused (never a throw) and skipped, and the others are
// applied. A refused start of a pending job is told back to the policy (it waits again:
// ClusterState::start_not_applied), a refused preemption of a running job likewise (it runs
// on: preempt_not_applied). The simulator stops on the first refusal (a policy bug); an online
// controller logs and counts each and runs on.
// Hooks add what a driver does around a decision: the simulator's progress, checkpoint loss,
// start latency and speeds; an online controller's engine actions (Slurm: the AdminComment
// record, GRES, release, requeue, cancel) and its deferrals (the engine cannot hold a start as
// decided this cycle: the start is not applied, the policy is told the job waits again).
#pragma once

#include <optional>
#include <vector>

#include "model/cluster_state.hpp"
#include "model/snapshot.hpp"

namespace ds {

enum class DecisionKind : std::uint8_t { Reject, Preempt, Start };
const char* to_string(DecisionKind k);

class ApplyHooks {
 public:
  virtual ~ApplyHooks() = default;

  // 1. A rejection the state accepts, before the job leaves the queue.
  virtual void reject(const RejectJob&) {}

  // 2. What the engine did with a preemption the state accepts (the job still runs in the
  //    state when this is called).
  enum class Preempted : std::uint8_t {
    Requeued,    // the job is requeued (pending again)
    Ended,       // it was ending anyway: requeued, then withdrawn (its end stands)
    NotApplied,  // the engine could not: the job runs on (the policy is told)
  };
  virtual Preempted preempt(JobId) { return Preempted::Requeued; }
  // After the state requeued the job: the GPUs it released.
  virtual void preempted(JobId, const Placement& /*released*/) {}

  // 3. Where the engine can hold a start the state accepts as decided: the decided placement
  //    (the default), another one (the engine moved it: it is checked again), or nullopt: not
  //    this cycle (deferred; the policy is told the job waits again).
  virtual std::optional<Placement> place(const StartJob& d) { return d.placement; }
  // When the started job begins to run (>= now; the time between counts as queueing).
  virtual Time running_at(const StartJob&, Time now) { return now; }
  // After the state started it; `queued_since`: when it last entered the queue.
  virtual void started(const StartJob& /*applied*/, Time /*queued_since*/, Time /*running_at*/) {}

  // A decision the state refused (a policy bug), after the refusal was applied.
  virtual void refused(DecisionKind, const Refused&) {}
};

struct ApplyReport {
  std::size_t rejected = 0, preempted = 0, started = 0;
  std::size_t deferred = 0;       // starts the engine could not hold this cycle
  std::size_t not_preempted = 0;  // preemptions the engine could not carry out
  std::size_t ended_victims = 0;  // victims that were ending anyway
  std::vector<Refused> refused;   // in decision order: rejections, preemptions, starts
  std::vector<DecisionKind> refused_kind;
};

// Applies `d` to `state` at `now` in the order above; the hooks default to none.
ApplyReport apply(ClusterState& state, const Decisions& d, Time now, ApplyHooks& hooks);
ApplyReport apply(ClusterState& state, const Decisions& d, Time now);

}  // namespace ds
