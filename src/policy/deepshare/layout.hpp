// Where DeepShare's jobs may run: each tenant's home (the nodes it owns and the unowned pool;
// anywhere for a tenant that owns none), the free map kept across cycles with an indexed node
// set per distinct home and one of every node (FreeMap::sync copies only the nodes that
// changed; placements in O(log n)), and the reclaim plans that try home first.
//
// Guaranteed work goes home first; elsewhere it runs "away" and the nodes' owner may reclaim
// them as from borrowers. Without this, guaranteed jobs spilled onto other tenants' nodes
// fragmented them so that entitled jobs found no node to reclaim.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "policy/deepshare/book.hpp"
#include "policy/deepshare/reclaim.hpp"
#include "policy/placement.hpp"
#include "policy/policy.hpp"

namespace ds::deepshare {

class Layout {
 public:
  explicit Layout(const PolicyContext& ctx);
  // The free map brought to the snapshot; true when the snapshot shows GPUs freed that no job
  // delta explains (FreeMap::growths).
  bool sync(const ClusterSnapshot& s);
  FreeMap& free() { return free_; }

  // At home, else anywhere (away).
  [[nodiscard]] std::optional<Placement> place_guaranteed(const FreeMap& free,
                                                          const JobSpec& j) const;
  [[nodiscard]] bool is_away(const ClusterSnapshot& s, const JobSpec& j, const Placement& p) const;
  // Reclaim for a guaranteed start: at home first (borrowers, others' jobs away there, and
  // whatever own jobs the caller offers); else anywhere, with borrowers only (the job then
  // runs away).
  std::optional<ReclaimPlan> plan_home(FreeMap& free, const Book& book, const JobSpec& j,
                                       std::vector<Victim> candidates) const;

  [[nodiscard]] std::span<const NodeId> home(std::size_t t) const { return home_[t]; }
  [[nodiscard]] std::span<const NodeId> nodes() const { return nodes_; }
  [[nodiscard]] FreeMap::SetId all_set() const { return all_set_; }
  [[nodiscard]] int node_size() const { return node_size_; }  // GPUs of the largest node
  [[nodiscard]] int total_gpus() const { return total_gpus_; }
  [[nodiscard]] int unowned() const { return unowned_; }  // milli-GPUs beyond every quota

 private:
  void register_sets();

  std::size_t tenants_;
  std::vector<NodeId> nodes_;
  std::vector<std::vector<NodeId>> home_;  // per tenant
  FreeMap free_;
  std::vector<FreeMap::SetId> home_set_;  // per tenant
  FreeMap::SetId all_set_ = 0;
  bool sets_ready_ = false;
  std::uint64_t growths_seen_ = 0;
  int node_size_ = 0;
  int total_gpus_ = 0;
  int unowned_ = 0;
};

}  // namespace ds::deepshare
