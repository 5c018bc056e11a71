// The Kubernetes adapter's actions (adapter.hpp): annotate + bind, evict, tell a pod why.
#include <algorithm>
#include <bit>
#include <chrono>
#include <limits>

#include "k8s/adapter.hpp"
#include "k8s/api.hpp"

namespace ds::k8s {

void K8sAdapter::api_failed(const char* what, const std::string& ref, const ApiError& e) {
  ++counters_.api_failures;
  log_.warn(what, {{"pod", ref}, {"error", e.str()}});
}

EventSpec K8sAdapter::event_spec(const PodView& p, const char* type, const char* reason,
                                 const char* action, const std::string& note) {
  EventSpec s;
  s.regarding = {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"namespace", p.ns}, {"name", p.name}, {"uid", p.uid}};
  s.type = type;
  s.reason = reason;
  s.action = action;
  s.note = note.substr(0, 1024);  // the API caps an Event's note at 1 kB
  s.time = std::chrono::system_clock::now();
  return s;
}

SendBy K8sAdapter::send_by() const {
  const std::int64_t window = fence_.send_window_ms();
  return window < std::numeric_limits<std::int64_t>::max()
             ? std::chrono::steady_clock::now() + std::chrono::milliseconds(window)
             : kNoDeadline;
}

void K8sAdapter::event(const PodView& p, const char* type, const char* reason, const char* action,
                       const std::string& note) {
  if (!fence_.may_send()) return;
  EventSpec spec = event_spec(p, type, reason, action, note);
  if (binder_) {  // beside the loop (binder.hpp: the notes' lane)
    binder_->submit(Note{Note::Kind::Event, p.ns, p.name, std::move(spec), "", send_by()});
  } else if (auto r = create_event(client_, spec); !r) {
    api_failed("event_failed", p.ref(), r.error());
  }
}

void K8sAdapter::collect_binds() {
  if (!binder_) return;
  if (!fence_.acting()) binder_->drop_queued();  // another leader acts: nothing more goes out
  for (auto& o : binder_->take_outcomes()) {
    if (o.late) {  // the fence's window ran out before a worker could send it
      assumed_.erase(o.uid);
      fence_.count_late();
      log_.warn("bind_fenced",
                {{"pod", o.ref}, {"detail", "not sent: the Lease may be another's by now"}});
      continue;
    }
    counters_.bind_seconds.observe(o.seconds);  // sent: answered or failed
    if (o.bind_error) {
      assumed_.erase(o.uid);  // shown unbound again (the cache never showed it bound)
      api_failed("bind_failed", o.ref, *o.bind_error);
      continue;
    }
    ++counters_.binds;
  }
  for (const auto& n : binder_->take_note_failures()) {
    if (n.error) {
      api_failed(n.kind == Note::Kind::Event ? "event_failed" : "condition_failed", n.ref,
                 *n.error);
    } else {
      fence_.count_late();  // not sent: the fence's window ran out first
    }
  }
}

// Warning Event + PodScheduled=False (what `kubectl describe pod` shows, as for
// kube-scheduler's FailedScheduling).
void K8sAdapter::tell(const PodView& p, const std::string& reason, const char* event_reason) {
  event(p, "Warning", event_reason, "Scheduling", "DeepShare: " + reason);
  condition(p, "DeepShare: " + reason);
}

void K8sAdapter::condition(const PodView& p, const std::string& message) {
  if (!fence_.may_send()) return;
  if (binder_) {
    binder_->submit(Note{Note::Kind::Condition, p.ns, p.name, {}, message, send_by()});
  } else if (auto r = mark_unschedulable(client_, p.ns, p.name, message); !r) {
    if (!r.error().not_found()) api_failed("condition_failed", p.ref(), r.error());
  }
}

