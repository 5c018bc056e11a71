// Phase 4b of the DeepShare policy: checkpoint-aware draining of nodes for a wide job.
//
// Assumptions: a job that needs whole nodes (at least a node's GPUs) almost never finds
// them free on a busy cluster, since smaller jobs take every GPU that frees up; preempting
// all the jobs on its nodes at once would lose up to a checkpoint interval of work on each.
// A job preempted right after its checkpoint loses almost nothing.
//
// Algorithm (one drain per tenant at a time):
//  1. Start: the tenant's longest-waiting fresh pending job of at least a node's GPUs that has
//     waited drain_after picks the nodes at home that are cheapest to drain: nodes whose
//     every job may be preempted for it (its tenant's own, borrowed, or other tenants' jobs
//     away on its nodes), fewest busy GPUs first; only when its tenant's quota (less the
//     quota owed to queued entitled jobs) fits it once its own jobs there have left.
//  2. Every cycle (after entitled jobs, which may still use the nodes' free GPUs): each
//     job on the nodes is preempted once it would lose at most slice_lost (right after
//     a checkpoint); with pair_victims, a sharing pair goes whole once its host is at its
//     checkpoint and its joiner would lose at most pair_lost of its interval, else the joiner
//     goes alone at its own checkpoint (the host then alone at its own); no job joins a host
//     on the nodes meanwhile (share()). A wake-up is asked for at the next checkpoint. When the job
//     fits on the nodes and its quota it starts there, guaranteed. Until then the nodes' free GPUs
//     are held: no other job starts on them.
//  3. The drain ends when its job has started, or left the queue, or after two intervals
//     (a job on the nodes that may not be preempted, e.g. one started there shared).
#include <algorithm>

#include "policy/deepshare/policy_impl.hpp"

