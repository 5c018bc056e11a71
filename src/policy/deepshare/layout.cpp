#include "policy/deepshare/layout.hpp"

#include <algorithm>
#include <map>

namespace ds::deepshare {

Layout::Layout(const PolicyContext& ctx) : tenants_(ctx.tenants.size()) {
  home_.resize(tenants_);
  std::vector<bool> owns(tenants_, false);
  for (const auto& n : ctx.cluster.nodes)
    if (n.owner.valid() && n.owner.index() < owns.size()) owns[n.owner.index()] = true;
  for (const auto& n : ctx.cluster.nodes) {
    const bool pool = !n.owner.valid() || n.owner.index() >= owns.size();
    for (std::size_t t = 0; t < home_.size(); ++t)
      if (!owns[t] || pool || n.owner.index() == t) home_[t].push_back(n.id);
  }
  for (const auto& n : ctx.cluster.nodes) {
    nodes_.push_back(n.id);
    node_size_ = std::max(node_size_, n.gpus);
  }
  total_gpus_ = ctx.cluster.total_gpus();
  int quota_sum = 0;
  for (const auto& t : ctx.tenants) quota_sum += t.quota_gpus;
  unowned_ = std::max(0, ctx.cluster.total_gpus() - quota_sum) * kMilliPerGpu;
}

bool Layout::sync(const ClusterSnapshot& s) {
  free_.sync(s);
  const bool grew = free_.growths() != growths_seen_;
  growths_seen_ = free_.growths();
  if (!sets_ready_) register_sets();
  return grew;
}

void Layout::register_sets() {
  sets_ready_ = true;
  all_set_ = free_.add_set(nodes_);
  std::map<std::vector<NodeId>, FreeMap::SetId> known;  // tenants with equal homes share one
  home_set_.resize(home_.size());
  for (std::size_t t = 0; t < home_.size(); ++t) {
    if (home_[t].size() == nodes_.size()) {
      home_set_[t] = all_set_;
      continue;
    }
    auto [it, fresh] = known.emplace(home_[t], 0);
    if (fresh) it->second = free_.add_set(home_[t]);
    home_set_[t] = it->second;
  }
}

std::optional<Placement> Layout::place_guaranteed(const FreeMap& free, const JobSpec& j) const {
  const FreeMap::SetId home = home_set_[j.tenant.index()];
  if (auto p = place_job(free, home, j)) return p;
  if (home == all_set_) return std::nullopt;
  return place_job(free, all_set_, j);  // away
}

bool Layout::is_away(const ClusterSnapshot& s, const JobSpec& j, const Placement& p) const {
  for (const auto& a : p) {
    const TenantId owner = s.cluster->nodes[a.node.index()].owner;
    if (owner.valid() && owner.index() < tenants_ && owner != j.tenant) return true;
  }
  return false;
}

std::optional<ReclaimPlan> Layout::plan_home(FreeMap& free, const Book& book, const JobSpec& j,
                                             std::vector<Victim> candidates) const {
  const auto& home = home_[j.tenant.index()];
  if (home.size() == nodes_.size()) return plan_reclaim(free, home, j, std::move(candidates));
  if (auto plan = plan_reclaim(free, home, j, candidates)) return plan;
  std::erase_if(candidates, [&](const Victim& v) {
    const JobState& vs = book.job(v.job);
    return vs.run != Run::Borrowed || (vs.partner.valid() && book.job(vs.partner).quota_counted);
  });
  return plan_reclaim(free, nodes_, j, std::move(candidates));
}

}  // namespace ds::deepshare