namespace {

// What a waiting pod's condition says, per typed reason (model/snapshot.hpp).
const char* wait_text(WaitReason r) {
  switch (r) {
    case WaitReason::Priority:
      return "queued behind jobs the policy runs first";
    case WaitReason::Quota:
      return "its namespace's GPU quota (or borrowing limit) is used up";
    case WaitReason::Reserved:
      return "free GPUs are held back for jobs entitled to them";
    case WaitReason::NoFit:
      return "not enough free GPUs where it may run";
    case WaitReason::Fragmented:
      return "enough free GPUs in total, but not on one node";
    case WaitReason::Reclaim:
      return "waiting for lent GPUs to come back";
    case WaitReason::Round:
      return "waiting for the policy's next scheduling round";
    case WaitReason::Profiling:
      return "in a profiling stage";
    default:
      return "waiting";
  }
}

}  // namespace

void K8sAdapter::report_waits(std::size_t max_writes) {
  std::size_t writes = 0;
  // With a binder the writes queue beside the loop: no more than `max_writes` waiting there
  // (the rest are told at a later cycle, as without one).
  if (binder_) {
    const std::size_t queued = binder_->notes_queued();
    max_writes = queued >= max_writes ? 0 : max_writes - queued;
  }
  for (std::size_t i = 0; i < jobs_.size() && writes < max_writes; ++i) {
    PodJob& j = jobs_[i];
    if (j.key.empty() || j.start) continue;
    const JobId id(static_cast<std::uint32_t>(i));
    const JobRuntime& r = state().runtime(id);
    // Pending, and gangs waiting for their pods: a gated pod is SchedulingGated by the API
    // server itself; Starting is a binding in flight.
    const bool incomplete =
        j.gang && r.status == JobStatus::Future && r.wait == WaitReason::Dependency;
    if ((r.status != JobStatus::Pending && !incomplete) || r.wait == WaitReason::None ||
        r.wait == WaitReason::Starting || r.wait == j.told)
      continue;
    const PodGroup* g = group(j.key);
    if (!g) continue;
    j.told = r.wait;  // told once per change, whatever the answer: no retry storm
    std::string text = wait_text(r.wait);
    if (j.gang && r.wait == WaitReason::Dependency) {
      const int live = count(*g).live;
      text = live < j.size ? "gang " + j.name + " runs once all its " + std::to_string(j.size) +
                                 " pods exist (" + std::to_string(live) + " now)"
                           : "gang " + j.name + " has " + std::to_string(live) +
                                 " pods, more than its size " + std::to_string(j.size);
    }
    for (const PodView* p : g->members) {
      if (p->bound() || p->terminating || p->ended()) continue;
      ++writes;
      ++counters_.wait_conditions;
      condition(*p, std::string("DeepShare: waiting (") + to_string(r.wait) + "): " + text);
    }
  }
}

// The job's pods on nodes: each node of the decision holds a whole number of its pods (a pod
// runs on one node), else its pods go to the nodes whose GPUs the model leaves free, the
// decision's nodes first, or the start is deferred.
std::optional<Placement> K8sAdapter::place(const StartJob& d) {
  const PodJob& j = jobs_[d.job.index()];
  const int unit = std::max(1, j.pod_gpus);
  refresh_placed();
  // Whole pods per node, each node with room for its pods' CPU and memory (node_room.hpp).
  std::string why;
  bool whole = true;
  for (const NodeAlloc& a : d.placement) {
    const int gpus = std::popcount(a.gpu_mask);
    whole = whole && gpus % unit == 0;
    if (whole && why.empty())
      why = room_refusal_on(j, cluster_.nodes[a.node.index()].name, gpus / unit, false);
  }
  if (whole && why.empty()) return d.placement;
  if (d.shared) {  // on its partner's GPUs: nowhere else
    log_.info("start_deferred", core_->who(d.job),
              {{"job", j.ref()},
               {"reason", why.empty() ? "its pods are not whole on its partner's GPUs"
                                      : "the kubelet would refuse its pod: " + why}});
    return std::nullopt;
  }
  std::vector<NodeId> order;
  for (const auto& a : d.placement) order.push_back(a.node);
  for (const Node& n : cluster_.nodes)
    if (std::find(order.begin(), order.end(), n.id) == order.end()) order.push_back(n.id);
  const JobSpec& spec = state().spec(d.job);
  Placement out;
  int left = j.size;
  for (NodeId id : order) {
    const Node& n = cluster_.nodes[id.index()];
    if (left == 0) break;
    if (!state().node_usable(n.id) || !accepts_node(spec, n.id, n.gpu_type)) continue;
    std::vector<int> free;
    for (int g = 0; g < n.gpus; ++g) {
      const auto flat = static_cast<std::size_t>(n.first_gpu + g);
      if (state().gpu_available(flat) && state().jobs_on_gpu(flat).empty()) free.push_back(g);
    }
    int pods = std::min(left, static_cast<int>(free.size()) / unit);
    while (pods > 0 && !room_refusal_on(j, n.name, pods, false).empty()) --pods;
    if (pods == 0) continue;
    std::uint64_t mask = 0;
    for (int k = 0; k < pods * unit; ++k)
      mask |= std::uint64_t{1} << free[static_cast<std::size_t>(k)];
    out.push_back(NodeAlloc{n.id, mask});
    left -= pods;
  }
  if (left == 0) return out;
  std::string reason = j.gang ? "a pod runs on one node; the nodes' free GPUs do not hold all "
                                "the gang's pods"
                              : "a pod runs on one node; no node has its GPUs free";
  if (!why.empty())
    reason = "the kubelet would refuse its pods: " + why + "; no other node has room";
  log_.info("start_deferred", core_->who(d.job), {{"job", j.ref()}, {"reason", reason}});
  return std::nullopt;
}

