#include "policy/deepshare/drain.hpp"

#include <algorithm>

namespace ds::deepshare {

namespace {

bool touches_any(const Placement& p, const std::vector<NodeId>& nodes) {
  for (const auto& a : p)
    if (std::find(nodes.begin(), nodes.end(), a.node) != nodes.end()) return true;
  return false;
}

}  // namespace

Drains::Drains(const Handle& h, std::size_t nodes)
    : Handle(h),
      drain_(book_.tenants()),
      tried_(book_.tenants(), ~std::uint64_t{0}),
      drained_(nodes, 0) {}

bool Drains::on_drained_nodes(const Placement& p) const {
  if (drained_count_ == 0) return false;
  for (const auto& a : p)
    if (drained_[a.node.index()]) return true;
  return false;
}

void Drains::begin(std::size_t t, Drain d) {
  for (NodeId n : d.nodes) drained_count_ += drained_[n.index()]++ == 0;
  drain_[t] = std::move(d);
  draining_.insert(t);
}

void Drains::end(std::size_t t) {
  for (NodeId n : drain_[t]->nodes) drained_count_ -= --drained_[n.index()] == 0;
  drain_[t].reset();
  draining_.erase(t);
  book_.capacity_freed();  // its nodes are free for others again
}

// Borrowers and other tenants' jobs away on its nodes once they ran min_runtime; its own
// guaranteed jobs as time slicing takes them (no longer fresh, a slice_min run).
bool Drains::drainable(const ClusterSnapshot& s, JobId v, TenantId t) const {
  const JobState& vs = book_.job(v);
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

void Drains::run(Cycle& cy) {
  const ClusterSnapshot& s = cy.s;
  const std::vector<std::size_t> draining(draining_.begin(), draining_.end());
  for (std::size_t t : draining) {
    const Drain& d = *drain_[t];
    const JobSpec& j = s.jobs[d.job.index()];
    const Time interval = std::max<Time>(s.tenants[t].checkpoint_interval, c_.min_runtime);
    if (!book_.job(d.job).queued || s.now - d.since > 2 * interval) {
      end(t);
      continue;
    }
    // Step 2: preempt what is cheap now (right after its checkpoint).
    cy.wake_at(checkpoints_.next_cheap());
    take_cheap(cy, d, j.tenant);
    const TenantBook& tb = book_.tenant(t);
    if (tb.guaranteed + tb.queued_entitled + share(j) <= quota(s, t))
      if (auto p = place_job(cy.free, d.nodes, j)) {
        runs_.start(cy, j, std::move(*p), Run::Guaranteed);
        ++tally_.drains;
        end(t);
        continue;
      }
    hold(cy, d);
    note_wait(cy.out, j.id, WaitReason::Reclaim);
  }
}

// The jobs on the drain's nodes that are at their checkpoint go (with pair_victims, a pair
// at its host's checkpoint, or its joiner alone at its own).
void Drains::take_cheap(Cycle& cy, const Drain& d, TenantId t) {
  const ClusterSnapshot& s = cy.s;
  for (const auto& e : checkpoints_.window()) {
    const JobId id = e.job;
    const JobState& vs = book_.job(id);
    if (vs.run_id != e.run) continue;  // an earlier run (collect drops it later)
    if (vs.run == Run::None || vs.preempted) continue;
    if (!touches_any(s.runtime[id.index()].placement, d.nodes)) continue;
    if (vs.run == Run::Shared) {
      // pair_victims: a joiner at its checkpoint leaves its host (it holds no GPUs; the
      // host goes alone at its own checkpoint and takes no new partner on the nodes).
      const JobId host = vs.partner;
      if (!c_.pair_victims || !host.valid() || !drainable(s, id, t) || !drainable(s, host, t) ||
          s.runtime[host.index()].status != JobStatus::Running)
        continue;
      tally_.drain_lost += to_seconds(book_.lost_now(s, id)) * s.jobs[id.index()].gpus;
      runs_.preempt(cy, id);
      ++tally_.drain_victims;
      continue;
    }
    if (!drainable(s, id, t)) continue;
    const JobId partner = vs.partner;
    // A partner that started this cycle is not running yet: leave the pair for later.
    if (partner.valid() &&
        (!drainable(s, partner, t) || s.runtime[partner.index()].status != JobStatus::Running))
      continue;
    // Both members at a checkpoint at once, or (pair_victims) at its host's while its
    // joiner would lose at most pair_lost of its interval.
    if (partner.valid() && book_.lost_now(s, partner) > c_.slice_lost &&
        !runs_.pair_victim(s, id, c_.pair_lost))
      continue;
    if (partner.valid()) {  // a shared partner holds no GPUs: it goes first
      tally_.drain_lost += to_seconds(book_.lost_now(s, partner)) * s.jobs[partner.index()].gpus;
      runs_.preempt(cy, partner);
    }
    tally_.drain_lost += to_seconds(book_.lost_now(s, id)) * s.jobs[id.index()].gpus;
    runs_.preempt(cy, id);
    ++tally_.drain_victims;
  }
}

// Holds the nodes' free GPUs for the job.
void Drains::hold(Cycle& cy, const Drain& d) {
  Placement held;
  for (NodeId n : d.nodes) {
    const Node& node = cy.s.cluster->nodes[n.index()];
    NodeAlloc a{n, 0};
    for (int k = 0; k < node.gpus; ++k)
      if (cy.free.free_milli(node.first_gpu + k) == kMilliPerGpu)
        a.gpu_mask |= std::uint64_t{1} << k;
    if (a.gpu_mask) held.push_back(a);
  }
  cy.free.take(held, kMilliPerGpu);
  for (const auto& a : held) cy.free_gpus -= a.gpus();
  cy.held.insert(cy.held.end(), held.begin(), held.end());
}

void Drains::start(Cycle& cy) {
  for (std::size_t t : book_.other_tenants()) start_for(cy, t);  // (no queue changes here)
}

// Step 1, for tenant t.
void Drains::start_for(Cycle& cy, std::size_t t) {
  // Jobs become drainable as they run: retried when some job reached its checkpoint.
  if (drain_[t] || book_.tenant(t).waiting.empty() || tried_[t] == checkpoints_.window_epoch())
    return;
  tried_[t] = checkpoints_.window_epoch();
  const JobSpec* j = drain_job(cy.s, t);
  if (!j) return;
  auto d = pick_nodes(cy.s, *j);
  if (!d) return;
  begin(t, std::move(*d));
  cy.wake_at(cy.s.now + kSecond);  // begin at once
}

// The longest-waiting job of at least a node's GPUs (a few are looked at).
const JobSpec* Drains::drain_job(const ClusterSnapshot& s, std::size_t t) const {
  const TenantBook& tb = book_.tenant(t);
  const int node_size = layout_.node_size();
  int looked = 0;
  for (auto it = tb.waiting.begin(); it != tb.waiting.end() && looked < kScan; ++it, ++looked) {
    if (s.now - it->first < c_.drain_after) break;
    const JobSpec& c = s.jobs[it->second.index()];
    if (c.gpus < node_size || tb.queued_entitled + share(c) > quota(s, t)) continue;
    if (book_.job(c.id).key >= kLongRun) continue;  // fresh jobs only, as time slicing
    return &c;
  }
  return nullptr;
}

// Nodes at home whose jobs may all go, fewest busy GPUs first; none unless the job's tenant's
// quota fits it (it runs guaranteed) once its own jobs on the nodes have left.
std::optional<Drains::Drain> Drains::pick_nodes(const ClusterSnapshot& s, const JobSpec& j) const {
  const std::size_t t = j.tenant.index();
  const int node_size = layout_.node_size();
  std::vector<int> busy(s.cluster->nodes.size(), 0);
  std::vector<char> blocked(s.cluster->nodes.size(), 0);
  for (JobId id : s.running) {
    const bool ok = drainable(s, id, j.tenant) && book_.job(id).run != Run::None;
    for (const auto& a : s.runtime[id.index()].placement) {
      busy[a.node.index()] += a.gpus();
      if (!ok) blocked[a.node.index()] = 1;
    }
  }
  std::vector<std::pair<int, NodeId>> nodes;
  for (NodeId n : layout_.home(t)) {
    const Node& node = s.cluster->nodes[n.index()];
    // Only nodes of a GPU model the job accepts (issue #28): a drain of others would hold
    // GPUs it can never use.
    if (!blocked[n.index()] && node.gpus == node_size && accepts_node(j, n, node.gpu_type))
      nodes.emplace_back(busy[n.index()], n);
  }
  const std::size_t need = static_cast<std::size_t>((j.gpus + node_size - 1) / node_size);
  if (nodes.size() < need) return std::nullopt;
  std::partial_sort(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(need), nodes.end());
  Drain d{j.id, {}, s.now};
  for (std::size_t k = 0; k < need; ++k) d.nodes.push_back(nodes[k].second);
  int own = 0;
  for (JobId id : s.running)
    if (s.jobs[id.index()].tenant == j.tenant && book_.job(id).run == Run::Guaranteed)
      for (const auto& a : s.runtime[id.index()].placement)
        if (std::find(d.nodes.begin(), d.nodes.end(), a.node) != d.nodes.end())
          own += a.gpus() * s.jobs[id.index()].gpu_milli;
  const TenantBook& tb = book_.tenant(t);
  if (tb.guaranteed - own + tb.queued_entitled + share(j) > quota(s, t)) return std::nullopt;
  return d;
}

}  // namespace ds::deepshare
