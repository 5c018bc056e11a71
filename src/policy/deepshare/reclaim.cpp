#include "policy/deepshare/reclaim.hpp"

#include <algorithm>

namespace ds::deepshare {

double preemption_cost(const JobSpec& job, const JobRuntime& rt, Time now, Time checkpoint_interval,
                       Time restart_overhead) {
  // Progress is approximated by wall time run so far (exact at full speed).
  const Time done = rt.attained + (rt.status == JobStatus::Running ? now - rt.last_start : 0);
  const Time lost = checkpoint_interval > 0 ? done % checkpoint_interval : 0;
  return to_seconds(lost + restart_overhead) * job.gpus;
}

namespace {

bool touches(const Placement& p, NodeId n) {
  return std::any_of(p.begin(), p.end(), [&](const NodeAlloc& a) { return a.node == n; });
}

// Step 3: drop victims that are not needed, newest choice first.
void minimise(FreeMap& scratch, std::span<const NodeId> nodes, const JobSpec& job,
              std::vector<const Victim*>& chosen) {
  for (std::size_t i = chosen.size(); i-- > 0;) {
    scratch.take(*chosen[i]->placement, chosen[i]->milli);
    if (place_job(scratch, nodes, job)) {
      chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      scratch.give(*chosen[i]->placement, chosen[i]->milli);
    }
  }
}

std::optional<ReclaimPlan> finish(FreeMap& scratch, std::span<const NodeId> nodes,
                                  const JobSpec& job, std::vector<const Victim*> chosen) {
  minimise(scratch, nodes, job, chosen);
  auto p = place_job(scratch, nodes, job);
  if (!p) return std::nullopt;
  ReclaimPlan plan;
  plan.placement = std::move(*p);
  for (const Victim* v : chosen) {
    plan.victims.push_back(v->job);
    plan.cost += v->cost;
  }
  return plan;
}

}  // namespace

std::optional<ReclaimPlan> plan_reclaim(const FreeMap& free, std::span<const NodeId> nodes,
                                        const JobSpec& job, std::vector<Victim> candidates) {
  std::sort(candidates.begin(), candidates.end(), [](const Victim& a, const Victim& b) {
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.started != b.started) return a.started > b.started;
    return a.job > b.job;
  });
  const int node_size = nodes.empty() ? 0 : free.cluster().nodes[nodes.front().index()].gpus;
  if (job.gpus <= node_size) {
    std::optional<ReclaimPlan> best;
    for (NodeId n : nodes) {
      FreeMap scratch = free;
      const NodeId only[] = {n};
      std::vector<const Victim*> chosen;
      double cost = 0;
      bool fits = place_job(scratch, only, job).has_value();
      for (const Victim& v : candidates) {
        if (fits || (best && cost >= best->cost)) break;
        if (!touches(*v.placement, n)) continue;
        scratch.give(*v.placement, v.milli);
        chosen.push_back(&v);
        cost += v.cost;
        fits = place_job(scratch, only, job).has_value();
      }
      if (!fits || chosen.empty()) continue;  // no room, or no reclaim needed here
      auto plan = finish(scratch, only, job, chosen);
      if (plan && (!best || plan->cost < best->cost)) best = std::move(plan);
    }
    return best;
  }
  FreeMap scratch = free;
  std::vector<const Victim*> chosen;
  for (const Victim& v : candidates) {
    scratch.give(*v.placement, v.milli);
    chosen.push_back(&v);
    if (place_job(scratch, nodes, job)) return finish(scratch, nodes, job, chosen);
  }
  return std::nullopt;
}

}  // namespace ds::deepshare