// Requests of the pods of starts decided and not bound yet, per node (once a cycle).
void K8sAdapter::refresh_placed() {
  if (placed_cycle_ == cycle_) return;
  placed_cycle_ = cycle_;
  placed_.clear();
  placed_ports_.clear();
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const PodJob& j = jobs_[i];
    if (!j.start ||
        core_->book()[JobId(static_cast<std::uint32_t>(i))].intent != driver::Intent::Start)
      continue;
    const PodGroup* g = group(j.key);
    const int unit = std::max(1, j.pod_gpus);
    for (const NodeAlloc& a : j.start->placement) {
      const std::string& name = cluster_.nodes[a.node.index()].name;
      int unbound = std::popcount(a.gpu_mask) / unit;
      if (g)
        for (const PodView* p : g->members)
          unbound -= p->bound() && !p->ended() && !p->terminating && p->node == name;
      if (unbound <= 0) continue;
      placed_[name] += j.pod_requests.times(unbound);
      auto& ports = placed_ports_[name];
      ports.insert(ports.end(), j.host_ports.begin(), j.host_ports.end());
    }
  }
}

std::string K8sAdapter::room_refusal_on(const PodJob& j, const std::string& node, int pods,
                                        bool api_only) const {
  if (!j.host_ports.empty()) {  // the kubelet's host port check (node_room.hpp)
    if (pods > 1)
      return node + ": its pods bind host port " + j.host_ports.front() + ": one per node";
    std::string taken;
    if (auto u = api_ports_.find(node); u != api_ports_.end())
      taken = port_conflict(u->second, j.host_ports);
    if (auto u = placed_ports_.find(node); taken.empty() && !api_only && u != placed_ports_.end())
      taken = port_conflict(u->second, j.host_ports);
    if (!taken.empty()) return node + ": host port " + taken + " is taken there";
  }
  auto alloc = node_allocatable_.find(node);
  if (alloc == node_allocatable_.end()) return "";
  Requests held;
  if (auto a = api_requests_.find(node); a != api_requests_.end()) held += a->second;
  if (!api_only)
    if (auto p = placed_.find(node); p != placed_.end()) held += p->second;
  const std::string why = room_refusal(alloc->second, held, j.pod_requests.times(pods));
  return why.empty() ? why : node + ": " + why;
}

void K8sAdapter::decided(const StartJob& s, Time queued_since, bool moved) {
  PodJob& j = jobs_[s.job.index()];
  j.start = s;
  if (placed_cycle_ == cycle_)  // later starts of this cycle count its pods
    for (const NodeAlloc& a : s.placement) {
      const std::string& name = cluster_.nodes[a.node.index()].name;
      placed_[name] += j.pod_requests.times(std::popcount(a.gpu_mask) / std::max(1, j.pod_gpus));
      auto& ports = placed_ports_[name];
      ports.insert(ports.end(), j.host_ports.begin(), j.host_ports.end());
    }
  std::string nodes;
  for (const auto& a : s.placement)
    nodes += (nodes.empty() ? "" : ",") + cluster_.nodes[a.node.index()].name;
  log_.info("start", core_->who(s.job),
            {{"job", j.ref()},
             {"node", nodes},
             {"gpu_count", j.size * j.pod_gpus},
             {"borrowed", s.borrowed},
             {"shared", s.shared},
             {"moved", moved},
             {"queued_s", static_cast<double>(now_ - queued_since) / 1000.0}});
  journal_.line("start " + j.ref() + (s.shared ? " shared" : ""));
}

