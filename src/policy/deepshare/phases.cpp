// The placement phases of the DeepShare policy (3-7 in deepshare.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "model/execution.hpp"
#include "policy/deepshare/policy_impl.hpp"
#include "policy/deepshare/reclaim.hpp"
#include "policy/deepshare/sharing.hpp"

namespace ds::deepshare {

int DeepSharePolicy::borrowed_total() const {
  return borrowed_sum_;
}

// Phase 5: each tenant's Lending, recomputed for the tenants whose inputs changed (and for
// all every assurance_refresh); the totals are kept as sums of the cached values.
void DeepSharePolicy::compute_lending(const ClusterSnapshot& s) {
  auto refresh = [&](std::size_t t) {
    TenantState& ts = tenants_[t];
    ts.lending_dirty = false;
    LendInputs in;
    in.quota = quota(s, t);
    in.unit = kMilliPerGpu;
    in.guaranteed = ts.guaranteed + ts.queued_entitled;  // quota owed to queued entitled jobs
    in.assurance = signal_.value(t);
    in.forecast_demand = std::min<double>(ts.forecast, in.quota);
    in.since_reclaim = s.now - ts.last_reclaim;
    lendable_sum_ -= ts.lend.lendable;
    idle_sum_ -= ts.lend.idle;
    ts.lend = lending(in, c_);
    lendable_sum_ += ts.lend.lendable;
    idle_sum_ += ts.lend.idle;
  };
  const bool all = s.now - lending_at_ >= c_.assurance_refresh;
  if (all) {
    lending_at_ = s.now;
    for (std::size_t t = 0; t < tenants_.size(); ++t) refresh(t);
  } else {
    for (std::size_t t : lending_dirty_)
      if (tenants_[t].lending_dirty) refresh(t);
  }
  lending_dirty_.clear();
  lendable_total_ = unowned_ + lendable_sum_;
  idle_total_ = unowned_ + idle_sum_;
  // Present risk: some tenant has entitled jobs waiting. Without it, every idle GPU is lent
  // at once (reserves protect against present risk, not forecasts; capacity a lender
  // needs later comes back by reclaim).
  present_risk_ = !entitled_tenants_.empty();
  // Each tenant's part of the borrowed GPUs, in proportion to what it lends (refreshed
  // with the rest: it feeds the assurance outlook).
  const int borrowed = borrowed_total();
  if (all)
    for (auto& ts : tenants_)
      ts.lent = lendable_total_ > 0
                    ? static_cast<double>(borrowed) * ts.lend.lendable / lendable_total_
                    : 0;
}

void DeepSharePolicy::place_entitled(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
  next_wake_ = kNever;
  // Tenants with entitled jobs waiting, the lowest assurance first.
  std::vector<std::size_t> order(entitled_tenants_.begin(), entitled_tenants_.end());
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return signal_.value(a) < signal_.value(b);
  });
  for (std::size_t t : order) {
    TenantState& ts = tenants_[t];
    for (auto it = ts.entitled.begin(); it != ts.entitled.end();) {
      const JobSpec& j = s.jobs[it->second.index()];
      ++it;  // the job may leave the queue below
      if (!fits_quota(s, j)) {
        note_wait(out, j.id, WaitReason::Quota);
        break;
      }
      if (auto p = place_guaranteed(free, j)) {
        start(s, free, out, j, std::move(*p), Run::Guaranteed);
        continue;
      }
      if (try_share(s, out, j)) continue;
      const Outcome o = reclaim_or_wait(s, free, out, j);
      if (o == Outcome::Waiting) {
        note_wait(out, j.id, WaitReason::Reclaim);
        break;  // keep submit order within the tenant
      }
      if (o == Outcome::NoRoom) note_wait(out, j.id, room_reason(free_gpus_, j));
      // Started, or no reclaim can make room for it: later entitled jobs may still fit.
    }
  }
}

