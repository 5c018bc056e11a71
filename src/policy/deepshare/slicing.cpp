#include "policy/deepshare/slicing.hpp"

#include <algorithm>
#include <cmath>

namespace ds::deepshare {

void Slicer::make_room(Cycle& cy) {
  const std::vector<std::size_t> waiting(book_.other_tenants().begin(),
                                         book_.other_tenants().end());
  // Nothing to slice for when no waiting tenant has a fresh job (step 2 would find none).
  const bool fresh = std::any_of(waiting.begin(), waiting.end(), [&](std::size_t t) {
    const TenantBook& tb = book_.tenant(t);
    return !tb.others.empty() && std::get<0>(*tb.others.begin()) < kLongRun;
  });
  if (!fresh) return;
  const std::vector<JobId> found = candidates(cy.s);
  const Time soonest = checkpoints_.next_cheap();
  if (found.empty() && soonest == kNever) return;
  // A fresh job waits: look again when a victim reaches its checkpoint.
  if (attempts(cy, waiting, found)) cy.wake_at(soonest);
}

// Step 1: among the jobs at their checkpoint (Checkpoints::window).
std::vector<JobId> Slicer::candidates(const ClusterSnapshot& s) const {
  std::vector<JobId> out;
  for (const auto& e : checkpoints_.window()) {
    const JobId id = e.job;
    const JobState& js = book_.job(id);
    if (js.run_id != e.run) continue;  // an earlier run
    if ((js.run != Run::Guaranteed && js.run != Run::Borrowed) || js.preempted) continue;
    // A host goes with its joiner: both must be long-running work.
    if (js.partner.valid() &&
        (!runs_.pair_victim(s, id, c_.pair_lost) || !long_running(s, js.partner)))
      continue;
    if (long_running(s, id)) out.push_back(id);
  }
  return out;
}

// Step 2: per tenant that has victims to take (borrowers anywhere; its own guaranteed jobs;
// others' jobs away on its nodes), its first fresh job by predicted GPU time and its
// longest-waiting fresh job; tenants in turn from a rotating start, at most slice_attempts
// attempts per cycle.
bool Slicer::attempts(Cycle& cy, std::span<const std::size_t> waiting,
                      std::span<const JobId> candidates) {
  bool any_lent = false, any_away = false;
  std::vector<char>& own = own_;  // all clear between calls
  own.resize(book_.tenants(), 0);
  std::vector<std::size_t> marked;
  for (JobId id : candidates) {
    const JobState& js = book_.job(id);
    any_lent = any_lent || js.run == Run::Borrowed;
    any_away = any_away || js.away;
    const std::size_t t = cy.s.jobs[id.index()].tenant.index();
    if (js.run == Run::Guaranteed && !own[t]) {
      own[t] = 1;
      marked.push_back(t);
    }
  }
  int attempts = 0;
  bool blocked = false;
  const std::size_t n = waiting.size();
  for (std::size_t k = 0; k < n && attempts < c_.slice_attempts; ++k) {
    const std::size_t t = waiting[(k + cy.number) % n];
    const TenantBook& tb = book_.tenant(t);
    if (tb.others.empty() || std::get<0>(*tb.others.begin()) >= kLongRun) continue;  // none fresh
    blocked = true;
    if (!(any_lent || any_away || own[t])) continue;
    JobId first, oldest;
    for (auto it = tb.others.begin(); it != tb.others.end() && !first.valid(); ++it) {
      if (std::get<0>(*it) >= kLongRun) break;  // only fresh jobs slice
      first = std::get<2>(*it);
    }
    int looked = 0;
    for (auto it = tb.waiting.begin(); it != tb.waiting.end() && looked < kScan; ++it, ++looked)
      if (book_.job(it->second).key < kLongRun) {
        oldest = it->second;
        break;
      }
    for (JobId id : {first, oldest}) {
      if (!id.valid() || !book_.job(id).queued) continue;  // none, or started just now
      // Failed before, and no job has reached its checkpoint since: no new victims.
      if (tried_[id] == checkpoints_.window_epoch()) continue;
      ++attempts;
      if (!slice_for(cy, cy.s.jobs[id.index()], candidates))
        tried_[id] = checkpoints_.window_epoch();
    }
  }
  for (std::size_t t : marked) own[t] = 0;
  return blocked;
}

// Not fresh any more, and each run gets at least slice_min (a checkpoint interval): no job
// is sliced twice in quick succession; with slice_past, past that share of its prediction.
bool Slicer::long_running(const ClusterSnapshot& s, JobId id) const {
  const JobRuntime& r = s.runtime[id.index()];
  const Time attained = r.attained + (s.now - r.last_start);
  const double gpus = static_cast<double>(share(s.jobs[id.index()])) / kMilliPerGpu;
  if (to_seconds(attained) * gpus < c_.fresh_gpu_s ||
      s.now - r.last_start < std::max(c_.min_runtime, c_.slice_min))
    return false;
  return !(c_.slice_past > 0 && c_.prediction &&
           static_cast<double>(attained) <
               c_.slice_past * static_cast<double>(book_.job(id).predicted));
}

// Step 3: victims for a guaranteed start of j (at home; j's own guaranteed jobs and others'
// jobs away on its nodes may go) or a borrowed one (anywhere; borrowed victims).
std::vector<Victim> Slicer::victims(const ClusterSnapshot& s, const JobSpec& j, Run run,
                                    std::span<const JobId> candidates) const {
  const double limit = c_.slice_ratio * static_cast<double>(book_.job(j.id).predicted);
  std::vector<Victim> out;
  for (JobId id : candidates) {
    const JobState& vs = book_.job(id);
    if (vs.run != Run::Guaranteed && vs.run != Run::Borrowed) continue;  // preempted already
    const JobSpec& v = s.jobs[id.index()];
    if (!v.preemptible) continue;
    // Guaranteed victims: j's tenant's own jobs, and others' jobs away on its nodes
    // (plan_home plans on its nodes only), for a guaranteed start.
    if (vs.run == Run::Guaranteed && (run != Run::Guaranteed || (v.tenant != j.tenant && !vs.away)))
      continue;
    // A victim on more nodes than j needs: its GPUs would go to others than j, and it
    // would wait long to gather its nodes again.
    if (v.gpus > std::max(j.gpus, layout_.node_size())) continue;
    const JobRuntime& r = s.runtime[id.index()];
    if (static_cast<double>(r.attained + (s.now - r.last_start)) < limit) continue;
    double cost = book_.cost_of(s, id);
    if (const JobId p = vs.partner; p.valid()) {
      // Its joiner goes too: never another tenant's job that holds its quota.
      if (book_.job(p).quota_counted && s.jobs[p.index()].tenant != j.tenant) continue;
      cost += book_.cost_of(s, p);
    }
    out.push_back(Victim{id, cost, r.last_start, &r.placement, v.gpu_milli});
  }
  return out;
}

bool Slicer::slice_for(Cycle& cy, const JobSpec& j, std::span<const JobId> candidates) {
  const std::size_t t = j.tenant.index();
  const TenantBook& tb = book_.tenant(t);
  for (const Run run : {Run::Guaranteed, Run::Borrowed}) {
    if (run == Run::Guaranteed && tb.queued_entitled + share(j) > quota(cy.s, t)) continue;
    if (run == Run::Borrowed && !c_.borrowing) continue;
    std::vector<Victim> victims = this->victims(cy.s, j, run, candidates);
    if (victims.empty()) continue;
    auto plan = run == Run::Guaranteed
                    ? layout_.plan_home(cy.free, book_, j, std::move(victims))
                    : plan_reclaim(cy.free, layout_.nodes(), j, std::move(victims));
    if (plan && take(cy, j, run, *plan)) return true;
  }
  return false;
}

// Step 4: whether j's quota (guaranteed) or the lent capacity left (borrowed) fits it with
// the plan's victims gone; if so they go and j starts.
bool Slicer::take(Cycle& cy, const JobSpec& j, Run run, ReclaimPlan& plan) {
  const ClusterSnapshot& s = cy.s;
  const std::size_t t = j.tenant.index();
  const TenantBook& tb = book_.tenant(t);
  int own = 0, lent = 0;
  for (JobId v : plan.victims) {
    const JobState& vs = book_.job(v);
    if (vs.run == Run::Borrowed) lent += share(s.jobs[v.index()]);
    if (vs.run == Run::Guaranteed && s.jobs[v.index()].tenant == j.tenant)
      own += share(s.jobs[v.index()]);
    if (vs.partner.valid() && book_.job(vs.partner).quota_counted)
      own += share(s.jobs[vs.partner.index()]);  // its tenant's (j's): checked in victims()
  }
  if (run == Run::Guaranteed && tb.guaranteed - own + tb.queued_entitled + share(j) > quota(s, t))
    return false;
  if (run == Run::Borrowed && share(j) > cy.borrow_room + lent) return false;
  for (JobId v : plan.victims) {
    tally_.slice_lost += to_seconds(book_.lost_now(s, v)) * s.jobs[v.index()].gpus;
    if (const JobId p = book_.job(v).partner; p.valid())
      tally_.slice_lost += to_seconds(book_.lost_now(s, p)) * s.jobs[p.index()].gpus;
    runs_.preempt_with_partner(cy, v);
    ++tally_.slice_victims;
  }
  if (run == Run::Borrowed) cy.borrow_room += lent - share(j);
  ++tally_.slices;
  runs_.start(cy, j, std::move(plan.placement), run);
  return true;
}

}  // namespace ds::deepshare
