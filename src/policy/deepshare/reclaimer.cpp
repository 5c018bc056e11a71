#include "policy/deepshare/reclaimer.hpp"

#include <algorithm>

#include "policy/deepshare/assurance.hpp"

namespace ds::deepshare {

const std::vector<std::pair<Time, int>>& Reclaimer::borrowed_ends(const Cycle& cy) {
  if (ends_cycle_ != cy.number || ends_version_ != book_.borrowed_version()) {
    ends_cycle_ = cy.number;
    ends_version_ = book_.borrowed_version();
    ends_.clear();
    for (const BorrowedRun& b : book_.borrowed_runs())
      ends_.emplace_back(
          cy.s.now + Book::remaining(cy.s.runtime[b.id.index()], cy.s.now, b.predicted), b.gpus);
  }
  return ends_;
}

Outcome Reclaimer::reclaim_or_wait(Cycle& cy, const JobSpec& j) {
  const ClusterSnapshot& s = cy.s;
  const Tenant& tenant = s.tenants[j.tenant.index()];
  // Entitled jobs count from submit; other jobs of the owner from when they queued.
  const JobState& js = book_.job(j.id);
  Need need;
  const Time since = js.entitled ? j.submit : js.queued_since;
  need.deadline = since + std::max<Time>(0, tenant.slo_queue - c_.deadline_margin);
  if (book_.borrowed_running().empty() && book_.away_running().empty()) return Outcome::NoRoom;
  need.due = s.now >= need.deadline;
  const bool urgent = need.due || (c_.assurance && cy.assured().at_risk(j.tenant.index()));
  if (!urgent && c_.prediction && c_.reclaim_wait && wait_for_ends(cy, j, need.deadline))
    return Outcome::Waiting;
  need.cheap_only = !js.entitled || !need.due;
  std::vector<Victim> candidates = victims(cy, j, need);
  auto plan = layout_.plan_home(cy.free, book_, j, std::move(candidates));
  if (!plan) {
    if (need.due && js.entitled) return Outcome::NoRoom;
    cy.wake_at(std::min(js.entitled ? need.deadline : kNever, checkpoints_.next_cheap()));
    return Outcome::Waiting;
  }
  take(cy, j, *plan);
  return Outcome::Started;
}

// Borrowed GPUs predicted to be released before the deadline.
bool Reclaimer::wait_for_ends(Cycle& cy, const JobSpec& j, Time deadline) {
  int soon = 0;
  Time first = kNever;
  for (const auto& [end, gpus] : borrowed_ends(cy)) {
    if (end <= deadline) {
      soon += gpus;
      first = std::min(first, end);
    }
  }
  if (soon + cy.free_gpus < j.gpus) return false;
  ++tally_.reclaim_waits;
  cy.wake_at(std::min(deadline, first));
  return true;
}

std::vector<Victim> Reclaimer::victims(Cycle& cy, const JobSpec& j, const Need& need) {
  const ClusterSnapshot& s = cy.s;
  std::vector<Victim> out;
  // In a tenant tree, only borrowers whose groups took more than their guarantee up to where
  // they meet the claimant (model/tenant_tree.hpp, rule 2).
  const TenantTree& tree = book_.tree();
  std::vector<std::int64_t> sub;
  if (!tree.flat()) book_.subtree_use(sub);
  auto consider = [&](JobId id) {
    const JobRuntime& r = s.runtime[id.index()];
    const JobState& vs = book_.job(id);
    if (vs.run != Run::Borrowed && !vs.away) return;
    if (!tree.flat() && vs.run == Run::Borrowed &&
        !tree.may_reclaim(j.tenant.index(), s.jobs[id.index()].tenant.index(), sub))
      return;
    if (vs.away && s.jobs[id.index()].tenant == j.tenant) return;  // its own quota
    if (!need.due && s.now - r.last_start < c_.min_runtime) return;
    const JobId partner = vs.partner;  // a sharing pair goes together
    if (need.cheap_only && partner.valid() && book_.lost_now(s, partner) > c_.slice_lost) return;
    // Not when preempted earlier in this cycle (perhaps restarted since).
    if (auto v = runs_.as_victim(s, id)) out.push_back(*v);
  };
  if (need.cheap_only) {
    for (const auto& e : checkpoints_.window())  // at their checkpoint (this run's entries only)
      if (book_.job(e.job).run_id == e.run) consider(e.job);
  } else {
    for (const auto* set : {&book_.borrowed_running(), &book_.away_running()})
      for (JobId id : *set) consider(id);
  }
  // At its deadline an entitled job may also take its own tenant's jobs (the tenant's own
  // quota, spent on its SLO; e.g. shares of GPUs that borrowers cannot free alone).
  if (need.due && book_.job(j.id).entitled && c_.time_slicing &&
      !layout_.plan_home(cy.free, book_, j, out))
    for (JobId id : s.running) {
      const JobState& vs = book_.job(id);
      const JobRuntime& r = s.runtime[id.index()];
      if (s.jobs[id.index()].tenant != j.tenant || vs.run != Run::Guaranteed) continue;
      if (s.now - r.last_start < c_.min_runtime) continue;
      if (auto victim = runs_.as_victim(s, id)) out.push_back(*victim);
    }
  return out;
}

void Reclaimer::take(Cycle& cy, const JobSpec& j, ReclaimPlan& plan) {
  const ClusterSnapshot& s = cy.s;
  for (JobId v : plan.victims) {
    tally_.reclaim_lost += to_seconds(book_.lost_now(s, v)) * s.jobs[v.index()].gpus;
    if (book_.job(v).partner.valid())
      tally_.reclaim_lost +=
          to_seconds(book_.lost_now(s, book_.job(v).partner)) * s.jobs[v.index()].gpus;
    runs_.preempt_with_partner(cy, v);
    ++tally_.reclaim_victims;
  }
  ++tally_.reclaims;
  lender_.reclaimed(j.tenant.index(), s.now);
  runs_.start(cy, j, std::move(plan.placement), Run::Guaranteed);
}

}  // namespace ds::deepshare