// Phase 7b: GPUs that later phases freed (reclaims, slices, drains) go to waiting entitled
// jobs first, in each tenant's submit order.
// Entitled jobs outrank drains: the GPUs drains hold are theirs too.
void DeepSharePolicy::place_entitled_freed(const ClusterSnapshot& s, FreeMap& free,
                                           Decisions& out) {
  free.give(held_, kMilliPerGpu);
  for (const auto& a : held_) free_gpus_ += a.gpus();
  const std::vector<std::size_t> waiting(entitled_tenants_.begin(), entitled_tenants_.end());
  for (std::size_t t : waiting) {
    TenantState& ts = tenants_[t];
    for (auto it = ts.entitled.begin(); it != ts.entitled.end();) {
      const JobSpec& j = s.jobs[it->second.index()];
      ++it;
      if (!fits_quota(s, j)) break;
      auto p = place_guaranteed(free, j);
      if (!p) break;
      start(s, free, out, j, std::move(*p), Run::Guaranteed);
    }
  }
  for (auto& a : held_) {  // hold again what is still free
    const Node& node = s.cluster->nodes[a.node.index()];
    for (int k = 0; k < node.gpus; ++k)
      if (free.free_milli(node.first_gpu + k) != kMilliPerGpu)
        a.gpu_mask &= ~(std::uint64_t{1} << k);
  }
  free.take(held_, kMilliPerGpu);
  for (const auto& a : held_) free_gpus_ -= a.gpus();
}

// The predicted ends of the borrowed running jobs (now + remaining()) with their GPUs,
// computed once per cycle: a cycle may ask for them once per job that waits for reclaim
// (reclaim_or_wait), and the snapshot, hence every end, is fixed during the cycle. A
// borrower added or removed in the cycle (add_borrowed, remove_borrowed) clears them.
const std::vector<std::pair<Time, int>>& DeepSharePolicy::borrowed_ends(const ClusterSnapshot& s) {
  if (ends_cycle_ != cycles_) {
    ends_cycle_ = cycles_;
    borrowed_ends_.clear();
    for (const BorrowedRun& b : borrowed_runs_)
      borrowed_ends_.emplace_back(s.now + remaining(s.runtime[b.id.index()], s.now, b.predicted),
                                  b.gpus);
  }
  return borrowed_ends_;
}

