// Phase 6b of the DeepShare policy: time slicing of long-running work.
//
// Assumptions: run times are heavy-tailed, so a job that has already run far longer than a
// pending job is predicted to run will most likely still run far longer (least attained
// service first, as Tiresias, but with predictions and checkpoints). A preemption right
// after a checkpoint loses almost nothing but the restart overhead. A tenant's quota is
// its own: it may slice its own guaranteed jobs, never another tenant's; borrowed work
// is preemptible by anyone.
//
// Algorithm:
//  1. Candidates: running jobs that hold their GPUs (alone, or as the host of a sharing
//     pair: pair_victims) that have run at least slice_min (their attained service) and at
//     least slice_past x their own prediction, and would lose at most slice_lost of work if
//     preempted now. Those that would lose more become candidates at their next checkpoint
//     (a wake-up is asked for when a job waits for one). A host goes with its joiner
//     when the joiner has run as long and would lose at most pair_lost of its checkpoint
//     interval (pair_victims); the joiner's work since its own checkpoint counts in the cost.
//  2. Pending fresh jobs that are not entitled (those reclaim, phase 3): of each tenant
//     that has victims to take, its first by predicted GPU time and its longest-waiting;
//     tenants in turn from a rotating start, at most slice_attempts attempts per cycle.
//  3. For a pending job j predicted to run p: victims are the candidates that have run at
//     least slice_ratio x p — borrowed ones of any tenant, guaranteed ones of j's tenant —
//     and the cheapest set that lets j place is chosen (plan_reclaim, cost = lost work +
//     restart overhead, in GPU-seconds).
//  4. j runs guaranteed (at home) when its tenant's quota, less its own victims, fits it
//     (and the quota owed to queued entitled jobs); otherwise borrowed (anywhere, borrowed
//     victims only) when the lent capacity left, plus its victims', fits it.
#include <algorithm>
#include <cmath>

#include "policy/deepshare/policy_impl.hpp"
#include "policy/deepshare/reclaim.hpp"

