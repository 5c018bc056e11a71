// The Kubernetes adapter's observation side (adapter.hpp): pods -> jobs, nodes, held GPUs.
#include "k8s/adapter.hpp"

#include <algorithm>
#include <bit>

#include "core/error.hpp"

namespace ds::k8s {

K8sAdapter::K8sAdapter(Client& client, driver::Log& log, driver::Journal& journal,
                       driver::Fence& fence, std::map<std::string, TenantId> ns_tenants,
                       std::string scheduler)
    : client_(client),
      log_(log),
      journal_(journal),
      fence_(fence),
      ns_tenants_(std::move(ns_tenants)),
      scheduler_(std::move(scheduler)) {}

void K8sAdapter::load_nodes(const std::vector<json>& nodes, std::int64_t gpu_memory_mib) {
  std::vector<NodeView> gpu;
  for (const auto& n : nodes)
    if (auto v = node_view(n); v && v->gpus > 0) gpu.push_back(*v);
  std::sort(gpu.begin(), gpu.end(), [](const auto& a, const auto& b) {
    return a.name.size() != b.name.size() ? a.name.size() < b.name.size() : a.name < b.name;
  });
  if (gpu.empty()) throw InputError("no node with allocatable nvidia.com/gpu: nothing to schedule");
  for (const auto& v : gpu) {
    Node n;
    n.id = NodeId(static_cast<std::uint32_t>(cluster_.nodes.size()));
    n.name = v.name;
    n.gpus = std::min(v.gpus, kMaxGpusPerNode);
    n.first_gpu = cluster_.total_gpus();
    n.gpu_memory_mib = gpu_memory_mib;
    node_index_[n.name] = cluster_.nodes.size();
    cluster_.nodes.push_back(n);
  }
  set_nodes(nodes);
}

void K8sAdapter::set_nodes(const std::vector<json>& nodes) {
  node_views_.clear();
  node_alloc_.clear();
  for (const auto& o : nodes)
    if (auto v = node_view(o)) {
      node_alloc_[v->name] = v->gpus;
      node_views_.push_back(std::move(*v));
    }
}

std::vector<std::string> K8sAdapter::new_gpu_nodes(const std::vector<json>& nodes) const {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    if (auto v = node_view(n); v && v->gpus > 0 && !node_index_.count(v->name))
      out.push_back(v->name);
  return out;
}

void K8sAdapter::inherit(const K8sAdapter& old) {
  assumed_ = old.assumed_;
  refused_ = old.refused_;
  rejected_ = old.rejected_;
  untenanted_ = old.untenanted_;
  counters_ = old.counters_;
}

void K8sAdapter::set_cycle(const std::vector<std::shared_ptr<const json>>& pods,
                           const std::vector<json>& nodes, Time now, std::int64_t wall_ms,
                           const driver::DriverClock& clock) {
  now_ = now;
  wall_ = wall_ms;
  clock_ = clock;
  set_nodes(nodes);
  pods_.clear();
  pod_index_.clear();
  api_used_.clear();
  // Each pod object is read once: an unchanged one (the same pointer) keeps last cycle's view.
  std::unordered_map<std::string, CachedPod> seen;
  seen.reserve(pods.size());
  for (const auto& o : pods) {
    const auto meta = o->find("metadata");
    if (meta == o->end() || !meta->is_object()) continue;
    const auto uid = meta->find("uid");
    if (uid == meta->end() || !uid->is_string()) continue;
    const std::string& key = uid->get_ref<const std::string&>();
    if (auto c = pod_cache_.find(key); c != pod_cache_.end() && c->second.object == o) {
      pods_.push_back(c->second.view);
      seen.emplace(key, std::move(c->second));
    } else if (auto p = pod_view(*o)) {
      pods_.push_back(*p);
      seen.emplace(key, CachedPod{o, std::move(*p)});
    }
  }
  pod_cache_.swap(seen);
  // Ordered by key (the Observation's contract); creation order breaks no tie here.
  std::sort(pods_.begin(), pods_.end(), [](const auto& a, const auto& b) { return a.uid < b.uid; });
  for (std::size_t i = 0; i < pods_.size(); ++i) {
    PodView& p = pods_[i];
    pod_index_[p.uid] = i;
    auto a = assumed_.find(p.uid);
    if (a != assumed_.end()) {
      // The API accepted our binding; until the cache shows it, the pod is bound as we bound it.
      if (p.bound() || p.ended() || wall_ - a->second.wall > 60'000)
        assumed_.erase(a);
      else
        p.node = a->second.node;
    }
    if (p.holds_gpus()) api_used_[p.node] += p.gpus;
  }
  for (auto it = assumed_.begin(); it != assumed_.end();)
    it = pod_index_.count(it->first) ? std::next(it) : assumed_.erase(it);  // gone
}

const PodView* K8sAdapter::pod(const std::string& uid) const {
  auto it = pod_index_.find(uid);
  return it == pod_index_.end() ? nullptr : &pods_[it->second];
}

int K8sAdapter::api_free(const std::string& node) const {
  auto n = node_index_.find(node);
  if (n == node_index_.end()) return 0;
  int alloc = cluster_.nodes[n->second].gpus;
  // allocatable may shrink (a device plugin's report)
  if (auto a = node_alloc_.find(node); a != node_alloc_.end()) alloc = std::min(alloc, a->second);
  auto u = api_used_.find(node);
  return alloc - (u == api_used_.end() ? 0 : u->second);
}

// A pod seen the first time: admitted, or told once why not (never admitted then).
bool K8sAdapter::admit(const PodView& p) {
  if (refused_.count(p.uid)) return false;
  if (p.ended() || p.terminating) return false;  // nothing left to schedule
  std::string why;
  int largest = 0;
  for (const auto& n : cluster_.nodes) largest = std::max(largest, n.gpus);
  if (!ns_tenants_.count(p.ns))
    why = "namespace " + p.ns + " has no DeepShare quota (it is not a tenant)";
  else if (p.gpus <= 0)
    why = "the pod asks for no nvidia.com/gpu: DeepShare schedules GPU pods only";
  else if (p.gpus > largest)
    why = "the pod asks for " + std::to_string(p.gpus) +
          " nvidia.com/gpu, more than any node has (" + std::to_string(largest) + ")";
  if (why.empty()) return true;
  refused_.insert(p.uid);
  if (!ns_tenants_.count(p.ns)) untenanted_[p.uid] = p.ns;
  ++counters_.refused;
  log_.warn("refuse", {{"pod", p.ref()}, {"reason", why}});
  journal_.line("refuse " + p.ref() + " " + why);
  if (!p.bound()) tell(p, why, "FailedScheduling");
  return false;
}

void K8sAdapter::set_tenants(std::map<std::string, TenantId> ns_tenants) {
  ns_tenants_ = std::move(ns_tenants);
  for (auto it = untenanted_.begin(); it != untenanted_.end();)
    if (ns_tenants_.count(it->second) || !pod_index_.count(it->first)) {
      refused_.erase(it->first);  // seen again as new: admitted now (or gone)
      it = untenanted_.erase(it);
    } else {
      ++it;
    }
}

Placement K8sAdapter::placement_of(const PodView& p) {
  auto n = node_index_.find(p.node);
  if (n == node_index_.end()) return {};
  const Node& node = cluster_.nodes[n->second];
  std::uint64_t mask = 0;
  if (p.decision_node == p.node && static_cast<int>(p.decision_gpus.size()) == p.gpus) {
    for (int g : p.decision_gpus)
      if (g < node.gpus) mask |= std::uint64_t{1} << g;
  } else if (auto id = core_ ? core_->book().find(p.uid) : std::nullopt;
             id && !state().runtime(*id).placement.empty() &&
             state().runtime(*id).placement[0].node == node.id) {
    mask = state().runtime(*id).placement[0].gpu_mask;
  }
  if (std::popcount(mask) != p.gpus) {
    // Bound by someone else (or a stale annotation): GPUs of the node nobody listed holds.
    mask = 0;
    for (int g = 0; g < node.gpus && std::popcount(mask) < p.gpus; ++g)
      if (!(taken_[p.node] >> g & 1)) mask |= std::uint64_t{1} << g;
  }
  taken_[p.node] |= mask;
  return {NodeAlloc{node.id, mask}};
}

driver::EngineJob K8sAdapter::engine_job(const PodView& p) {
  driver::EngineJob e;
  e.key = p.uid;
  e.ref = p.ref();
  e.state = p.terminating ? "terminating" : (p.phase.empty() ? "Pending" : p.phase);
  if (p.ended())
    e.phase = driver::Phase::Ended;
  else if (p.terminating)
    e.phase = p.bound() ? driver::Phase::Ending : driver::Phase::Ended;
  else if (p.bound())
    e.phase = driver::Phase::Running;
  if (p.bound() && !p.ended()) e.placement = placement_of(p);
  if (e.phase == driver::Phase::Running)
    e.run_start = p.started_s >= 0 ? clock_.at(p.started_s * 1000) : now_;
  if (p.bound() && p.decision_node == p.node && !e.placement.empty())
    e.decision = driver::EngineDecision{p.decision_borrowed, p.decision_shared, e.placement,
                                        p.decision_ms >= 0 ? Time{p.decision_ms} : kNever};
  e.user = p.ns;
  auto t = ns_tenants_.find(p.ns);
  e.spec.name = p.ref();
  e.spec.tenant = t == ns_tenants_.end() ? TenantId() : t->second;
  e.spec.gpus = std::max(1, p.gpus);
  // A pod DeepShare placed on borrowed GPUs stays preemptible whatever its owner references
  // say now: a user may strip them (or make its Job release it by a label change) to escape
  // the reclaim once a restarted scheduler adopts it. Only a controlled pod is ever placed on
  // borrowed GPUs, and the decision annotation is DeepShare's alone (the admission policy).
  e.spec.preemptible =
      p.controlled || (p.bound() && p.decision_node == p.node && p.decision_borrowed);
  e.spec.colocatable = false;  // whole GPUs only (no MPS yet)
  // The API keeps whole seconds; the first sighting refines it within that second.
  const std::int64_t created_ms = p.created_s >= 0 ? p.created_s * 1000 : wall_;
  e.spec.submit = clock_.at(std::clamp(wall_, created_ms, created_ms + 999));
  return e;
}

std::optional<driver::Observation> K8sAdapter::observe() {
  driver::Observation o;
  taken_.clear();
  // Pods with a recorded placement first, so that a pod bound by someone else gets GPUs
  // nobody else is recorded on.
  std::vector<const PodView*> mine;
  for (const auto& p : pods_)
    if (p.scheduler == scheduler_ && !rejected_.count(p.uid) && !refused_.count(p.uid))
      mine.push_back(&p);
  std::stable_partition(mine.begin(), mine.end(),
                        [](const PodView* p) { return p->decision_node == p->node; });
  for (const PodView* p : mine) {
    // A decision of a newer leader: another scheduler acts on this cluster (we lost the Lease
    // without noticing, or run without one): nothing more from this one.
    if (p->bound() && p->decision_epoch > fence_.epoch())
      fence_.depose("pod " + p->ref() + " carries a decision of epoch " +
                    std::to_string(p->decision_epoch) +
                    " (ours: " + std::to_string(fence_.epoch()) + ")");
    const bool known = core_ && core_->book().find(p->uid).has_value();
    if (!known && !admit(*p)) continue;
    o.jobs.push_back(engine_job(*p));
  }
  std::sort(o.jobs.begin(), o.jobs.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  return o;
}

std::optional<std::vector<driver::EngineNode>> K8sAdapter::nodes() {
  std::vector<driver::EngineNode> out;
  for (const NodeView& v : node_views_) {
    if (!node_index_.count(v.name)) continue;
    out.push_back(
        {v.name, v.usable(), false, v.cordoned ? "cordoned" : (v.ready ? "ready" : "not-ready")});
  }
  return out;
}

// GPUs the API shows held by pods the model does not run: the node's count, on GPUs the
// model leaves free (Kubernetes does not say which device a pod got).
void K8sAdapter::sync_held() {
  std::unordered_map<std::string, int> outside;
  for (const auto& p : pods_) {
    if (!p.holds_gpus()) continue;
    auto id = core_->book().find(p.uid);
    if (p.scheduler == scheduler_ && id && state().runtime(*id).status == JobStatus::Running)
      continue;
    outside[p.node] += p.gpus;
  }
  std::vector<std::size_t> held;
  for (const auto& [name, count] : outside) {
    auto n = node_index_.find(name);
    if (n == node_index_.end()) continue;
    const Node& node = cluster_.nodes[n->second];
    int left = count;
    for (int g = node.gpus - 1; g >= 0 && left > 0; --g) {
      const auto flat = static_cast<std::size_t>(node.first_gpu + g);
      if (!state().jobs_on_gpu(flat).empty()) continue;
      held.push_back(flat);
      --left;
    }
  }
  state().set_held_outside(std::move(held));
}

// --- the book -------------------------------------------------------------------------

void K8sAdapter::admitted(JobId id, const driver::EngineJob& e) {
  if (jobs_.size() <= id.index()) jobs_.resize(std::size_t{id.index()} + 1);
  PodJob& j = jobs_[id.index()];
  j = PodJob{};
  j.uid = e.key;
  if (const PodView* p = pod(e.key)) {
    j.ns = p->ns;
    j.name = p->name;
    j.gpus = p->gpus;
    if (p->bound()) j.bound_to = p->node;
  }
}

void K8sAdapter::forgotten(JobId id) {
  if (id.index() < jobs_.size()) jobs_[id.index()] = PodJob{};
}

WaitReason K8sAdapter::eligible(JobId id, const driver::EngineJob&) {
  const PodView* p = pod(jobs_[id.index()].uid);
  return p && p->gated ? WaitReason::Held : WaitReason::None;
}

}  // namespace ds::k8s