// Phase 3, step "reclaim": wait for borrowers predicted to end before the deadline
// (reclaim_wait=on), else preempt the cheapest set that makes room.
DeepSharePolicy::Outcome DeepSharePolicy::reclaim_or_wait(const ClusterSnapshot& s, FreeMap& free,
                                                          Decisions& out, const JobSpec& j) {
  const Tenant& tenant = s.tenants[j.tenant.index()];
  // Entitled jobs count from submit; other jobs of the owner from when they queued.
  const JobState& js = job_[j.id.index()];
  const Time since = js.entitled ? j.submit : js.queued_since;
  const Time deadline = since + std::max<Time>(0, tenant.slo_queue - c_.deadline_margin);
  if (!c_.reclaim) return Outcome::Waiting;
  if (borrowed_running_.empty() && away_running_.empty()) return Outcome::NoRoom;
  const bool due = s.now >= deadline;
  const bool urgent = due || (c_.assurance && signal_.at_risk(j.tenant.index()));
  if (!urgent && c_.prediction && c_.reclaim_wait) {
    // Borrowed GPUs predicted to be released before the deadline.
    int soon = 0;
    Time first = kNever;
    for (const auto& [end, gpus] : borrowed_ends(s)) {
      if (end <= deadline) {
        soon += gpus;
        first = std::min(first, end);
      }
    }
    if (soon + free_gpus_ >= j.gpus) {
      ++waits_;
      next_wake_ = std::min({next_wake_, deadline, first});
      return Outcome::Waiting;
    }
  }
  // Victims: borrowers, and other tenants' guaranteed jobs away on this tenant's nodes.
  // Checkpoint-aware: until an entitled job's deadline (and always for other jobs, which
  // have no SLO) only victims that would lose at most slice_lost, i.e. right after their
  // checkpoint; the others are looked at again at their next checkpoint.
  const bool cheap_only = !js.entitled || !due;
  std::vector<Victim> candidates;
  auto consider = [&](JobId id) {
    const JobRuntime& r = s.runtime[id.index()];
    const JobState& vs = job_[id.index()];
    if (vs.run != Run::Borrowed && !vs.away) return;
    if (vs.away && s.jobs[id.index()].tenant == j.tenant) return;  // its own quota
    if (!due && s.now - r.last_start < c_.min_runtime) return;
    const JobId partner = vs.partner;  // a sharing pair goes together
    if (cheap_only && partner.valid() && lost_now(s, partner) > c_.slice_lost) return;
    // Not when preempted earlier in this cycle (perhaps restarted since).
    if (auto v = as_victim(s, id)) candidates.push_back(*v);
  };
  if (cheap_only) {
    for (const auto& e : window_)  // at their checkpoint (this run's entries only)
      if (job_[e.job.index()].run_id == e.run) consider(e.job);
  } else {
    for (const auto* set : {&borrowed_running_, &away_running_})
      for (JobId id : *set) consider(id);
  }
  // At its deadline an entitled job may also take its own tenant's jobs (the tenant's own
  // quota, spent on its SLO; e.g. shares of GPUs that borrowers cannot free alone).
  if (due && js.entitled && c_.time_slicing && !plan_home(free, j, candidates))
    for (JobId id : s.running) {
      const JobState& vs = job_[id.index()];
      const JobSpec& v = s.jobs[id.index()];
      const JobRuntime& r = s.runtime[id.index()];
      if (v.tenant != j.tenant || vs.run != Run::Guaranteed) continue;
      if (s.now - r.last_start < c_.min_runtime) continue;
      if (auto victim = as_victim(s, id)) candidates.push_back(*victim);
    }
  auto plan = plan_home(free, j, std::move(candidates));
  if (!plan) {
    if (due && js.entitled) return Outcome::NoRoom;
    next_wake_ = std::min({next_wake_, js.entitled ? deadline : kNever, next_cheap()});
    return Outcome::Waiting;
  }
  for (JobId v : plan->victims) {
    reclaim_lost_ += to_seconds(lost_now(s, v)) * s.jobs[v.index()].gpus;
    if (job_[v.index()].partner.valid())
      reclaim_lost_ += to_seconds(lost_now(s, job_[v.index()].partner)) * s.jobs[v.index()].gpus;
    preempt_victim(s, free, out, v);
    ++victims_;
  }
  ++reclaims_;
  tenants_[j.tenant.index()].last_reclaim = s.now;
  touch(j.tenant.index());
  start(s, free, out, j, std::move(plan->placement), Run::Guaranteed);
  return Outcome::Started;
}

void DeepSharePolicy::place_within_quota(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
  const std::vector<std::size_t> waiting(other_tenants_.begin(), other_tenants_.end());
  for (std::size_t t : waiting) {
    TenantState& ts = tenants_[t];
    if (!start_aged(s, free, out, t)) continue;  // the tenant's quota drains for it
    ScanMark& mark = ts.quota_scan;
    if (ts.others.empty() || (mark.valid && mark.epoch == epoch_ && mark.queue == ts.queue_epoch))
      continue;  // nothing freed and nothing new since its last scan
    int scanned = 0, reclaims = 0;
    for (auto it = ts.others.begin(); it != ts.others.end() && scanned < kScan; ++scanned) {
      const JobSpec& j = s.jobs[std::get<2>(*it).index()];
      ++it;
      // Quota still owed to queued entitled jobs is not available to others.
      if (ts.guaranteed + ts.queued_entitled + share(j) > quota(s, t)) {
        note_wait(
            out, j.id,
            ts.guaranteed + share(j) > quota(s, t) ? WaitReason::Quota : WaitReason::Reserved);
        continue;
      }
      if (auto p = place_guaranteed(free, j)) {
        start(s, free, out, j, std::move(*p), Run::Guaranteed);
        continue;
      }
      // The owner's job fits its quota: it may take lent capacity back (issue #13), as
      // an entitled job may, from the time it queued.
      // A few reclaim attempts per tenant and cycle (each plans over all borrowers).
      const bool attempt = c_.reclaim_quota && reclaims < kReclaimAttempts;
      reclaims += attempt;
      const Outcome o = attempt ? reclaim_or_wait(s, free, out, j) : Outcome::NoRoom;
      if (o != Outcome::Started)
        note_wait(out, j.id,
                  o == Outcome::Waiting ? WaitReason::Reclaim : room_reason(free_gpus_, j));
    }
    mark = ScanMark{true, epoch_, ts.queue_epoch, 0, kNever};
  }
}