bool K8sAdapter::bind(const PodJob& j, const PodView& p, const Node& node,
                      const std::vector<int>& gpus) {
  // The decision rides on the binding: the API server sets the annotations and the node in
  // one update, so a pod is never bound without its decision, nor annotated and left unbound.
  const std::map<std::string, std::string> ann = {
      {kGpusAnnotation, gpus_annotation(node.name, gpus)},
      {kDecisionAnnotation,
       decision_annotation(j.start->borrowed, j.start->shared, now_, fence_.epoch(),
                           j.start->mps_thread_percent, j.start->mps_memory_limit_mib)}};
  std::vector<ClaimWrite> claims;  // DRA: the claims name the GPUs (dra.hpp)
  if (!p.claims.empty()) {
    std::string error;
    claims = claim_writes(p, node.name, gpus, error);
    if (!error.empty()) {
      log_.warn("claim_unallocated", {{"pod", p.ref()}, {"node", node.name}, {"reason", error}});
      return false;
    }
  }
  if (!fence_.may_send()) return false;
  const std::string note = "Successfully assigned " + p.ref() + " to " + node.name +
                           " (DeepShare: GPUs " + gpus_annotation(node.name, gpus) +
                           (j.start->borrowed ? ", borrowed" : "") +
                           (j.gang ? ", gang " + j.name : "") + ")";
  if (binder_) {  // sent beside the loop; taken as accepted until its outcome says otherwise
    binder_->submit(BindRequest{p.uid, p.ns, p.name, node.name, ann,
                                event_spec(p, "Normal", "Scheduled", "Binding", note), send_by(),
                                std::move(claims)});
  } else {
    if (auto a = allocate_claims(client_, p.ns, p.name, p.uid, claims); !a) {
      api_failed("claim_failed", p.ref(), a.error());
      return false;
    }
    if (auto r = bind_pod(client_, p.ns, p.name, node.name, ann); !r) {
      api_failed("bind_failed", p.ref(), r.error());
      return false;
    }
    ++counters_.binds;
    event(p, "Normal", "Scheduled", "Binding", note);
  }
  assumed_[p.uid] = Assumed{node.name, p.gpus, wall_};
  if (!j.start->shared) api_used_[node.name] += p.gpus;
  api_requests_[node.name] += p.requests;
  auto& ports = api_ports_[node.name];
  ports.insert(ports.end(), p.host_ports.begin(), p.host_ports.end());
  if (placed_cycle_ == cycle_) placed_[node.name] += j.pod_requests.times(-1);  // now bound
  CachedPod& c = pod_cache_.at(p.uid);
  c.view.node = node.name;
  c.derived = true;
  return true;
}

