// The Kubernetes adapter's actions (adapter.hpp): annotate + bind, evict, tell a pod why.
#include <bit>
#include <chrono>

#include "k8s/adapter.hpp"
#include "k8s/api.hpp"

namespace ds::k8s {

void K8sAdapter::api_failed(const char* what, const std::string& ref, const ApiError& e) {
  ++counters_.api_failures;
  log_.warn(what, {{"pod", ref}, {"error", e.str()}});
}

void K8sAdapter::event(const PodView& p, const char* type, const char* reason, const char* action,
                       const std::string& note) {
  if (!fence_.may_send()) return;
  EventSpec s;
  s.regarding = {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"namespace", p.ns}, {"name", p.name}, {"uid", p.uid}};
  s.type = type;
  s.reason = reason;
  s.action = action;
  s.note = note.substr(0, 1024);  // the API caps an Event's note at 1 kB
  s.time = std::chrono::system_clock::now();
  if (auto r = create_event(client_, s); !r) api_failed("event_failed", p.ref(), r.error());
}

// Warning Event + PodScheduled=False (what `kubectl describe pod` shows, as for
// kube-scheduler's FailedScheduling).
void K8sAdapter::tell(const PodView& p, const std::string& reason, const char* event_reason) {
  event(p, "Warning", event_reason, "Scheduling", "DeepShare: " + reason);
  condition(p, "DeepShare: " + reason);
}

void K8sAdapter::condition(const PodView& p, const std::string& message) {
  if (!fence_.may_send()) return;
  const json body = {{"status",
                      {{"conditions", json::array({{{"type", "PodScheduled"},
                                                    {"status", "False"},
                                                    {"reason", "Unschedulable"},
                                                    {"message", message}}})}}}};
  if (auto r = client_.patch(pods_path(p.ns, p.name, "status"), body, PatchType::Strategic); !r)
    if (!r.error().not_found()) api_failed("condition_failed", p.ref(), r.error());
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
  for (std::size_t i = 0; i < jobs_.size() && writes < max_writes; ++i) {
    PodJob& j = jobs_[i];
    if (j.uid.empty() || j.start) continue;
    const JobId id(static_cast<std::uint32_t>(i));
    const JobRuntime& r = state().runtime(id);
    // Pending only: a gated pod is SchedulingGated by the API server itself; Starting is a
    // binding in flight.
    if (r.status != JobStatus::Pending || r.wait == WaitReason::None ||
        r.wait == WaitReason::Starting || r.wait == j.told)
      continue;
    const PodView* p = pod(j.uid);
    if (!p || p->bound() || p->terminating || p->ended()) continue;
    j.told = r.wait;  // told once per change, whatever the answer: no retry storm
    ++writes;
    ++counters_.wait_conditions;
    condition(*p,
              std::string("DeepShare: waiting (") + to_string(r.wait) + "): " + wait_text(r.wait));
  }
}

std::optional<Placement> K8sAdapter::place(const StartJob& d) {
  if (d.placement.size() == 1) return d.placement;
  // A pod runs on one node: a placement over several is moved onto one node whose GPUs the
  // model leaves free, or deferred.
  const int want = static_cast<int>(state().spec(d.job).gpus);
  for (const Node& n : cluster_.nodes) {
    if (!state().node_usable(n.id)) continue;
    std::uint64_t mask = 0;
    for (int g = 0; g < n.gpus && std::popcount(mask) < want; ++g) {
      const auto flat = static_cast<std::size_t>(n.first_gpu + g);
      if (state().gpu_available(flat) && state().jobs_on_gpu(flat).empty())
        mask |= std::uint64_t{1} << g;
    }
    if (std::popcount(mask) == want) return Placement{NodeAlloc{n.id, mask}};
  }
  log_.info("start_deferred", core_->who(d.job),
            {{"job", jobs_[d.job.index()].ns + "/" + jobs_[d.job.index()].name},
             {"reason", "a pod runs on one node; no node has its GPUs free"}});
  return std::nullopt;
}