// Phase 4, first step: the tenant's longest-waiting other job that needs at most
// aging_max_share of its quota, once it waited past quota_aging_s, goes before shorter
// ones: it starts in quota (reclaiming borrowed GPUs if needed), or no other job of the
// tenant takes quota this cycle, so that finishing jobs free quota for it. Returns whether
// the tenant's other jobs may go. Larger jobs do not age: holding a tenant's quota back
// until half of it or more drains stalled every shorter job behind them (measured in
// docs/results.md, quota_aging column); they go by their predicted size or borrow.
bool DeepSharePolicy::start_aged(const ClusterSnapshot& s, FreeMap& free, Decisions& out,
                                 std::size_t t) {
  TenantState& ts = tenants_[t];
  if (ts.waiting.empty() || !c_.prediction || !c_.quota_aging)
    return true;  // FIFO order needs no aging
  const int q = quota(s, t);
  const double small = c_.aging_max_share * q;
  Time since = kNever;
  JobId id;
  int scanned = 0;
  for (auto it = ts.waiting.begin(); it != ts.waiting.end() && scanned < kScan; ++it, ++scanned)
    if (share(s.jobs[it->second.index()]) <= small) {
      std::tie(since, id) = *it;
      break;
    }
  if (!id.valid()) return true;  // no job small enough to age
  if (s.now - since < c_.quota_aging_s) {
    next_wake_ = std::min(next_wake_, since + c_.quota_aging_s);
    return true;
  }
  const JobSpec& j = s.jobs[id.index()];
  if (ts.guaranteed + ts.queued_entitled + share(j) > q) {
    note_wait(out, j.id, WaitReason::Quota);
    return false;
  }
  ScanMark& mark = ts.aged_scan;
  if (mark.valid && mark.epoch == epoch_ && mark.queue == ts.queue_epoch) return false;
  if (auto p = place_guaranteed(free, j)) {
    start(s, free, out, j, std::move(*p), Run::Guaranteed);
    return true;
  }
  const Outcome o = reclaim_or_wait(s, free, out, j);
  if (o != Outcome::Started)
    note_wait(out, j.id, o == Outcome::Waiting ? WaitReason::Reclaim : room_reason(free_gpus_, j));
  if (o != Outcome::Started) mark = ScanMark{true, epoch_, ts.queue_epoch, 0, kNever};
  return o == Outcome::Started;
}

