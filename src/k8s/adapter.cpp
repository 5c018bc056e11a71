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

void K8sAdapter::load_nodes(const std::vector<NodeView>& nodes, std::int64_t gpu_memory_mib) {
  std::vector<NodeView> gpu;
  for (const auto& v : nodes)
    if (v.gpus > 0) gpu.push_back(v);
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

void K8sAdapter::set_nodes(const std::vector<NodeView>& nodes) {
  node_views_ = nodes;
  node_alloc_.clear();
  node_allocatable_.clear();
  std::optional<bool> kind;  // of the GPU nodes: DRA devices or nvidia.com/gpu
  mixed_kinds_ = false;
  for (const auto& v : nodes) {
    node_alloc_[v.name] = v.gpus;
    node_allocatable_[v.name] = v.allocatable;
    if (!node_index_.count(v.name)) continue;
    mixed_kinds_ = mixed_kinds_ || (kind && *kind != v.dra);
    kind = v.dra;
  }
}

std::vector<std::string> K8sAdapter::new_gpu_nodes(const std::vector<NodeView>& nodes) const {
  std::vector<std::string> out;
  for (const auto& v : nodes)
    if (v.gpus > 0 && !node_index_.count(v.name)) out.push_back(v.name);
  return out;
}

void K8sAdapter::inherit(const K8sAdapter& old) {
  assumed_ = old.assumed_;
  refused_ = old.refused_;
  told_refused_ = old.told_refused_;
  rejected_ = old.rejected_;
  untenanted_ = old.untenanted_;
  slots_ = old.slots_;
  counters_ = old.counters_;
}

void K8sAdapter::set_cycle(const std::vector<std::shared_ptr<const json>>& pods,
                           const std::vector<NodeView>& nodes, Time now, std::int64_t wall_ms,
                           const driver::DriverClock& clock) {
  now_ = now;
  wall_ = wall_ms;
  clock_ = clock;
  collect_binds();
  set_nodes(nodes);
  ++cycle_;
  pods_.clear();
  pods_.reserve(pods.size());
  api_used_.clear();
  api_requests_.clear();
  api_ports_.clear();
  // Each pod object is read once: an unchanged one (the same pointer) keeps its view, in place.
  for (const auto& o : pods) {
    CachedPod* c = nullptr;
    if (auto known = by_object_.find(o.get()); known != by_object_.end()) {
      c = known->second;
      if (c->derived) {
        c->view = c->read;
        c->derived = false;
      }
    } else {
      const json& uid = member(member(*o, "metadata"), "uid");
      if (!uid.is_string()) continue;
      auto p = pod_view(*o);
      if (!p) continue;
      c = &pod_cache_[uid.get_ref<const std::string&>()];
      if (c->object) by_object_.erase(c->object.get());
      c->object = o;
      c->read = std::move(*p);
      c->view = c->read;
      c->derived = false;
      by_object_.emplace(o.get(), c);
    }
    if (c->cycle == cycle_) continue;  // listed twice
    c->cycle = cycle_;
    pods_.push_back(c);
  }
  if (pod_cache_.size() != pods_.size())
    std::erase_if(pod_cache_, [&](const auto& e) {
      if (e.second.cycle == cycle_) return false;
      by_object_.erase(e.second.object.get());
      return true;
    });
  // Ordered by key (the Observation's contract; the informer's snapshot is already).
  const auto by_uid = [](const CachedPod* a, const CachedPod* b) {
    return a->view.uid < b->view.uid;
  };
  if (!std::is_sorted(pods_.begin(), pods_.end(), by_uid))
    std::sort(pods_.begin(), pods_.end(), by_uid);
  for (CachedPod* c : pods_) {
    PodView& p = c->view;
    auto a = assumed_.empty() ? assumed_.end() : assumed_.find(p.uid);
    if (a != assumed_.end()) {
      // The API accepted our binding; until the cache shows it, the pod is bound as we bound it.
      if (p.bound() || p.ended() || wall_ - a->second.wall > 60'000) {
        assumed_.erase(a);
      } else {
        p.node = a->second.node;
        c->derived = true;
      }
    }
    if (!p.claims.empty()) {
      read_claims(p);
      c->derived = true;
    }
    // A pod DeepShare started shared (an MPS pair's second, DRA) sits on its partner's GPUs.
    const bool on_partner = p.decision_shared && !p.claims.empty() && p.decision_node == p.node;
    if (p.holds_gpus() && !on_partner) api_used_[p.node] += p.gpus;
    if (p.bound() && !p.ended()) {
      api_requests_[p.node] += p.requests;
      if (!p.host_ports.empty()) {
        auto& used = api_ports_[p.node];
        used.insert(used.end(), p.host_ports.begin(), p.host_ports.end());
      }
    }
  }
  for (auto it = assumed_.begin(); it != assumed_.end();)
    it = pod_cache_.count(it->first) ? std::next(it) : assumed_.erase(it);  // gone
  std::vector<const PodView*> mine;
  std::vector<PodView*> items;
  for (CachedPod* c : pods_) {
    PodView& p = c->view;
    if (p.scheduler != scheduler_) continue;
    if (p.claims_pending && !p.bound()) continue;  // placed once its claims are listed
    const bool was_gang = !p.gang.empty();
    bool slotted = false;
    if (!join_job(p, slotted)) continue;
    c->derived = c->derived || (!was_gang && !p.gang.empty()) || slotted;
    if (slotted) items.push_back(&p);
    mine.push_back(&p);
  }
  if (jobs_index_) {
    // A NonIndexed Job's work items: each pod takes over a slot its predecessor left.
    slots_.update({items.begin(), items.end()}, *jobs_index_);
    for (PodView* i : items) {
      PodView& p = *i;
      p.job_item = "~" + std::to_string(slots_.slot(p.uid));
      p.gang = jobs_index_->find(p.job_uid)->name + p.job_item;
    }
  }
  grouping_ = Grouping(mine);
  keep_absent_gangs();
}

bool K8sAdapter::join_job(PodView& p, bool& slotted) const {
  if (!jobs_index_ || p.job_uid.empty() || !p.gang.empty()) return true;
  if (const JobShape* j = jobs_index_->find(p.job_uid)) {
    if (j->ns != p.ns) return true;  // a forged owner reference: a pod of its own
    if (j->gang_size > 0) {
      p.gang = j->name;
      p.gang_size = j->gang_size;
    } else if (j->indexed && p.completion_index >= 0) {
      p.job_item = "#" + std::to_string(p.completion_index);
      p.gang = j->name + p.job_item;
      p.gang_size = 1;
    } else if (!j->indexed) {
      p.gang_size = 1;  // its slot is given once the Job's pods are all read (set_cycle)
      slotted = true;
    } else {
      return true;  // an Indexed Job's pod without an index: a pod of its own
    }
    p.job_gang = true;
    return true;
  }
  const bool fresh = !p.bound() && !p.ended() && !p.terminating && p.created_s >= 0 &&
                     wall_ - p.created_s * 1000 < kJobReadMs;
  return !fresh;
}

bool K8sAdapter::job_over(const std::string& key) const {
  const std::string uid = job_uid_of_key(key);
  if (!jobs_index_ || uid.empty()) return false;
  const JobShape* j = jobs_index_->find(uid);
  return !j || j->finished;
}

// A gang without live pods for a moment (its evicted pods failed, or were deleted before its
// Job made the replacements) stays listed and waiting for kGangAbsenceMs: its replacements
// find it as it was (its place in the queue, its restarts). Longer (its Job gave up or was
// deleted), it ends (engine_job) or, with no pod listed, is no longer listed and leaves.
void K8sAdapter::keep_absent_gangs() {
  std::unordered_map<std::string, std::int64_t> still;
  if (core_)
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      const PodJob& j = jobs_[i];
      if (!j.gang || j.key.empty()) continue;
      const JobStatus s = state().runtime(JobId(static_cast<std::uint32_t>(i))).status;
      if (s == JobStatus::Done || s == JobStatus::Rejected) continue;
      const PodGroup* g = grouping_.find(j.key);
      if (g) {
        const GroupCount c = count(*g);
        if (c.live > 0 || c.holding > 0) continue;
      }
      auto since = absent_.find(j.key);
      const std::int64_t first = since == absent_.end() ? wall_ : since->second;
      still[j.key] = first;
      if (!g && wall_ - first <= kGangAbsenceMs)
        grouping_.add_empty(j.key, j.ns, j.name, j.job, j.size, j.pod_gpus);
    }
  absent_.swap(still);
}