namespace ds::deepshare {

void DeepSharePolicy::make_room(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
  if (!c_.time_slicing) return;
  // Step 1: among the jobs at their checkpoint (checkpoints.cpp).
  const std::vector<std::size_t> waiting(other_tenants_.begin(), other_tenants_.end());
  for (std::size_t t : waiting) start_drain(s, t);
  // Nothing to slice for when no waiting tenant has a fresh job (step 2 would find none).
  const bool fresh = std::any_of(waiting.begin(), waiting.end(), [&](std::size_t t) {
    const TenantState& ts = tenants_[t];
    return !ts.others.empty() && std::get<0>(*ts.others.begin()) < kLongRun;
  });
  if (!fresh) return;
  std::vector<JobId> candidates;
  for (const auto& e : window_) {
    const JobId id = e.job;
    const JobState& js = job_[id.index()];
    if (js.run_id != e.run) continue;  // an earlier run
    if ((js.run != Run::Guaranteed && js.run != Run::Borrowed) || js.preempted) continue;
    // A host goes with its joiner: both must be long-running work.
    if (js.partner.valid() && (!pair_victim(s, id, c_.pair_lost) || !long_running(s, js.partner)))
      continue;
    if (long_running(s, id)) candidates.push_back(id);
  }
  const Time soonest = next_cheap();
  if (candidates.empty() && soonest == kNever) return;
  // Step 2: per tenant that has victims to take (borrowers anywhere; its own guaranteed
  // jobs; others' jobs away on its nodes), its first fresh job by predicted GPU time and
  // its longest-waiting fresh job; tenants in turn from a rotating start, at most
  // slice_attempts attempts per cycle.
  bool any_lent = false, any_away = false;
  std::vector<char>& own = own_victims_;  // all clear between calls
  own.resize(tenants_.size(), 0);
  std::vector<std::size_t> marked;
  for (JobId id : candidates) {
    const JobState& js = job_[id.index()];
    any_lent = any_lent || js.run == Run::Borrowed;
    any_away = any_away || js.away;
    const std::size_t t = s.jobs[id.index()].tenant.index();
    if (js.run == Run::Guaranteed && !own[t]) {
      own[t] = 1;
      marked.push_back(t);
    }
  }
  int attempts = 0;
  bool blocked = false;
  const std::size_t n = waiting.size();
  for (std::size_t k = 0; k < n && attempts < c_.slice_attempts; ++k) {
    const std::size_t t = waiting[(k + cycles_) % n];
    const TenantState& ts = tenants_[t];
    if (ts.others.empty() || std::get<0>(*ts.others.begin()) >= kLongRun) continue;  // no fresh job
    blocked = true;  // a fresh job waits: look again when a victim reaches its checkpoint
    if (!(any_lent || any_away || own[t])) continue;
    JobId first, oldest;
    for (auto it = ts.others.begin(); it != ts.others.end() && !first.valid(); ++it) {
      if (std::get<0>(*it) >= kLongRun) break;  // only fresh jobs slice
      first = std::get<2>(*it);
    }
    int looked = 0;
    for (auto it = ts.waiting.begin(); it != ts.waiting.end() && looked < kScan; ++it, ++looked)
      if (job_[it->second.index()].key < kLongRun) {
        oldest = it->second;
        break;
      }
    for (JobId id : {first, oldest}) {
      if (!id.valid() || !job_[id.index()].queued) continue;  // none, or started just now
      // Failed before, and no job has reached its checkpoint since: no new victims.
      if (job_[id.index()].slice_epoch == window_epoch_) continue;
      ++attempts;
      if (!slice_for(s, free, out, s.jobs[id.index()], candidates))
        job_[id.index()].slice_epoch = window_epoch_;
    }
  }
  for (std::size_t t : marked) own[t] = 0;
  if (blocked) next_wake_ = std::min(next_wake_, soonest);
}

// Not fresh any more, and each run gets at least slice_min (a checkpoint interval): no job
// is sliced twice in quick succession; with slice_past, past that share of its prediction.
bool DeepSharePolicy::long_running(const ClusterSnapshot& s, JobId id) const {
  const JobRuntime& r = s.runtime[id.index()];
  const Time attained = r.attained + (s.now - r.last_start);
  const double gpus = static_cast<double>(share(s.jobs[id.index()])) / kMilliPerGpu;
  if (to_seconds(attained) * gpus < c_.fresh_gpu_s ||
      s.now - r.last_start < std::max(c_.min_runtime, c_.slice_min))
    return false;
  return !(c_.slice_past > 0 && c_.prediction &&
           static_cast<double>(attained) <
               c_.slice_past * static_cast<double>(job_[id.index()].predicted));
}

bool DeepSharePolicy::slice_for(const ClusterSnapshot& s, FreeMap& free, Decisions& out,
                                const JobSpec& j, std::span<const JobId> candidates) {
  const std::size_t t = j.tenant.index();
  const TenantState& ts = tenants_[t];
  const double limit = c_.slice_ratio * static_cast<double>(job_[j.id.index()].predicted);
  // Step 3: victims for a guaranteed start (at home; j's own guaranteed jobs may go when j
  // fits its quota in their place), else for a borrowed one (anywhere; borrowed victims).
  for (const Run run : {Run::Guaranteed, Run::Borrowed}) {
    if (run == Run::Guaranteed && ts.queued_entitled + share(j) > quota(s, t)) continue;
    if (run == Run::Borrowed && !c_.borrowing) continue;
    std::vector<Victim> victims;
    for (JobId id : candidates) {
      const JobState& vs = job_[id.index()];
      if (vs.run != Run::Guaranteed && vs.run != Run::Borrowed) continue;  // preempted already
      const JobSpec& v = s.jobs[id.index()];
      if (!v.preemptible) continue;
      // Guaranteed victims: j's tenant's own jobs, and others' jobs away on its nodes
      // (plan_home plans on its nodes only), for a guaranteed start.
      if (vs.run == Run::Guaranteed &&
          (run != Run::Guaranteed || (v.tenant != j.tenant && !vs.away)))
        continue;
      // A victim on more nodes than j needs: its GPUs would go to others than j, and it
      // would wait long to gather its nodes again.
      if (v.gpus > std::max(j.gpus, node_size_)) continue;
      const JobRuntime& r = s.runtime[id.index()];
      if (static_cast<double>(r.attained + (s.now - r.last_start)) < limit) continue;
      double cost = cost_of(s, id);
      if (const JobId p = vs.partner; p.valid()) {
        // Its joiner goes too: never another tenant's job that holds its quota.
        if (job_[p.index()].quota_counted && s.jobs[p.index()].tenant != j.tenant) continue;
        cost += cost_of(s, p);
      }
      victims.push_back(Victim{id, cost, r.last_start, &r.placement, v.gpu_milli});
    }
    if (victims.empty()) continue;
    auto plan = run == Run::Guaranteed ? plan_home(free, j, std::move(victims))
                                       : plan_reclaim(free, nodes_, j, std::move(victims));
    if (!plan) continue;
    // Step 4.
    int own = 0, lent = 0;
    for (JobId v : plan->victims) {
      const JobState& vs = job_[v.index()];
      if (vs.run == Run::Borrowed) lent += share(s.jobs[v.index()]);
      if (vs.run == Run::Guaranteed && s.jobs[v.index()].tenant == j.tenant)
        own += share(s.jobs[v.index()]);
      if (vs.partner.valid() && job_[vs.partner.index()].quota_counted)
        own += share(s.jobs[vs.partner.index()]);  // its tenant's (j's): checked above
    }
    if (run == Run::Guaranteed && ts.guaranteed - own + ts.queued_entitled + share(j) > quota(s, t))
      continue;
    if (run == Run::Borrowed && share(j) > borrow_room_ + lent) continue;
    for (JobId v : plan->victims) {
      slice_lost_ += to_seconds(lost_now(s, v)) * s.jobs[v.index()].gpus;
      if (const JobId p = job_[v.index()].partner; p.valid())
        slice_lost_ += to_seconds(lost_now(s, p)) * s.jobs[p.index()].gpus;
      preempt_victim(s, free, out, v);  // with its joiner
      ++slice_victims_;
    }
    if (run == Run::Borrowed) borrow_room_ += lent - share(j);
    ++slices_;
    start(s, free, out, j, std::move(plan->placement), run);
    return true;
  }
  return false;
}

}  // namespace ds::deepshare