void DeepSharePolicy::place_borrowed(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
  borrow_room_ = 0;
  if (!c_.borrowing) return;
  const int borrowed = borrowed_total();
  const bool calm = c_.present_risk && !present_risk_;
  // Borrowers that waited past borrow_aging may use reserves too (so that no job
  // starves behind them); they stay preemptible, so a reserve returns by reclaim.
  int aged_available = idle_total_ - borrowed;
  int available = calm ? aged_available : lendable_total_ - borrowed;
  if (aged_available <= 0) return;
  std::vector<std::size_t> order;
  for (std::size_t t : other_tenants_) {
    const ScanMark& mark = tenants_[t].borrow_scan;
    if (!(mark.valid && mark.epoch == epoch_ && mark.queue == tenants_[t].queue_epoch &&
          available <= mark.available && s.now < mark.until))
      order.push_back(t);  // else as blocked as at its last scan (skipped below too)
  }
  auto borrowed_share = [&](std::size_t t) {
    return tenants_[t].borrowed / std::max(1e-9, s.tenants[t].weight);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return borrowed_share(a) < borrowed_share(b);
  });
  const int headroom = static_cast<int>(std::ceil(lendable_total_ * c_.long_job_headroom));
  int no_fit = std::numeric_limits<int>::max();  // fewest whole GPUs that found no room
  for (std::size_t t : order) {
    TenantState& ts = tenants_[t];
    ScanMark& mark = ts.borrow_scan;
    if (mark.valid && mark.epoch == epoch_ && mark.queue == ts.queue_epoch &&
        available <= mark.available && s.now < mark.until)
      continue;  // nothing freed, nothing new, no more to lend: as blocked as last time
    Time until = kNever;
    int scanned = 0;
    for (auto it = ts.others.begin();
         it != ts.others.end() && scanned < kScan && aged_available > 0; ++scanned) {
      const JobSpec& j = s.jobs[std::get<2>(*it).index()];
      ++it;
      if (!j.preemptible) continue;  // could never be reclaimed
      const Time since = s.runtime[j.id.index()].queued_since;
      const bool aged = calm || s.now - since >= c_.borrow_aging;
      if (!aged && share(j) > available && share(j) <= aged_available) {
        next_wake_ = std::min(next_wake_, since + c_.borrow_aging);  // eligible then
        until = std::min(until, since + c_.borrow_aging);
      }
      if (share(j) > (aged ? aged_available : available)) {
        // Idle quota exists but is held back (reserves), or there is none to lend.
        note_wait(out, j.id, share(j) <= aged_available ? WaitReason::Reserved : WaitReason::NoFit);
        continue;
      }
      const bool long_job = c_.prediction && job_[j.id.index()].predicted > c_.long_job;
      if (long_job && !calm && available - share(j) < headroom) {
        note_wait(out, j.id, WaitReason::Reserved);
        continue;
      }
      const bool whole = j.gpu_milli == kMilliPerGpu;
      std::optional<Placement> p;
      if (!whole || j.gpus < no_fit) p = place_job(free, all_set_, j);
      if (p) {
        available -= share(j);
        aged_available -= share(j);
        start(s, free, out, j, std::move(*p), Run::Borrowed);
      } else {
        // Capacity only shrinks in this phase; a job of a GPU model says nothing of others.
        if (whole && j.gpu_type.empty()) no_fit = std::min(no_fit, j.gpus);
        note_wait(out, j.id, room_reason(free_gpus_, j));
      }
    }
    mark = ScanMark{true, epoch_, ts.queue_epoch, available, until};
  }
  borrow_room_ = std::max(0, available);  // what time slicing may still lend
}

