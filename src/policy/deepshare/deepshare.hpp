// The DeepShare policy: one per-tenant assurance signal drives quota lending,
// reclaim by cost-aware preemption, run-time-aware ordering and MPS colocation.
//
// Assumptions: quotas are GPU counts over a pooled cluster (a tenant's guaranteed
// jobs may run on any node); a job runs guaranteed when its tenant's guaranteed use
// plus the job fits the quota, otherwise borrowed (preemptible). A guaranteed job is
// preempted only by its own tenant (time slicing, drains, an entitled job at its deadline)
// or, when it runs away from home, by the nodes' owner. The policy sees only observable
// state: run times are predicted online from jobs that have finished, sharing slowdowns
// from its interference model.
//
// Parts (each owns its state; policy_impl.hpp holds them):
//   Book         jobs and tenant queues, GPU accounting, progress (book.hpp)
//   Layout       homes, the kept free map and its node sets (layout.hpp)
//   Prediction   run-time predictor and its accuracy (prediction.hpp)
//   Checkpoints  running jobs by next checkpoint, the window of cheap victims
//   Runs         start / stop / preempt / adopt, victims (runs.hpp)
//   Assurance    A_t and the demand forecast (assurance.hpp)
//   Lender       lendable idle quota per tenant (lending.hpp)
//   Admission    the placement steps over the queues (admission.hpp)
//   Reclaimer    wait or preempt for a job within its quota      [reclaim]
//   Colocation   MPS sharing, probation, pair splits + Partners  [sharing]
//   Drains       nodes drained at checkpoints for wide jobs       [time_slicing]
//   Slicer       long-running work gives way at checkpoints      [time_slicing]
//   Twins        jobs alike to the predictor wait in submit order [twins] (twins.hpp)
// A part in [brackets] exists only while that switch is on.
//
// One cycle (decide() in deepshare.cpp; what a step computes for a later one travels in
// the Cycle value, cycle.hpp):
//   1. observe       observed speeds of pairs formed last cycle (Colocation)
//   2. ingest        withdrawn, adopted, finished (learn), requeued, arrived (predict,
//                    entitlement at submit: ClusterState's rule)
//   3. checkpoints   the window of cheap victims
//   4. assurance     A_t of the tenants whose inputs changed             -> cy.assurance
//   5. entitled      entitled jobs in submit order, tenants by ascending A_t: free GPUs,
//                    else share, else wait for borrowers or reclaim (Admission)
//   6. split pairs   joiners of pairs observed beyond a bound (Colocation)
//   7. drains        take jobs on drained nodes at checkpoints; hold free GPUs -> cy.held
//   8. quota         other jobs within quota not owed to entitled jobs, aging first
//   9. lending       lendable idle quota (reserves grow as A_t falls)     -> cy.lent
//  10. borrowed      pending jobs on lent capacity [borrowing]            -> cy.borrow_room
//  11. drain starts  wide fresh jobs that waited drain_after
//  12. time slicing  fresh jobs take long-running work's GPUs at its checkpoints
//  13. freed         GPUs freed by steps 6-12 (and held ones) to entitled jobs first
//  14. share         colocate pending jobs within assurance-scaled budgets
//  15. emit          decisions, plus one wake-up (cy.wake: deadlines, aging, checkpoints)
#pragma once

#include <memory>

#include "policy/policy.hpp"

namespace ds {

std::unique_ptr<Policy> make_deepshare(const PolicyContext& ctx);
const char* deepshare_options();

}  // namespace ds
