// The online driver core: everything an online controller does that no engine decides, so
// that an engine adapter (src/slurm; a Kubernetes one next) only translates. It owns:
//   ClusterState  the only model of jobs, GPUs, nodes and tenants (model/cluster_state.hpp)
//   JobBook       engine keys <-> JobIds, intents (assume / hand-over / confirm / forget)
//   Reconciler    the rules that fold an observation into the state (reconciler.hpp)
//   the policy    and the cycle around it: decide(), apply() (model/apply.hpp) with the
//                 engine's Actuator behind apply()'s hooks, compact()
// A controller's loop, per cycle (the Slurm controller's step() is one):
//   1. set_time(now, wall)
//   2. observe_nodes(nodes) when the engine's nodes were read, then fold(observation) when
//      something may have changed (skipped in a quiet cycle: nothing changed, nothing in
//      flight), then the GPUs held outside the policy's jobs (state().set_held_outside)
//   3. decide(), apply(decisions), compact() (not in a quiet cycle)
// Counters (CoreCounters) are the engine-neutral half of a controller's metrics.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver/job_book.hpp"
#include "driver/journal.hpp"
#include "driver/log.hpp"
#include "driver/ports.hpp"
#include "driver/reconciler.hpp"
#include "model/apply.hpp"
#include "model/cluster_state.hpp"
#include "policy/policy.hpp"

namespace ds::driver {

struct CoreCounters {
  std::uint64_t applied = 0;             // actions the engine took (starts handed over, ...)
  std::uint64_t failed = 0;              // actions the engine refused or that failed
  std::uint64_t starts = 0;              // starts decided and applied in the model
  std::uint64_t preemptions = 0;         // preemptions applied
  std::uint64_t preemptions_failed = 0;  // refused by the engine or not carried out in time
  std::uint64_t rollbacks = 0;           // starts the engine did not honour in time
  std::uint64_t deferrals = 0;           // starts the engine could not hold this cycle
  std::uint64_t rejections = 0;          // jobs rejected by the policy
  std::uint64_t completions = 0;         // jobs that ended after running
  std::uint64_t cancellations = 0;       // jobs that ended while pending
  std::uint64_t compacted = 0;           // jobs compacted out of memory
  std::uint64_t invalid_decisions = 0;   // decisions the state refused (skipped, logged)
  std::vector<std::uint64_t> tenant_preemptions;  // the driver's own preemptions, per tenant
};

class Core {
 public:
  // `cluster` and `tenants` outlive the core (tenants may grow: set_tenants).
  Core(const Cluster& cluster, std::span<const Tenant> tenants, Actuator& engine, Log& log,
       Journal& journal, Timing timing);

  [[nodiscard]] ClusterState& state() { return state_; }
  [[nodiscard]] const ClusterState& state() const { return state_; }
  [[nodiscard]] const JobBook& book() const { return book_; }
  [[nodiscard]] JobBook& book() { return book_; }
  [[nodiscard]] Reconciler& reconciler() { return reconciler_; }
  [[nodiscard]] const Reconciler& reconciler() const { return reconciler_; }
  [[nodiscard]] const CoreCounters& counters() const { return counters_; }
  [[nodiscard]] CoreCounters& counters_mut() { return counters_; }
  [[nodiscard]] Policy* policy() const { return policy_.get(); }
  // A policy object for the current state; `fresh_view`: it learns every job at once, as a
  // restarted controller's would (running jobs adopted, candidates arriving).
  void set_policy(std::unique_ptr<Policy> p, bool fresh_view);
  void set_tenants(std::span<const Tenant> tenants) { state_.set_tenants(tenants); }
  void set_timing(Timing t) { reconciler_.set_timing(t); }
  // Names of the tenants for log context (Slurm: the accounts).
  void set_tenant_labels(std::vector<std::string> labels) { tenant_labels_ = std::move(labels); }

  // --- one cycle ---
  void set_time(Time now, std::int64_t wall_ms);
  // `nodes`: every node the engine lists now. A node of the cluster it no longer lists (a
  // Kubernetes Node object deleted, a Slurm node gone from the partition) is unusable until
  // it is listed again: nothing is placed on a node that does not exist.
  void observe_nodes(const std::vector<EngineNode>& nodes);
  void fold(const Observation& obs) { reconciler_.fold(obs, now_, wall_); }
  // The policy's decisions on a snapshot of now (arrivals in submission order); the earliest
  // wake time it asked for is kept (wake_at()).
  Decisions decide();
  // apply() with the engine behind its hooks; refusals logged (decision_invalid) and counted.
  ApplyReport apply(const Decisions& d);
  // Jobs that left and whose leaving the policy has seen give their slots back.
  void compact();
  // After a quota change: a tenant whose non-borrowed runs exceed its guarantee has the most
  // recently started of its preemptible ones counted as borrowed until they fit (the engine
  // records it: Actuator::lent_out); they are then reclaimable like any borrower. Returns
  // how many changed.
  int borrow_beyond_quota();

  [[nodiscard]] Time now() const { return now_; }
  [[nodiscard]] Time wake_at() const { return wake_at_; }
  Time& wake_at_ref() { return wake_at_; }
  [[nodiscard]] Log::Fields who(JobId id) const;
  // Interns a user name (UserId of a JobSpec).
  UserId user_id(const std::string& name);
  [[nodiscard]] const std::string& user_name(UserId u) const;
  // This cycle's view of a job in the engine (nullptr: not listed).
  [[nodiscard]] const EngineJob* observed(JobId id) const { return reconciler_.observed(id); }

 private:
  class Hooks;
  void invalid_decision(DecisionKind kind, const Refused& r);

  Actuator& engine_;
  Log& log_;
  Journal& journal_;
  ClusterState state_;
  JobBook book_;
  CoreCounters counters_;
  Reconciler reconciler_;
  std::unique_ptr<Policy> policy_;
  std::unordered_map<std::string, NodeId> node_ids_;
  std::vector<std::string> tenant_labels_;
  std::vector<std::string> users_;
  std::unordered_map<std::string, std::uint32_t> user_ids_;
  Time now_ = 0;
  std::int64_t wall_ = 0;
  Time wake_at_ = kNever;  // the earliest time a policy asked for a cycle at, still ahead
};

}  // namespace ds::driver