const PodGroup* K8sAdapter::group(const std::string& key) const {
  return grouping_.find(key);
}

bool K8sAdapter::start_in_flight(const std::string& key) const {
  if (!core_) return false;
  auto id = core_->book().find(key);
  return id && core_->book()[*id].intent == driver::Intent::Start;
}

const PodView* K8sAdapter::pod(const std::string& uid) const {
  auto it = pod_cache_.find(uid);
  return it == pod_cache_.end() ? nullptr : &it->second.view;
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

// The model's nodes where pods with `rules` may run (node_rules.hpp): empty when every node.
std::vector<std::uint8_t> K8sAdapter::allowed_nodes(const NodeRules& rules, bool dra) const {
  static const Labels kNoLabels;
  const bool mixed = mixed_kinds_;
  if (rules.empty() && !mixed) return {};
  std::vector<std::uint8_t> mask(cluster_.nodes.size(), 0);
  for (const NodeView& v : node_views_)
    if (auto it = node_index_.find(v.name); it != node_index_.end())
      mask[it->second] =
          (!mixed || v.dra == dra) && rules.admit(v.name, v.labels ? *v.labels : kNoLabels) ? 1 : 0;
  return mask;
}

void K8sAdapter::read_claims(PodView& p) const {
  p.claim_refusal.clear();
  p.claims_pending = false;
  if (!claims_index_) {
    p.claim_refusal =
        "the pod has resource claims and the API serves no resource.k8s.io/v1 (DRA) to DeepShare";
    return;
  }
  if (p.gpus > 0) {
    p.claim_refusal =
        "the pod asks for nvidia.com/gpu and has resource claims: DeepShare places one or the "
        "other";
    return;
  }
  int gpus = 0;
  for (const PodClaim& c : p.claims) {
    const ClaimAsk* a = c.claim.empty() ? nullptr : claims_index_->find(p.ns, c.claim);
    if (!a) {  // the resource-claim controller has not made it yet, or the cache lags
      p.claims_pending = true;
      continue;
    }
    if (!a->refusal.empty()) {
      p.claim_refusal = "resourceclaim " + c.claim + ": " + a->refusal;
      return;
    }
    for (const std::string& uid : a->reserved_for)
      if (uid != p.uid) {
        p.claim_refusal = "resourceclaim " + c.claim +
                          " is reserved for another pod: DeepShare does not share a claim "
                          "between pods";
        return;
      }
    gpus += a->gpus;
  }
  p.gpus = gpus;
  // A bound pod whose claim is gone from the cache holds what DeepShare decided for it.
  if (p.claims_pending && p.bound()) p.gpus = static_cast<int>(p.decision_gpus.size());
}

std::vector<int> K8sAdapter::claimed_gpus(const PodView& p) const {
  std::vector<int> out;
  const auto d = devices_ ? devices_->find(p.node) : NodeDeviceMap::const_iterator{};
  if (!devices_ || d == devices_->end()) return out;
  for (const PodClaim& c : p.claims) {
    const ClaimAsk* a = c.claim.empty() ? nullptr : claims_index_->find(p.ns, c.claim);
    if (!a) return {};
    for (const std::string& dev : a->devices) {
      const int i = d->second.index_of(dev);
      if (i < 0) return {};
      out.push_back(i);
    }
  }
  return out;
}

std::vector<ClaimWrite> K8sAdapter::claim_writes(const PodView& p, const std::string& node,
                                                 const std::vector<int>& gpus,
                                                 std::string& error) const {
  std::vector<ClaimWrite> out;
  const auto d = devices_ ? devices_->find(node) : NodeDeviceMap::const_iterator{};
  if (!devices_ || d == devices_->end()) {
    error = "node " + node + " publishes no device of driver " + dra_.driver;
    return out;
  }
  std::size_t next = 0;
  for (const PodClaim& c : p.claims) {
    const ClaimAsk* a = c.claim.empty() ? nullptr : claims_index_->find(p.ns, c.claim);
    if (!a || next + static_cast<std::size_t>(a->gpus) > gpus.size()) {
      error = "resourceclaim " + (c.claim.empty() ? c.name : c.claim) + " is not listed";
      return {};
    }
    std::vector<int> mine(gpus.begin() + static_cast<std::ptrdiff_t>(next),
                          gpus.begin() + static_cast<std::ptrdiff_t>(next + a->gpus));
    next += static_cast<std::size_t>(a->gpus);
    for (int g : mine)
      if (g < 0 || static_cast<std::size_t>(g) >= d->second.devices.size()) {
        error = "node " + node + " publishes no device for GPU " + std::to_string(g);
        return {};
      }
    out.push_back({c.claim, claim_allocation(*a, dra_.driver, d->second, node, mine)});
  }
  return out;
}

namespace {

// The first pod of `g` whose claims DeepShare cannot allocate.
const PodView* claim_refused(const PodGroup& g) {
  for (const PodView* p : g.members)
    if (!p->claim_refusal.empty()) return p;
  return nullptr;
}

}  // namespace

bool K8sAdapter::admit(const PodGroup& g, std::vector<std::uint8_t>& allowed) {
  const GroupCount c = count(g);
  if (c.live == 0) return false;  // nothing left to schedule
  std::string why;
  // Where its pods may run by their own rules (a gang's: its first pod's).
  const NodeRules& rules = g.members.front()->rules;
  allowed = allowed_nodes(rules, !g.members.front()->claims.empty());
  int largest = 0, fits = 0;  // the largest node; pods of the job the nodes hold
  std::string no_room;        // why the first node cannot allocate a pod's CPU and memory
  bool roomy = false;         // a node can (node_room.hpp)
  const Requests& req = g.members.front()->requests;
  for (const auto& n : cluster_.nodes) {
    if (!allowed.empty() && !allowed[n.id.index()]) continue;
    auto a = node_allocatable_.find(n.name);
    if (const std::string why =
            a == node_allocatable_.end() ? "" : room_refusal(a->second, {}, req);
        !why.empty()) {
      if (no_room.empty()) no_room = n.name + ": " + why;
      continue;
    }
    roomy = true;
    largest = std::max(largest, n.gpus);
    // Pods that bind host ports run one per node (node_room.hpp).
    if (g.pod_gpus > 0)
      fits += g.members.front()->host_ports.empty() ? n.gpus / g.pod_gpus : n.gpus >= g.pod_gpus;
  }
  const std::string what = g.gang ? "the gang's pods ask" : "the pod asks";
  if (!ns_tenants_.count(g.ns()))
    why = "namespace " + g.ns() + " has no DeepShare quota (it is not a tenant)";
  else if (!g.invalid.empty())
    why = "gang " + g.name() + ": " + g.invalid;
  else if (const PodView* c = claim_refused(g))
    why = c->claim_refusal;
  else if (g.pod_gpus <= 0)
    why = what + " for no nvidia.com/gpu: DeepShare schedules GPU pods only";
  else if (!rules.invalid.empty())
    why = "DeepShare cannot read the pod's node affinity: " + rules.invalid;
  else if (!roomy && !no_room.empty())
    why = "the pod requests more CPU or memory than any GPU node allocates (" + no_room + ")";
  else if (!allowed.empty() && largest == 0)
    why = "no GPU node matches the pod's nodeSelector and required node affinity";
  else if (g.pod_gpus > largest)
    why = what + " for " + std::to_string(g.pod_gpus) +
          " nvidia.com/gpu, more than any node has (" + std::to_string(largest) + ")";
  else if (fits < g.size)
    why = "gang " + g.name() + " needs " + std::to_string(g.size) + " pods of " +
          std::to_string(g.pod_gpus) + " nvidia.com/gpu; the nodes hold at most " +
          std::to_string(fits) + " such pods";
  if (why.empty()) return true;
  refused_[g.key()] = why;
  if (!ns_tenants_.count(g.ns())) untenanted_[g.key()] = g.ns();
  ++counters_.refused;
  log_.warn("refuse", {{"job", g.ref()}, {"reason", why}});
  journal_.line("refuse " + g.ref() + " " + why);
  refuse(g, why);
  return false;
}

// Tells each unbound, live pod of a refused job why, once (`why` empty: the reason given to its
// first pods, which later ones get in the same words).
void K8sAdapter::refuse(const PodGroup& g, const std::string& why) {
  for (const PodView* p : g.members) {
    if (p->bound() || p->terminating || p->ended() || told_refused_.count(p->uid)) continue;
    told_refused_.insert(p->uid);
    tell(*p, why.empty() ? refused_[g.key()] : why, "FailedScheduling");
  }
}

void K8sAdapter::set_tenants(std::map<std::string, TenantId> ns_tenants) {
  ns_tenants_ = std::move(ns_tenants);
  for (auto it = untenanted_.begin(); it != untenanted_.end();)
    if (ns_tenants_.count(it->second) || !group(it->first)) {
      refused_.erase(it->first);  // seen again as new: admitted now (or gone)
      if (const PodGroup* g = group(it->first))
        for (const PodView* p : g->members) told_refused_.erase(p->uid);
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
  } else if (auto id = core_ && p.gang.empty() ? core_->book().find(p.uid) : std::nullopt;
             id && !state().runtime(*id).placement.empty() &&
             state().runtime(*id).placement[0].node == node.id) {
    mask = state().runtime(*id).placement[0].gpu_mask;
  }
  if (std::popcount(mask) != p.gpus && !p.claims.empty()) {
    mask = 0;  // its claims name its GPUs
    for (int g : claimed_gpus(p))
      if (g < node.gpus) mask |= std::uint64_t{1} << g;
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

namespace {

// The union of pods' placements (one NodeAlloc per node, in first-seen order).
void add_to(Placement& p, const NodeAlloc& a) {
  for (auto& b : p)
    if (b.node == a.node) {
      b.gpu_mask |= a.gpu_mask;
      return;
    }
  p.push_back(a);
}

// Whether two placements hold the same GPUs, in any order.
bool same_gpus(const Placement& a, const Placement& b) {
  if (a.size() != b.size()) return false;
  for (const auto& x : a)
    if (std::none_of(b.begin(), b.end(), [&](const NodeAlloc& y) { return y == x; })) return false;
  return true;
}

}  // namespace

driver::EngineJob K8sAdapter::engine_job(const PodGroup& g) {
  driver::EngineJob e;
  e.key = g.key();
  e.ref = g.ref();
  e.phase = group_phase(g, g.gang && start_in_flight(g.key()));  // a pod's own: no matter
  if (auto a = absent_.find(g.key());
      a != absent_.end() && e.phase == driver::Phase::Waiting && wall_ - a->second > kGangAbsenceMs)
    e.phase = driver::Phase::Ended;  // no live pod for too long
  if (e.phase == driver::Phase::Waiting && g.job && job_over(g.key()) && count(g).live == 0)
    e.phase = driver::Phase::Ended;  // its Job makes no more pods
  if (!g.gang) {
    const PodView& first = *g.members.front();
    e.state = first.terminating ? "terminating" : (first.phase.empty() ? "Pending" : first.phase);
  } else {
    e.state = std::string("gang ") + driver::to_string(e.phase);
  }
  bool all_decided = true, borrowed = false, shared = false, all_controlled = true;
  Time decided = kNever;
  std::int64_t started_s = -1, created_s = -1;
  for (const PodView* p : g.members) {
    if (!p->ended()) all_controlled = all_controlled && p->controlled;
    if (p->created_s >= 0 && (created_s < 0 || p->created_s < created_s)) created_s = p->created_s;
    if (!p->bound() || p->ended()) continue;
    const Placement at = placement_of(*p);
    if (at.empty()) continue;  // a node outside the model
    add_to(e.placement, at.front());
    const bool decision = p->decision_node == p->node;
    all_decided = all_decided && decision;
    borrowed = borrowed || (decision && p->decision_borrowed);
    shared = shared || (decision && p->decision_shared);
    if (decision && p->decision_ms >= 0) decided = std::min(decided, Time{p->decision_ms});
    if (p->started_s >= 0 && (started_s < 0 || p->started_s < started_s)) started_s = p->started_s;
  }
  if (g.gang && core_)
    if (auto id = core_->book().find(g.key());
        id && same_gpus(e.placement, state().runtime(*id).placement))
      e.placement = state().runtime(*id).placement;  // the model's order
  if (e.phase == driver::Phase::Running)
    e.run_start = started_s >= 0 ? clock_.at(started_s * 1000) : now_;
  if (all_decided && !e.placement.empty())
    e.decision = driver::EngineDecision{borrowed, shared, e.placement, decided};
  e.user = g.ns();
  auto t = ns_tenants_.find(g.ns());
  e.spec.name = g.ref();
  e.spec.tenant = t == ns_tenants_.end() ? TenantId() : t->second;
  e.spec.gpus = std::max(1, g.gpus());
  // A job DeepShare placed on borrowed GPUs stays preemptible whatever its pods' owner
  // references say now: a user may strip them (or make its Job release a pod by a label
  // change) to escape the reclaim once a restarted scheduler adopts it. Only a controlled job
  // is ever placed on borrowed GPUs, and the decision annotation is DeepShare's alone (the
  // admission policy).
  e.spec.preemptible = all_controlled || borrowed;
  // MPS pairs: a job of one pod at a time (a pod, a Job of one pod, a work item) whose GPUs
  // are DRA claims, with its GPU memory declared (the policy pairs only jobs whose memory it
  // knows; its utilization, when declared, is what the interference model predicts from), on
  // nodes whose devices allow two claims (nodes(): the others are marked unshareable). Read
  // from its live pod (a gang may be listed without pods for a while).
  const PodView* one = nullptr;
  if (g.size == 1)
    for (const PodView* p : g.members)
      if (!one || (!p->ended() && !p->terminating)) one = p;
  if (one) {
    const PodView& pod = *one;
    e.spec.colocatable = !pod.claims.empty() && pod.gpu_memory_mib > 0;
    e.spec.gpu_memory_mib = static_cast<double>(pod.gpu_memory_mib);
    if (pod.gpu_util > 0) e.spec.gpu_util = static_cast<double>(pod.gpu_util);  // else unknown
  } else {
    e.spec.colocatable = false;
  }
  // The API keeps whole seconds; the first sighting refines it within that second.
  const std::int64_t created_ms = created_s >= 0 ? created_s * 1000 : wall_;
  e.spec.submit = clock_.at(std::clamp(wall_, created_ms, created_ms + 999));
  return e;
}

std::optional<driver::Observation> K8sAdapter::observe() {
  driver::Observation o;
  taken_.clear();
  // Pods of refused jobs that appeared since are told why too.
  std::vector<const PodGroup*> mine;  // in key order, as the groups
  for (const auto& g : grouping_.groups())
    if (refused_.count(g.key()))
      refuse(g, {});
    else if (!rejected_.count(g.key()))
      mine.push_back(&g);
  // Jobs whose pods all have a recorded placement first, so that a pod bound by someone else
  // gets GPUs nobody else is recorded on; listed in key order (the Observation's contract).
  std::vector<std::optional<driver::EngineJob>> jobs(mine.size());
  const auto decided = [](const PodGroup* g) {
    return std::all_of(g->members.begin(), g->members.end(),
                       [](const PodView* p) { return p->decision_node == p->node; });
  };
  for (const bool first : {true, false})
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const PodGroup* g = mine[i];
      if (decided(g) != first) continue;
      // A decision of a newer leader: another scheduler acts on this cluster (we lost the
      // Lease without noticing, or run without one): nothing more from this one.
      for (const PodView* p : g->members)
        if (p->bound() && p->decision_epoch > fence_.epoch())
          fence_.depose("pod " + p->ref() + " carries a decision of epoch " +
                        std::to_string(p->decision_epoch) +
                        " (ours: " + std::to_string(fence_.epoch()) + ")");
      // A job that left and is listed waiting again (its Job's late replacement) is a new job
      // to the core: read as one.
      const auto id = core_ ? core_->book().find(g->key()) : std::nullopt;
      const bool known =
          id && (state().runtime(*id).status != JobStatus::Done || count(*g).live == 0);
      std::vector<std::uint8_t> allowed;
      if (!known && !admit(*g, allowed)) continue;
      jobs[i] = engine_job(*g);
      jobs[i]->spec.allowed_nodes = std::move(allowed);  // read by the core for a new job
    }
  o.jobs.reserve(mine.size());
  for (auto& j : jobs)
    if (j) o.jobs.push_back(std::move(*j));
  return o;
}

std::optional<std::vector<driver::EngineNode>> K8sAdapter::nodes() {
  std::vector<driver::EngineNode> out;
  for (const NodeView& v : node_views_) {
    if (!node_index_.count(v.name)) continue;
    // Colocation (MPS pairs) only where DRA devices allow two claims on one GPU.
    out.push_back({v.name, v.usable(), !(v.dra && v.shareable),
                   v.cordoned ? "cordoned" : (v.ready ? "ready" : "not-ready")});
  }
  return out;
}

// GPUs the API shows held by pods the model does not run: the node's count, on GPUs the
// model leaves free (Kubernetes does not say which device a pod got).
void K8sAdapter::sync_held() {
  std::unordered_map<std::string, int> outside;
  std::vector<std::size_t> held;
  for (const CachedPod* c : pods_) {
    const PodView& p = c->view;
    if (!p.holds_gpus()) continue;
    // A pod of a job the model runs (an ending one is no longer in its placement).
    auto id = p.scheduler != scheduler_ ? std::nullopt
              : p.gang.empty()          ? core_->book().find(p.uid)
                                        : core_->book().find(group_key(p));
    if (id && !p.terminating && state().runtime(*id).status == JobStatus::Running) continue;
    auto n = node_index_.find(p.node);
    // A DRA pod's claims name its GPUs: those exactly (another scheduler chose the devices).
    if (const std::vector<int> exact =
            p.claims.empty() || n == node_index_.end() ? std::vector<int>{} : claimed_gpus(p);
        !exact.empty()) {
      const Node& node = cluster_.nodes[n->second];
      for (int g : exact)
        if (g < node.gpus) held.push_back(static_cast<std::size_t>(node.first_gpu + g));
      continue;
    }
    outside[p.node] += p.gpus;
  }
  for (const auto& [name, count] : outside) {
    auto n = node_index_.find(name);
    if (n == node_index_.end()) continue;
    const Node& node = cluster_.nodes[n->second];
    int left = count;
    for (int g = node.gpus - 1; g >= 0 && left > 0; --g) {
      const auto flat = static_cast<std::size_t>(node.first_gpu + g);
      if (!state().jobs_on_gpu(flat).empty() ||
          std::find(held.begin(), held.end(), flat) != held.end())
        continue;
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
  j.key = e.key;
  if (const PodGroup* g = group(e.key)) {
    j.ns = g->ns();
    j.name = g->name();
    j.gang = g->gang;
    j.job = g->job;
    j.size = g->size;
    j.pod_gpus = g->pod_gpus;
    if (!g->members.empty()) {
      j.pod_requests = g->members.front()->requests;
      j.host_ports = g->members.front()->host_ports;
    }
  }
}

// A gang that lost a pod while it ran (evicted or deleted by someone else, failed): the rest
// are evicted, so that it starts again as a whole.
void K8sAdapter::observed(JobId id, const driver::EngineJob& e) {
  const PodJob& j = jobs_[id.index()];
  if (!j.gang || e.phase != driver::Phase::Stopping ||
      core_->book()[id].intent != driver::Intent::None)
    return;
  const PodGroup* g = group(j.key);
  if (!g || count(*g).live_bound == 0) return;
  log_.warn(
      "gang_broken", core_->who(id),
      {{"job", j.ref()}, {"detail", "a pod of the running gang is gone: the rest are evicted"}});
  evict_bound(j);
}

void K8sAdapter::forgotten(JobId id) {
  if (id.index() < jobs_.size()) jobs_[id.index()] = PodJob{};
}

WaitReason K8sAdapter::eligible(JobId id, const driver::EngineJob&) {
  const PodJob& j = jobs_[id.index()];
  if (!j.gang) {  // a pod of its own (the common case: a hash lookup)
    const PodView* p = pod(j.key);
    return p && p->gated ? WaitReason::Held : WaitReason::None;
  }
  const PodGroup* g = group(j.key);
  if (!g) return WaitReason::None;
  const GroupCount c = count(*g);
  if (c.gated > 0) return WaitReason::Held;
  // A gang runs once all its pods wait (and no more than it needs).
  if (c.live != j.size) return WaitReason::Dependency;
  return WaitReason::None;
}

}  // namespace ds::k8s
