#include "policy/deepshare/reclaim.hpp"

#include <algorithm>
#include <limits>

namespace ds::deepshare {

double preemption_cost(const JobSpec& job, const JobRuntime& rt, Time now, Time checkpoint_interval,
                       Time restart_overhead) {
  // Progress is approximated by wall time run so far (exact at full speed).
  const Time done = rt.attained + (rt.status == JobStatus::Running ? now - rt.last_start : 0);
  const Time lost = checkpoint_interval > 0 ? done % checkpoint_interval : 0;
  return to_seconds(lost + restart_overhead) * job.gpus;
}

namespace {

// Step 3, on a trial of the map: drop victims that are not needed, newest choice first.
void minimise(FreeMap::Trial& trial, FreeMap& free, std::span<const NodeId> nodes,
              const JobSpec& job, std::vector<const Victim*>& chosen) {
  for (std::size_t i = chosen.size(); i-- > 0;) {
    trial.take(*chosen[i]->placement, chosen[i]->milli);
    if (place_job(free, nodes, job)) {
      chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      trial.give(*chosen[i]->placement, chosen[i]->milli);
    }
  }
}

std::optional<ReclaimPlan> finish(FreeMap::Trial& trial, FreeMap& free,
                                  std::span<const NodeId> nodes, const JobSpec& job,
                                  std::vector<const Victim*> chosen) {
  minimise(trial, free, nodes, job, chosen);
  auto p = place_job(free, nodes, job);
  if (!p) return std::nullopt;
  ReclaimPlan plan;
  plan.placement = std::move(*p);
  for (const Victim* v : chosen) {
    plan.victims.push_back(v->job);
    plan.cost += v->cost;
  }
  return plan;
}

// GPUs of `p` on node n.
int gpus_on(const Placement& p, NodeId n) {
  int g = 0;
  for (const auto& a : p)
    if (a.node == n) g += a.gpus();
  return g;
}

// The candidates touching each of `nodes` (ascending ids), in cost order: O(candidates), not
// O(cluster). Flat (one array of candidates, cut per node): a reclaim is planned in most cycles
// of a full cluster, and a vector per node was a tenth of such a run in malloc (issue #27).
struct ByNode {
  std::vector<NodeId> node;
  std::vector<std::size_t> begin;  // node k's candidates: flat[begin[k], begin[k + 1])
  std::vector<const Victim*> flat;
  [[nodiscard]] std::span<const Victim* const> on(std::size_t k) const {
    return std::span<const Victim* const>(flat).subspan(begin[k], begin[k + 1] - begin[k]);
  }
};

ByNode group_by_node(std::span<const NodeId> nodes, std::span<const Victim> candidates) {
  std::vector<std::pair<NodeId, const Victim*>> touch;
  for (const Victim& v : candidates)
    for (const auto& a : *v.placement)
      if (std::binary_search(nodes.begin(), nodes.end(), a.node)) touch.emplace_back(a.node, &v);
  std::stable_sort(touch.begin(), touch.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  ByNode g;
  g.flat.reserve(touch.size());
  for (const auto& [n, v] : touch) {
    if (g.node.empty() || g.node.back() != n) {
      g.node.push_back(n);
      g.begin.push_back(g.flat.size());
    }
    g.flat.push_back(v);
  }
  g.begin.push_back(g.flat.size());
  return g;
}

// One node on a trial of the map (shares of a GPU are not simple counts): the cheapest
// candidates touching it until the job fits there; kept when cheaper than `best`.
void plan_on_node(FreeMap& free, NodeId n, const JobSpec& job,
                  std::span<const Victim* const> on_node, std::optional<ReclaimPlan>& best) {
  FreeMap::Trial trial(free);
  const NodeId only[] = {n};
  std::vector<const Victim*> chosen;
  double cost = 0;
  bool fits = place_job(free, only, job).has_value();
  for (const Victim* v : on_node) {
    if (fits || (best && cost >= best->cost)) break;
    trial.give(*v->placement, v->milli);
    chosen.push_back(v);
    cost += v->cost;
    fits = place_job(free, only, job).has_value();
  }
  if (!fits || chosen.empty()) return;  // no room, or no reclaim needed here
  auto plan = finish(trial, free, only, job, chosen);
  if (plan && (!best || plan->cost < best->cost)) best = std::move(plan);
}

// Whether whole-GPU counting is exact on node n: no GPU partly used, no fractional victim.
bool whole_gpus_only(const FreeMap& free, NodeId n, std::span<const Victim* const> on_node) {
  const Node& node = free.cluster().nodes[n.index()];
  for (int k = 0; k < node.gpus; ++k) {
    const int f = free.free_milli(node.first_gpu + k);
    if (f != 0 && f != kMilliPerGpu) return false;
  }
  return std::all_of(on_node.begin(), on_node.end(),
                     [](const Victim* v) { return v->milli == kMilliPerGpu; });
}

// Step 2 on node n by counting whole GPUs: the cheapest victims until enough are freed, then
// minimality (drop the newest choices not needed). False when they free too few.
bool count_on_node(const FreeMap& free, NodeId n, const JobSpec& job,
                   std::span<const Victim* const> on_node, double bound,
                   std::vector<const Victim*>& chosen, double& cost) {
  const int need = job.gpus - free.free_gpus(n);
  if (need <= 0) return false;  // no reclaim needed here
  int got = 0;
  cost = 0;
  for (const Victim* v : on_node) {
    if (got >= need || cost >= bound) break;
    chosen.push_back(v);
    got += gpus_on(*v->placement, n);
    cost += v->cost;
  }
  if (got < need) return false;
  for (std::size_t i = chosen.size(); i-- > 0;) {
    const int g = gpus_on(*chosen[i]->placement, n);
    if (got - g >= need) {
      got -= g;
      cost -= chosen[i]->cost;
      chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return true;
}

// The plan for victims `set` on node n: the job takes the lowest GPUs of the node that are
// free or freed (what place_consolidate would choose there), without a trial of the map.
ReclaimPlan counted_plan(const FreeMap& free, NodeId n, const JobSpec& job,
                         std::span<const Victim* const> set) {
  const Node& node = free.cluster().nodes[n.index()];
  std::uint64_t mask = 0;
  for (int k = 0; k < node.gpus; ++k)
    if (free.free_milli(node.first_gpu + k) == kMilliPerGpu) mask |= std::uint64_t{1} << k;
  for (const Victim* v : set)
    for (const auto& a : *v->placement)
      if (a.node == n) mask |= a.gpu_mask;
  NodeAlloc alloc{n, 0};
  for (int taken = 0; taken < job.gpus && mask; ++taken) {
    const std::uint64_t low = mask & (~mask + 1);
    alloc.gpu_mask |= low;
    mask &= mask - 1;
  }
  ReclaimPlan plan;
  plan.placement = {alloc};
  for (const Victim* v : set) {
    plan.victims.push_back(v->job);
    plan.cost += v->cost;
  }
  return plan;
}

// Step 2 for a job that fits on one node: the cheapest victims on each node until the job
// fits there (by counting GPUs where that is exact, else on a trial of the map).
std::optional<ReclaimPlan> plan_one_node(FreeMap& free, const JobSpec& job, const ByNode& g) {
  std::optional<std::size_t> best;
  std::vector<const Victim*> best_set, chosen;  // chosen: one node's set, reused
  double best_cost = 0;
  std::optional<ReclaimPlan> trial_best;
  for (std::size_t k = 0; k < g.node.size(); ++k) {
    const NodeId n = g.node[k];
    if (job.gpu_milli < kMilliPerGpu || !whole_gpus_only(free, n, g.on(k))) {
      plan_on_node(free, n, job, g.on(k), trial_best);
      continue;
    }
    chosen.clear();
    double cost = 0;
    const double bound = best ? best_cost : std::numeric_limits<double>::infinity();
    if (!count_on_node(free, n, job, g.on(k), bound, chosen, cost)) continue;
    if (!best || cost < best_cost) {
      best = k;
      best_set.swap(chosen);
      best_cost = cost;
    }
  }
  std::optional<ReclaimPlan> counted;
  if (best) counted = counted_plan(free, g.node[*best], job, best_set);
  if (!trial_best || (counted && counted->cost <= trial_best->cost)) return counted;
  return trial_best;
}

// Larger jobs: clear the nodes that are cheapest to clear (wholly free ones cost nothing),
// then the cheapest victims anywhere for the rest; then minimality. On a trial of the map.
std::optional<ReclaimPlan> plan_wide(FreeMap& free, std::span<const NodeId> nodes,
                                     const JobSpec& job, std::span<const Victim> candidates,
                                     const ByNode& g, int node_size) {
  std::vector<std::pair<double, std::size_t>> clearable;  // (cost to clear, group)
  for (std::size_t k = 0; k < g.node.size(); ++k) {
    const NodeId n = g.node[k];
    int freeable = free.free_gpus(n);
    double cost = 0;
    for (const Victim* v : g.on(k)) {
      freeable += gpus_on(*v->placement, n);
      cost += v->cost;
    }
    if (freeable >= free.cluster().nodes[n.index()].gpus) clearable.emplace_back(cost, k);
  }
  std::sort(clearable.begin(), clearable.end());  // (wholly free nodes need no victims)
  FreeMap::Trial trial(free);
  std::vector<const Victim*> chosen;
  std::vector<char> given(candidates.size(), 0);
  auto give = [&](const Victim* v) {
    const auto i = static_cast<std::size_t>(v - candidates.data());
    if (given[i]) return;
    given[i] = 1;
    trial.give(*v->placement, v->milli);
    chosen.push_back(v);
  };
  int whole = 0;
  const int needed_whole = (job.gpus + node_size - 1) / node_size;
  for (const auto& [cost, k] : clearable) {
    if (whole >= needed_whole || place_job(free, nodes, job)) break;
    for (const Victim* v : g.on(k)) give(v);
    ++whole;
  }
  for (const Victim& v : candidates) {
    if (place_job(free, nodes, job)) break;
    give(&v);
  }
  if (!place_job(free, nodes, job)) return std::nullopt;
  return finish(trial, free, nodes, job, chosen);
}

}  // namespace

// A bound checked before any plan is made: the most whole GPUs a whole-GPU job could find
// with every candidate gone - on one node (it fits one node) or over `nodes` - is at least
// its GPUs. A GPU is wholly free after the reclaim only if it is now, or some candidate
// holds part of it. In a full cluster with a deep queue most reclaims and slices fail for
// want of GPUs and the plan came to a third of the run (issue #27); the bound is necessary
// for any plan, so every decision stays the same. Fractional jobs: always planned.
bool reclaim_may_fit(const FreeMap& free, std::span<const NodeId> nodes, const JobSpec& job,
                     std::span<const Victim> candidates, int node_size) {
  if (job.gpu_milli < kMilliPerGpu) return true;
  // Per node of `nodes`: the GPUs some candidate holds. Called about twice a cycle: one
  // buffer per thread instead of an allocation per call.
  thread_local std::vector<NodeAlloc> touched;
  touched.clear();
  for (const Victim& v : candidates)
    for (const auto& a : *v.placement)
      if (std::binary_search(nodes.begin(), nodes.end(), a.node)) touched.push_back(a);
  std::sort(touched.begin(), touched.end(),
            [](const NodeAlloc& x, const NodeAlloc& y) { return x.node < y.node; });
  const bool one_node = job.gpus <= node_size;
  int more = 0;  // GPUs the candidates could free beyond the wholly free ones (wide jobs)
  for (std::size_t i = 0; i < touched.size();) {
    const NodeId n = touched[i].node;
    std::uint64_t mask = 0;
    for (; i < touched.size() && touched[i].node == n; ++i) mask |= touched[i].gpu_mask;
    const Node& node = free.cluster().nodes[n.index()];
    for (int k = 0; k < node.gpus; ++k)
      if (free.free_milli(node.first_gpu + k) == kMilliPerGpu) mask |= std::uint64_t{1} << k;
    const int could = __builtin_popcountll(mask);
    if (one_node && could >= job.gpus) return true;
    more += could - free.free_gpus(n);
  }
  return !one_node && free.total_free_gpus(nodes) + more >= job.gpus;
}

std::optional<ReclaimPlan> plan_reclaim(FreeMap& free, std::span<const NodeId> all_nodes,
                                        const JobSpec& job, std::vector<Victim> candidates) {
  // A job of a GPU model or a node mask reclaims only on the nodes it accepts (issues #28, #24).
  std::vector<NodeId> own;
  if (constrained(job)) own = model_candidates(free.cluster(), all_nodes, job);
  const std::span<const NodeId> nodes = constrained(job) ? std::span<const NodeId>(own) : all_nodes;
  if (nodes.empty() || candidates.empty()) return std::nullopt;
  const int node_size = free.cluster().nodes[nodes.front().index()].gpus;
  if (!reclaim_may_fit(free, nodes, job, candidates, node_size)) return std::nullopt;
  std::sort(candidates.begin(), candidates.end(), [](const Victim& a, const Victim& b) {
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.started != b.started) return a.started > b.started;
    return a.job > b.job;
  });
  const ByNode g = group_by_node(nodes, candidates);
  if (job.gpus <= node_size) return plan_one_node(free, job, g);
  return plan_wide(free, nodes, job, candidates, g, node_size);
}

}  // namespace ds::deepshare
