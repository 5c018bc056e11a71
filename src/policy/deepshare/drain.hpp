// DeepShare's drains: checkpoint-aware draining of nodes for a wide job (part of time
// slicing: there are none with time_slicing=off).
//
// Assumptions: a job that needs whole nodes (at least a node's GPUs) almost never finds
// them free on a busy cluster, since smaller jobs take every GPU that frees up; preempting
// all the jobs on its nodes at once would lose up to a checkpoint interval of work on each.
// A job preempted right after its checkpoint loses almost nothing.
//
// Algorithm (one drain per tenant at a time):
//  1. Start (step "drain starts", before time slicing): the tenant's longest-waiting fresh
//     pending job of at least a node's GPUs that has waited drain_after picks the nodes at
//     home that are cheapest to drain: nodes whose every job may be preempted for it (its
//     tenant's own, borrowed, or other tenants' jobs away on its nodes), fewest busy GPUs
//     first; only when its tenant's quota (less the quota owed to queued entitled jobs) fits
//     it once its own jobs there have left.
//  2. Every cycle (step "drains", after the entitled step, whose jobs may still use the
//     nodes' free GPUs): each job on the nodes is preempted once it would lose at most
//     slice_lost (right after a checkpoint); with pair_victims, a sharing pair goes whole once
//     its host is at its checkpoint and its joiner would lose at most pair_lost of its
//     interval, else the joiner goes alone at its own checkpoint (the host then alone at its
//     own); no job joins a host on the nodes meanwhile (Colocation asks on_drained_nodes). A
//     wake-up is asked for at the next checkpoint. When the job fits on the nodes and its
//     quota it starts there, guaranteed. Until then the nodes' free GPUs are held
//     (Cycle::held): no other job starts on them.
//  3. The drain ends when its job has started, or left the queue, or after two intervals
//     (a job on the nodes that may not be preempted, e.g. one started there shared).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "policy/deepshare/book.hpp"
#include "policy/deepshare/checkpoints.hpp"
#include "policy/deepshare/cycle.hpp"
#include "policy/deepshare/handle.hpp"
#include "policy/deepshare/layout.hpp"
#include "policy/deepshare/runs.hpp"
#include "policy/deepshare/tally.hpp"

namespace ds::deepshare {

class Drains : private Handle {
 public:
  Drains(const Handle& h, std::size_t nodes);
  void run(Cycle& cy);    // step 2 (and 3) for every drain
  void start(Cycle& cy);  // step 1 for every tenant with other jobs waiting
  [[nodiscard]] bool any() const { return drained_count_ > 0; }
  // Whether `p` touches a node being drained.
  [[nodiscard]] bool on_drained_nodes(const Placement& p) const;

 private:
  struct Drain {
    JobId job;
    std::vector<NodeId> nodes;
    Time since = 0;
  };
  // May `v` be preempted to make room for tenant t's job on t's nodes?
  [[nodiscard]] bool drainable(const ClusterSnapshot& s, JobId v, TenantId t) const;
  void take_cheap(Cycle& cy, const Drain& d, TenantId t);
  void hold(Cycle& cy, const Drain& d);
  void start_for(Cycle& cy, std::size_t t);
  [[nodiscard]] const JobSpec* drain_job(const ClusterSnapshot& s, std::size_t t) const;
  [[nodiscard]] std::optional<Drain> pick_nodes(const ClusterSnapshot& s, const JobSpec& j) const;
  void begin(std::size_t t, Drain d);
  void end(std::size_t t);

  std::vector<std::optional<Drain>> drain_;  // per tenant
  std::vector<std::uint64_t> tried_;         // per tenant: window epoch of its last failed start
  std::set<std::size_t> draining_;           // tenants with a drain
  std::vector<int> drained_;                 // per node: drains on it
  int drained_count_ = 0;                    // nodes with a drain on them
};

}  // namespace ds::deepshare