void K8sAdapter::decided(const StartJob& s, Time queued_since, bool moved) {
  PodJob& j = jobs_[s.job.index()];
  j.start = s;
  log_.info("start", core_->who(s.job),
            {{"job", j.ns + "/" + j.name},
             {"node", cluster_.nodes[s.placement[0].node.index()].name},
             {"gpu_count", j.gpus},
             {"borrowed", s.borrowed},
             {"moved", moved},
             {"queued_s", static_cast<double>(now_ - queued_since) / 1000.0}});
  journal_.line("start " + j.ns + "/" + j.name);
}

driver::Actuator::Handover K8sAdapter::hand_over(JobId id) {
  PodJob& j = jobs_[id.index()];
  const PodView* p = pod(j.uid);
  if (!j.start || !p || p->terminating || p->ended()) return Handover::Failed;
  const NodeAlloc& a = j.start->placement.at(0);
  const Node& node = cluster_.nodes[a.node.index()];
  if (p->bound()) return p->node == node.name ? Handover::Sent : Handover::Failed;
  // The API's own count: a victim, an ending pod or another scheduler's pod still holds
  // them. Binding now would put more nvidia.com/gpu on the node than it has.
  if (api_free(node.name) < p->gpus) {
    ++counters_.waits_for_gpus;
    return Handover::NotYet;
  }
  std::vector<int> gpus;
  for (std::uint64_t m = a.gpu_mask; m; m &= m - 1) gpus.push_back(std::countr_zero(m));
  // The decision rides on the binding: the API server sets the annotations and the node in
  // one update, so a pod is never bound without its decision, nor annotated and left unbound.
  const std::map<std::string, std::string> ann = {
      {kGpusAnnotation, gpus_annotation(node.name, gpus)},
      {kDecisionAnnotation,
       decision_annotation(j.start->borrowed, j.start->shared, now_, fence_.epoch())}};
  if (!fence_.may_send()) return Handover::Failed;
  if (auto r = bind_pod(client_, p->ns, p->name, node.name, ann); !r) {
    api_failed("bind_failed", p->ref(), r.error());
    return Handover::Failed;
  }
  ++counters_.binds;
  j.bound_to = node.name;
  assumed_[j.uid] = Assumed{node.name, p->gpus, wall_};
  api_used_[node.name] += p->gpus;
  pods_[pod_index_.at(j.uid)].node = node.name;
  event(*p, "Normal", "Scheduled", "Binding",
        "Successfully assigned " + p->ref() + " to " + node.name + " (DeepShare: GPUs " +
            gpus_annotation(node.name, gpus) + (j.start->borrowed ? ", borrowed" : "") + ")");
  return Handover::Sent;
}

bool K8sAdapter::evict(const PodJob& j) {
  if (!fence_.may_send()) return false;
  // the pod's own grace period, bounded by its tenant's (grace.hpp)
  std::optional<std::int64_t> grace;
  if (const PodView* p = pod(j.uid)) grace = grace_.for_pod(*p);
  if (auto r = evict_pod(client_, j.ns, j.name, grace); !r) {
    if (r.error().not_found()) return true;  // gone already
    api_failed("evict_failed", j.ns + "/" + j.name, r.error());
    return false;
  }
  ++counters_.evictions;
  journal_.line("evict " + j.ns + "/" + j.name +
                (grace ? " grace_s=" + std::to_string(*grace) : std::string()));
  return true;
}

// A bound pod cannot be unbound: it is evicted (its controller makes a new one).
void K8sAdapter::take_back(JobId id) {
  PodJob& j = jobs_[id.index()];
  if (!j.bound_to.empty()) evict(j);
  j.start.reset();
}

void K8sAdapter::repeat_preempt(JobId id) {
  evict(jobs_[id.index()]);
}

bool K8sAdapter::preempt(JobId id, const driver::EngineJob&) {
  PodJob& j = jobs_[id.index()];
  if (!evict(j)) return false;
  if (const PodView* p = pod(j.uid))
    event(*p, "Normal", "Preempted", "Preempting",
          "DeepShare: evicted to give its tenant's GPUs back (the pod's controller recreates it)");
  return true;
}

bool K8sAdapter::reject(JobId id, const std::string& reason) {
  PodJob& j = jobs_[id.index()];
  rejected_.insert(j.uid);
  const PodView* p = pod(j.uid);
  if (!p) return false;
  tell(*p, reason, "FailedScheduling");
  return true;
}

}  // namespace ds::k8s