bool DeepSharePolicy::try_share(const ClusterSnapshot& s, Decisions& out, const JobSpec& j) {
  if (!c_.sharing || !model_ || j.gpu_memory_mib <= 0) return false;
  JobState& js = job_[j.id.index()];
  if (js.no_share) return false;
  // Probation: entitled jobs share only once the model passed probation.
  if (js.submit_entitled && on_probation()) return false;
  // A learned slowdown scale beyond every budget (no budget exceeds sharing_budget) leaves no
  // pair that fits: the model proved too optimistic, so no partner is scanned at all.
  if (slowdown_scale() > std::max(1.0, c_.sharing_budget)) return false;
  // Partners are looked at once per assurance refresh (budgets move with assurance): a job
  // whose try failed looks again, until the next refresh, only at the partners added since,
  // unless its own tenant's budget grew.
  auto it = exclusive_.find(j.gpus);
  if (it == exclusive_.end() || it->second.empty()) return false;
  const std::vector<JobId>& added = added_[j.gpus];
  // Sharing budgets of this cycle, computed for the tenants involved only.
  budgets_.resize(tenants_.size());
  budgets_at_.resize(tenants_.size(), -1);
  auto budget = [&](TenantId t) {
    if (budgets_at_[t.index()] != s.now) {
      budgets_[t.index()] =
          sharing_failed(t.index())
              ? 1.0
              : sharing_budget(s.tenants[t.index()], signal_.value(t.index()), c_);
      budgets_at_[t.index()] = s.now;
    }
  };
  budget(j.tenant);
  const double own = budgets_[j.tenant.index()];
  // Every partner again when its own budget grew since (as at a refresh).
  const bool again = js.tried_at == assurance_at_ && own <= js.tried_budget;
  if (again && js.tried_seen >= added.size()) return false;  // nothing new since
  std::vector<JobId> partners;
  auto consider = [&](JobId id) {
    // Preempted in this cycle (and perhaps restarted elsewhere): the snapshot still shows
    // its old GPUs, which another start of this cycle may now use.
    const JobState& ps = job_[id.index()];
    if (ps.preempted || ps.no_share) return;
    if (!drained_nodes_.empty())
      for (const auto& a : s.runtime[id.index()].placement)
        if (drained_nodes_[a.node.index()]) return;
    if (ps.submit_entitled && on_probation()) return;
    partners.push_back(id);
    budget(s.jobs[id.index()].tenant);
  };
  if (again) {
    for (std::size_t k = js.tried_seen;
         k < added.size() && static_cast<int>(partners.size()) < c_.partner_scan; ++k)
      if (it->second.contains(added[k]) &&
          std::find(partners.begin(), partners.end(), added[k]) == partners.end())
        consider(added[k]);
  } else {
    for (JobId id : it->second) {
      if (static_cast<int>(partners.size()) >= c_.partner_scan) break;
      consider(id);
    }
  }
  const double scale = slowdown_scale();
  auto choice = choose_partner(s, j, partners, budgets_, *model_, scale);
  if (!choice) {
    js.tried_at = assurance_at_;
    js.tried_seen = added.size();
    js.tried_budget = own;
    return false;
  }
  // An entitled job within its quota holds quota while it shares (not preemptible); a job
  // that cannot be preempted shares only so (once its partner ends it would be a borrower).
  const bool quota_counted = js.entitled && fits_quota(s, j);
  if (!quota_counted && !j.preemptible) return false;
  dequeue(j);
  js.run = Run::Shared;
  js.attained0 = s.runtime[j.id.index()].attained;
  js.started_at = s.now;
  js.prog_at = s.now;
  js.prog_speed = choice->speed / scale;  // until the next snapshot shows the observed rate
  js.model_speed = choice->speed;
  track_run(s, j.id);
  settle(choice->partner, s.now, choice->partner_speed / scale);
  job_[choice->partner.index()].model_speed = choice->partner_speed;
  speed_unknown_.push_back(j.id);
  speed_unknown_.push_back(choice->partner);
  js.quota_counted = quota_counted;
  if (js.quota_counted) tenants_[j.tenant.index()].guaranteed += share(j);
  js.entitled = false;
  js.partner = choice->partner;
  job_[choice->partner.index()].partner = j.id;
  exclusive_[j.gpus].erase(choice->partner);
  StartJob st{j.id, std::move(choice->placement)};
  st.borrowed = !js.quota_counted;
  st.shared = true;
  st.mps_thread_percent = choice->thread_percent;
  st.mps_memory_limit_mib = choice->memory_limit_mib;
  out.start.push_back(std::move(st));
  ++shared_starts_;
  return true;
}

void DeepSharePolicy::share(const ClusterSnapshot& s, Decisions& out) {
  if (!c_.sharing || !model_) return;
  // Partners that run now are new to every job (choose_partner skips those not running).
  std::erase_if(unlisted_, [&](JobId id) {
    if (s.runtime[id.index()].status != JobStatus::Running)
      return job_[id.index()].run == Run::None;
    added_[s.jobs[id.index()].gpus].push_back(id);
    return true;
  });
  // No new partner on nodes being drained (pair_victims): the drain takes their jobs.
  drained_nodes_.clear();
  if (c_.pair_victims && !draining_.empty()) {
    drained_nodes_.assign(s.cluster->nodes.size(), 0);
    for (std::size_t t : draining_)
      for (NodeId n : tenants_[t].drain->nodes) drained_nodes_[n.index()] = 1;
  }
  int budget = c_.sharing_scan;
  const std::vector<std::size_t> waiting(other_tenants_.begin(), other_tenants_.end());
  for (std::size_t k = 0; k < waiting.size() && budget > 0; ++k) {
    TenantState& ts = tenants_[waiting[k]];
    for (auto it = ts.others.begin(); it != ts.others.end() && budget > 0; --budget) {
      const JobSpec& j = s.jobs[std::get<2>(*it).index()];
      ++it;
      try_share(s, out, j);
    }
  }
}

}  // namespace ds::deepshare
