#include "policy/deepshare/runs.hpp"

#include <algorithm>
#include <cmath>

#include "model/execution.hpp"

namespace ds::deepshare {

namespace {

bool overlaps(const Placement& a, const Placement& b) {
  for (const auto& x : a)
    for (const auto& y : b)
      if (x.node == y.node && (x.gpu_mask & y.gpu_mask) != 0) return true;
  return false;
}

}  // namespace

void Runs::start(Cycle& cy, const JobSpec& j, Placement p, Run run) {
  const ClusterSnapshot& s = cy.s;
  cy.free.take(p, j.gpu_milli);
  if (j.gpu_milli == kMilliPerGpu) cy.free_gpus -= j.gpus;
  book_.dequeue(j);
  JobState& js = book_.job(j.id);
  js.entitled = false;  // its start was what entitlement promised; requeued, it is like others
  js.run = run;
  js.attained0 = s.runtime[j.id.index()].attained;
  js.started_at = s.now;
  js.prog_at = s.now;  // js.prog: kept progress (0 at first start)
  js.prog_speed = 1;
  TenantBook& t = book_.tenant(j.tenant.index());
  book_.touch(j.tenant.index());
  if (run == Run::Guaranteed) {
    t.guaranteed += share(j);
    js.away = layout_.is_away(s, j, p);
    if (js.away) book_.set_away(j.id, true);
  } else {
    book_.add_borrowed(s, j.id);
    ++tally_.borrowed_starts;
  }
  checkpoints_.track(s, j.id);  // after `away` is known
  alone(j);
  StartJob st{j.id, std::move(p)};
  st.borrowed = run == Run::Borrowed;
  if (j.gpu_milli < kMilliPerGpu) {
    // A fractional request is an MPS client limited to its share of SMs and memory.
    const Node& node = s.cluster->nodes[st.placement.front().node.index()];
    st.mps_thread_percent = std::max(1, (j.gpu_milli + 9) / 10);
    st.mps_memory_limit_mib = j.gpu_memory_mib > 0
                                  ? static_cast<std::int64_t>(std::ceil(j.gpu_memory_mib))
                                  : node.gpu_memory_mib * j.gpu_milli / kMilliPerGpu;
  }
  cy.out.start.push_back(std::move(st));
}

void Runs::join(Cycle& cy, const JobSpec& j, const ShareChoice& c, double scale,
                bool quota_counted) {
  const ClusterSnapshot& s = cy.s;
  book_.dequeue(j);
  JobState& js = book_.job(j.id);
  js.run = Run::Shared;
  js.attained0 = s.runtime[j.id.index()].attained;
  js.started_at = s.now;
  js.prog_at = s.now;
  js.prog_speed = c.speed / scale;  // until the next snapshot shows the observed rate
  checkpoints_.track(s, j.id);
  book_.settle(c.partner, s.now, c.partner_speed / scale);
  js.quota_counted = quota_counted;
  if (js.quota_counted) book_.tenant(j.tenant.index()).guaranteed += share(j);
  js.entitled = false;
  js.partner = c.partner;
  book_.job(c.partner).partner = j.id;
  not_alone(j.gpus, c.partner);
  StartJob st{j.id, c.placement};
  st.borrowed = !js.quota_counted;
  st.shared = true;
  st.mps_thread_percent = c.thread_percent;
  st.mps_memory_limit_mib = c.memory_limit_mib;
  cy.out.start.push_back(std::move(st));
}

void Runs::stopped(const ClusterSnapshot& s, JobId id) {
  book_.capacity_freed();
  book_.touch(s.jobs[id.index()].tenant.index());
  JobState& js = book_.job(id);
  const JobSpec& j = s.jobs[id.index()];
  TenantBook& t = book_.tenant(j.tenant.index());
  if (js.run == Run::Guaranteed || (js.run == Run::Shared && js.quota_counted))
    t.guaranteed -= share(j);
  if (js.away) book_.set_away(id, false);
  js.away = false;
  js.quota_counted = false;
  if (js.run == Run::Borrowed) book_.remove_borrowed(s, id);
  if (js.run != Run::None) not_alone(j.gpus, id);
  js.run = Run::None;
  if (!js.partner.valid()) return;
  // The partner runs alone again and may take a new partner. A job that was started
  // shared now holds the GPUs alone: account it like any other.
  const JobSpec& p = s.jobs[js.partner.index()];
  JobState& ps = book_.job(js.partner);
  ps.partner = JobId();
  if (ps.run != Run::None) book_.settle(p.id, s.now, 1.0);  // alone again: full speed
  if (ps.run == Run::Shared) {
    if (ps.quota_counted) {
      ps.run = Run::Guaranteed;  // its quota is already counted
      ps.quota_counted = false;
    } else {
      ps.run = Run::Borrowed;
      book_.add_borrowed(s, p.id);
    }
  }
  if (ps.run != Run::None) alone(p);
  js.partner = JobId();
}

void Runs::preempt(Cycle& cy, JobId v) {
  const ClusterSnapshot& s = cy.s;
  const JobSpec& vj = s.jobs[v.index()];
  JobState& vs = book_.job(v);
  const Time interval = s.tenants[vj.tenant.index()].checkpoint_interval;
  const double kept = checkpoint_kept(book_.progress(s, v), interval);
  // A shared job holds no GPUs of its own: the snapshot's free share of an oversubscribed
  // GPU is 0, and it becomes free when its partner leaves.
  if (vs.run != Run::Shared) {
    cy.free.give(s.runtime[v.index()].placement, vj.gpu_milli);
    if (vj.gpu_milli == kMilliPerGpu) cy.free_gpus += vj.gpus;
  }
  stopped(s, v);
  vs.prog = kept - static_cast<double>(restart_overhead(vj.gpus));
  vs.preempted = true;
  const JobRuntime& vr = s.runtime[v.index()];
  book_.enqueue(vj, s.now, vr.attained + (s.now - vr.last_start));
  cy.out.preempt.push_back({v});
  note_wait(cy.out, v, WaitReason::Priority);  // back in its queue (it may restart below)
}

void Runs::preempt_with_partner(Cycle& cy, JobId id) {
  const JobId partner = book_.job(id).partner;
  if (partner.valid()) preempt(cy, partner);  // holds no GPUs of its own: first
  preempt(cy, id);
}

void Runs::adopt(const ClusterSnapshot& s, JobId id, const Prediction& prediction) {
  const JobSpec& j = s.jobs[id.index()];
  const JobRuntime& r = s.runtime[id.index()];
  JobState& js = book_.job(id);
  if (js.queued) book_.dequeue(j);
  if (js.run != Run::None) return;
  if (js.predicted == 0) js.predicted = prediction.predict(j);
  js.prog = static_cast<double>(r.attained + (s.now - r.last_start)) * r.speed;  // best guess
  js.prog_at = s.now;
  js.prog_speed = r.speed;
  js.attained0 = r.attained;
  checkpoints_.track(s, id);
  if (!js.partner.valid()) {
    for (JobId other : s.running) {
      if (other == id || book_.job(other).partner.valid()) continue;
      if (!overlaps(r.placement, s.runtime[other.index()].placement)) continue;
      js.partner = other;
      book_.job(other).partner = id;
      not_alone(s.jobs[other.index()].gpus, other);
      break;
    }
  }
  if (r.shared) {
    js.run = Run::Shared;
    return;
  }
  if (r.borrowed) {
    js.run = Run::Borrowed;
    js.started_at = r.last_start;
    book_.add_borrowed(s, id);
  } else {
    js.run = Run::Guaranteed;
    book_.tenant(j.tenant.index()).guaranteed += share(j);
  }
  if (!js.partner.valid()) alone(j);
}

std::optional<Victim> Runs::as_victim(const ClusterSnapshot& s, JobId id) const {
  const JobState& vs = book_.job(id);
  const JobRuntime& r = s.runtime[id.index()];
  if (vs.run == Run::None || vs.run == Run::Shared || vs.preempted ||
      r.status != JobStatus::Running || !s.jobs[id.index()].preemptible)
    return std::nullopt;
  Victim v{id, book_.cost_of(s, id), r.last_start, &r.placement, s.jobs[id.index()].gpu_milli};
  if (vs.partner.valid()) {
    const JobId p = vs.partner;
    if (s.runtime[p.index()].status != JobStatus::Running || book_.job(p).preempted ||
        !s.jobs[p.index()].preemptible)
      return std::nullopt;          // a partner started this cycle, or one that cannot be preempted
    v.cost += book_.cost_of(s, p);  // its GPUs free when it leaves with the pair
  }
  return v;
}

bool Runs::pair_victim(const ClusterSnapshot& s, JobId id, double lost_share) const {
  const JobId p = book_.job(id).partner;
  if (!c_.pair_victims || !p.valid() || book_.job(p).run != Run::Shared || book_.job(p).preempted ||
      !s.jobs[p.index()].preemptible || s.runtime[p.index()].status != JobStatus::Running)
    return false;
  const Time interval = s.tenants[s.jobs[p.index()].tenant.index()].checkpoint_interval;
  return static_cast<double>(book_.lost_now(s, p)) <= lost_share * static_cast<double>(interval);
}

}  // namespace ds::deepshare
