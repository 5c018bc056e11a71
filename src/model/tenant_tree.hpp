// Tenant trees: tenants nested as Slurm's account hierarchy nests accounts (a department's
// account with its teams' sub-accounts), with the two rules every policy that knows quotas
// follows (docs/formats.md "Tenant trees", docs/slurm.md §4).
//
// 1. Guarantees (resolve_tenant_tree): a parent's quota bounds its subtree. Top-down, each
//    tenant of a tree gets an effective subtree guarantee E: a top-level tenant its configured
//    quota (without one: what its children ask); its children with a quota of their own
//    ("fixed") get theirs, scaled down in proportion (largest remainders) when they add up to
//    more than E (reported); children without one ("open") share the rest: first what their
//    own subtrees ask, then the remainder by weight (Slurm's Fairshare). The tenant's own
//    guarantee (`quota_gpus`, what its own jobs are entitled to) is what its children leave
//    over, and 0 while it has open children (they take the remainder). Guarantees that add up
//    to more than the cluster are reported, not cut (as for flat tenants). Flat tenants (no
//    parent, no children) keep their quota untouched.
// 2. Reclaim (TenantTree::may_reclaim): Kueue's hierarchical reclaim. A job that needs its
//    guarantee back may preempt a borrower of tenant v only when v's borrowing crosses into the
//    claimant's part of the tree: every ancestor of v strictly below the lowest common
//    ancestor of the two uses more than its subtree's guarantee. A borrower whose group stays
//    within its group's guarantee borrows from its own siblings, not from the claimant.
// 3. Lending (TenantTree::inside_rank): idle quota goes inside the subtree first: a borrower
//    whose nearest ancestor with idle guarantee is deeper comes first (siblings before
//    cousins before strangers).
// Assumptions: at most limits::kMaxTenants tenants; quotas in whole GPUs; usage in milli-GPUs.
// Everything is O(tenants x depth).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/cluster.hpp"
#include "model/tenant.hpp"

namespace ds {

// Checks the parents (in range, no cycles) and resolves the tree's guarantees into each
// tenant's `quota_gpus` (rule 1). Returns the problems found, one sentence each (guarantees
// that do not fit their parent or the cluster), empty when the tree fits. Throws InputError
// for a parent out of range or a cycle. `cluster_gpus` < 0: no cluster check.
std::vector<std::string> resolve_tenant_tree(std::vector<Tenant>& tenants, int cluster_gpus);

// Only the checks and the report of resolve_tenant_tree (tenants unchanged).
std::vector<std::string> check_tenant_tree(std::vector<Tenant> tenants, int cluster_gpus);

class TenantTree {
 public:
  TenantTree() = default;
  // `tenants` resolved (their parents valid and acyclic).
  explicit TenantTree(std::span<const Tenant> tenants);

  // No tenant has a parent: every rule here is the flat one.
  [[nodiscard]] bool flat() const { return flat_; }
  [[nodiscard]] bool in_tree(std::size_t t) const { return in_tree_[t] != 0; }
  [[nodiscard]] int depth(std::size_t t) const { return depth_[t]; }
  // The tenant and its descendants' own guarantees (whole GPUs).
  [[nodiscard]] int guarantee(std::size_t t) const { return guarantee_[t]; }
  // Per tenant: its own usage plus its descendants' (same unit as `own`).
  void subtree_sums(std::span<const std::int64_t> own, std::vector<std::int64_t>& out) const;
  // Rule 2 (subtree usage from subtree_sums, in units of 1/`unit` GPU: milli-GPUs by
  // default). Always true in a flat tree.
  [[nodiscard]] bool may_reclaim(std::size_t claimant, std::size_t victim,
                                 std::span<const std::int64_t> subtree_use,
                                 int unit = kMilliPerGpu) const;
  // Rule 3: 1 + the depth of t's deepest strict ancestor whose subtree uses less than its
  // guarantee; 0 when none (and for every tenant of a flat tree). Higher goes first.
  [[nodiscard]] int inside_rank(std::size_t t, std::span<const std::int64_t> subtree_milli) const;

 private:
  bool flat_ = true;
  std::vector<int> parent_;  // -1: top level
  std::vector<int> depth_;
  std::vector<int> guarantee_;
  std::vector<char> in_tree_;
  std::vector<int> order_;  // tenants, deepest first (children before parents)
};

}  // namespace ds