namespace ds::deepshare {

namespace {

bool touches_any(const Placement& p, const std::vector<NodeId>& nodes) {
  for (const auto& a : p)
    if (std::find(nodes.begin(), nodes.end(), a.node) != nodes.end()) return true;
  return false;
}

}  // namespace

// May `v` be preempted to make room for tenant t's job on t's nodes?
// Borrowers and other tenants' jobs away on its nodes once they ran min_runtime; its own
// guaranteed jobs as time slicing takes them (no longer fresh, a slice_min run).
bool DeepSharePolicy::drainable(const ClusterSnapshot& s, JobId v, TenantId t) const {
  const JobState& vs = job_[v.index()];
  const JobRuntime& r = s.runtime[v.index()];
  if (vs.preempted || r.status != JobStatus::Running || !s.jobs[v.index()].preemptible)
    return false;
  const Time ran = s.now - r.last_start;
  const bool own = s.jobs[v.index()].tenant == t;
  const bool quota_held = vs.run == Run::Guaranteed || (vs.run == Run::Shared && vs.quota_counted);
  if (vs.run == Run::None) return false;
  if (!quota_held || (vs.away && !own)) return ran >= c_.min_runtime;
  if (!own) return false;
  const double gpus = static_cast<double>(share(s.jobs[v.index()])) / kMilliPerGpu;
  return to_seconds(r.attained + ran) * gpus >= c_.fresh_gpu_s &&
         ran >= std::max(c_.min_runtime, c_.slice_min);
}

void DeepSharePolicy::run_drains(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
  held_.clear();
  if (!c_.time_slicing) return;
  const std::vector<std::size_t> draining(draining_.begin(), draining_.end());
  for (std::size_t t : draining) {
    TenantState& ts = tenants_[t];
    Drain& d = *ts.drain;
    const JobSpec& j = s.jobs[d.job.index()];
    const Time interval = std::max<Time>(s.tenants[t].checkpoint_interval, c_.min_runtime);
    if (!job_[d.job.index()].queued || s.now - d.since > 2 * interval) {
      ts.drain.reset();
      draining_.erase(t);
      ++epoch_;  // its nodes are free for others again
      continue;
    }
    // Step 2: preempt what is cheap now (right after its checkpoint).
    next_wake_ = std::min(next_wake_, next_cheap());
    for (const auto& e : window_) {
      const JobId id = e.job;
      const JobState& vs = job_[id.index()];
      if (vs.run_id != e.run) continue;  // an earlier run (collect_checkpoints drops it later)
      if (vs.run == Run::None || vs.preempted) continue;
      if (!touches_any(s.runtime[id.index()].placement, d.nodes)) continue;
      if (vs.run == Run::Shared) {
        // pair_victims: a joiner at its checkpoint leaves its host (it holds no GPUs; the
        // host goes alone at its own checkpoint and takes no new partner on the nodes).
        const JobId host = vs.partner;
        if (!c_.pair_victims || !host.valid() || !drainable(s, id, j.tenant) ||
            !drainable(s, host, j.tenant) || s.runtime[host.index()].status != JobStatus::Running)
          continue;
        drain_lost_ += to_seconds(lost_now(s, id)) * s.jobs[id.index()].gpus;
        preempted(s, free, out, id);
        ++drain_victims_;
        continue;
      }
      if (!drainable(s, id, j.tenant)) continue;
      const JobId partner = vs.partner;
      // A partner that started this cycle is not running yet: leave the pair for later.
      if (partner.valid() && (!drainable(s, partner, j.tenant) ||
                              s.runtime[partner.index()].status != JobStatus::Running))
        continue;
      // Both members at a checkpoint at once, or (pair_victims) at its host's while its
      // joiner would lose at most pair_lost of its interval.
      if (partner.valid() && lost_now(s, partner) > c_.slice_lost &&
          !pair_victim(s, id, c_.pair_lost))
        continue;
      if (partner.valid()) {  // a shared partner holds no GPUs: it goes first
        drain_lost_ += to_seconds(lost_now(s, partner)) * s.jobs[partner.index()].gpus;
        preempted(s, free, out, partner);
      }
      drain_lost_ += to_seconds(lost_now(s, id)) * s.jobs[id.index()].gpus;
      preempted(s, free, out, id);
      ++drain_victims_;
    }
    if (ts.guaranteed + ts.queued_entitled + share(j) <= quota(s, t))
      if (auto p = place_job(free, d.nodes, j)) {
        start(s, free, out, j, std::move(*p), Run::Guaranteed);
        ++drains_;
        ts.drain.reset();
        draining_.erase(t);
        ++epoch_;
        continue;
      }
    // Hold the nodes' free GPUs for the job.
    Placement held;
    for (NodeId n : d.nodes) {
      const Node& node = s.cluster->nodes[n.index()];
      NodeAlloc a{n, 0};
      for (int k = 0; k < node.gpus; ++k)
        if (free.free_milli(node.first_gpu + k) == kMilliPerGpu)
          a.gpu_mask |= std::uint64_t{1} << k;
      if (a.gpu_mask) held.push_back(a);
    }
    free.take(held, kMilliPerGpu);
    for (const auto& a : held) free_gpus_ -= a.gpus();
    held_.insert(held_.end(), held.begin(), held.end());
    note_wait(out, j.id, WaitReason::Reclaim);
  }
}

// Step 1, for tenant t (from make_room, after the placement phases).
void DeepSharePolicy::start_drain(const ClusterSnapshot& s, std::size_t t) {
  TenantState& ts = tenants_[t];
  // Jobs become drainable as they run: retried when some job reached its checkpoint.
  if (ts.drain || ts.waiting.empty() || ts.drain_epoch == window_epoch_) return;
  ts.drain_epoch = window_epoch_;
  // The longest-waiting job of at least a node's GPUs (a few are looked at).
  const JobSpec* j = nullptr;
  int looked = 0;
  for (auto it = ts.waiting.begin(); it != ts.waiting.end() && looked < kScan; ++it, ++looked) {
    if (s.now - it->first < c_.drain_after) break;
    const JobSpec& c = s.jobs[it->second.index()];
    if (c.gpus < node_size_ || ts.queued_entitled + share(c) > quota(s, t)) continue;
    if (job_[c.id.index()].key >= kLongRun) continue;  // fresh jobs only, as time slicing
    j = &c;
    break;
  }
  if (!j) return;
  // Nodes at home whose jobs may all go, fewest busy GPUs first.
  const auto& home = home_[t];
  std::vector<int> busy(s.cluster->nodes.size(), 0);
  std::vector<char> blocked(s.cluster->nodes.size(), 0);
  for (JobId id : s.running) {
    const bool ok = drainable(s, id, j->tenant) && job_[id.index()].run != Run::None;
    for (const auto& a : s.runtime[id.index()].placement) {
      busy[a.node.index()] += a.gpus();
      if (!ok) blocked[a.node.index()] = 1;
    }
  }
  std::vector<std::pair<int, NodeId>> nodes;
  for (NodeId n : home)
    if (!blocked[n.index()] && s.cluster->nodes[n.index()].gpus == node_size_)
      nodes.emplace_back(busy[n.index()], n);
  const std::size_t need = static_cast<std::size_t>((j->gpus + node_size_ - 1) / node_size_);
  if (nodes.size() < need) return;
  std::partial_sort(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(need), nodes.end());
  Drain d{j->id, {}, s.now};
  for (std::size_t k = 0; k < need; ++k) d.nodes.push_back(nodes[k].second);
  // The job runs guaranteed: its tenant's quota must fit it once its own jobs on the
  // nodes have left.
  int own = 0;
  for (JobId id : s.running)
    if (s.jobs[id.index()].tenant == j->tenant && job_[id.index()].run == Run::Guaranteed)
      for (const auto& a : s.runtime[id.index()].placement)
        if (std::find(d.nodes.begin(), d.nodes.end(), a.node) != d.nodes.end())
          own += a.gpus() * s.jobs[id.index()].gpu_milli;
  if (ts.guaranteed - own + ts.queued_entitled + share(*j) > quota(s, t)) return;
  ts.drain = std::move(d);
  draining_.insert(t);
  next_wake_ = std::min(next_wake_, s.now + kSecond);  // begin at once
}

}  // namespace ds::deepshare