// Each pod of the decision gets a slot: `unit` GPUs of one node of the placement (the lowest
// first). Pods bound already (an earlier hand-over that the API took in part, or a cache that
// lags) keep theirs; the others are bound in name order, all or, on a failure, the rest at the
// next try.
driver::Actuator::Handover K8sAdapter::hand_over(JobId id) {
  PodJob& j = jobs_[id.index()];
  const PodGroup* g = group(j.key);
  if (!j.start || !g) return Handover::Failed;
  if (!j.gang) {
    const PodView& p = *g->members.front();
    if (p.terminating || p.ended()) return Handover::Failed;
  }
  struct Slot {
    const Node* node;
    std::vector<int> gpus;
    const PodView* pod = nullptr;
  };
  const int unit = std::max(1, j.pod_gpus);
  std::vector<Slot> slots;
  for (const NodeAlloc& a : j.start->placement) {
    Slot s{&cluster_.nodes[a.node.index()], {}};
    for (std::uint64_t m = a.gpu_mask; m; m &= m - 1) {
      s.gpus.push_back(std::countr_zero(m));
      if (static_cast<int>(s.gpus.size()) == unit) {
        slots.push_back(s);
        s.gpus.clear();
      }
    }
  }
  std::vector<const PodView*> waiting;
  for (const PodView* p : g->members) {
    if (p->terminating || p->ended()) continue;
    if (!p->bound()) {
      waiting.push_back(p);
      continue;
    }
    auto s = std::find_if(slots.begin(), slots.end(), [&](const Slot& x) {
      return !x.pod && x.node->name == p->node &&
             (!j.gang || p->decision_node != p->node || x.gpus == p->decision_gpus);
    });
    if (s == slots.end()) return Handover::Failed;  // bound elsewhere than decided
    s->pod = p;
  }
  std::vector<Slot*> open;
  for (auto& s : slots)
    if (!s.pod) open.push_back(&s);
  if (open.empty()) return Handover::Sent;
  if (waiting.size() < open.size()) return Handover::NotYet;  // a pod of the gang is not there
  // The API's own count: a victim, an ending pod or another scheduler's pod still holds them.
  // Binding now would put more nvidia.com/gpu on a node than it has.
  std::map<std::string, int> need;
  for (const Slot* s : open) need[s->node->name] += unit;
  for (const auto& [node, gpus] : need)
    if ((!j.start->shared && api_free(node) < gpus) ||  // a shared start: its partner's GPUs
        !room_refusal_on(j, node, gpus / unit, true).empty()) {
      ++counters_.waits_for_gpus;  // the kubelet would refuse the pods (node_room.hpp)
      return Handover::NotYet;
    }
  for (std::size_t k = 0; k < open.size(); ++k)
    if (!bind(j, *waiting[k], *open[k]->node, open[k]->gpus)) return Handover::Failed;
  return Handover::Sent;
}

bool K8sAdapter::evict(const PodView& p) {
  if (!fence_.may_send()) return false;
  // the pod's own grace period, bounded by its tenant's (grace.hpp)
  const std::int64_t grace = grace_.for_pod(p);
  if (auto r = evict_pod(client_, p.ns, p.name, grace); !r) {
    if (r.error().not_found()) return true;  // gone already
    api_failed("evict_failed", p.ref(), r.error());
    return false;
  }
  ++counters_.evictions;
  journal_.line("evict " + p.ref() + " grace_s=" + std::to_string(grace));
  return true;
}

bool K8sAdapter::evict_bound(const PodJob& j) {
  const PodGroup* g = group(j.key);
  if (!g) return true;  // gone already
  bool ok = true;
  for (const PodView* p : g->members)
    if (p->bound() && !p->terminating && !p->ended()) ok = evict(*p) && ok;
  return ok;
}

// A bound pod cannot be unbound: it is evicted (its controller makes a new one).
void K8sAdapter::take_back(JobId id) {
  PodJob& j = jobs_[id.index()];
  evict_bound(j);
  j.start.reset();
}

void K8sAdapter::repeat_preempt(JobId id) {
  evict_bound(jobs_[id.index()]);
}

driver::Actuator::Preemption K8sAdapter::preempt(JobId id, const driver::EngineJob&) {
  PodJob& j = jobs_[id.index()];
  if (!evict_bound(j)) return Preemption::Refused;
  if (const PodGroup* g = group(j.key))
    for (const PodView* p : g->members)
      if (p->bound() && !p->ended())
        event(*p, "Normal", "Preempted", "Preempting",
              "DeepShare: evicted to give its tenant's GPUs back (the pod's controller recreates "
              "it)");
  return Preemption::Sent;
}

bool K8sAdapter::reject(JobId id, const std::string& reason) {
  PodJob& j = jobs_[id.index()];
  rejected_.insert(j.key);
  const PodGroup* g = group(j.key);
  if (!g) return false;
  for (const PodView* p : g->members)
    if (!p->bound() && !p->terminating && !p->ended()) tell(*p, reason, "FailedScheduling");
  return true;
}

}  // namespace ds::k8s
