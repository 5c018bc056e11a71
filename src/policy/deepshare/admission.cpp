#include "policy/deepshare/admission.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "policy/deepshare/assurance.hpp"

namespace ds::deepshare {

void Admission::entitled(Cycle& cy) {
  // Tenants with entitled jobs waiting, the lowest assurance first.
  std::vector<std::size_t> order(book_.entitled_tenants().begin(), book_.entitled_tenants().end());
  const Assurance& a = cy.assured();
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return a.value(x) < a.value(y); });
  for (std::size_t t : order) entitled_of(cy, t);
}

void Admission::entitled_of(Cycle& cy, std::size_t t) {
  const TenantBook& tb = book_.tenant(t);
  for (auto it = tb.entitled.begin(); it != tb.entitled.end();) {
    const JobSpec& j = cy.s.jobs[it->second.index()];
    ++it;  // the job may leave the queue below
    if (!book_.fits_quota(cy.s, j)) {
      note_wait(cy.out, j.id, WaitReason::Quota);
      break;
    }
    if (auto p = layout_.place_guaranteed(cy.free, j)) {
      runs_.start(cy, j, std::move(*p), Run::Guaranteed);
      continue;
    }
    if (try_share(cy, j)) continue;
    const Outcome o = reclaim_or_wait(cy, j);
    if (o == Outcome::Waiting) {
      note_wait(cy.out, j.id, WaitReason::Reclaim);
      break;  // keep submit order within the tenant
    }
    if (o == Outcome::NoRoom) note_wait(cy.out, j.id, room_reason(cy.free_gpus, j));
    // Started, or no reclaim can make room for it: later entitled jobs may still fit.
  }
}

// Entitled jobs outrank drains: the GPUs drains hold are theirs too.
void Admission::entitled_freed(Cycle& cy) {
  cy.free.give(cy.held, kMilliPerGpu);
  for (const auto& a : cy.held) cy.free_gpus += a.gpus();
  const std::vector<std::size_t> waiting(book_.entitled_tenants().begin(),
                                         book_.entitled_tenants().end());
  for (std::size_t t : waiting) {
    const TenantBook& tb = book_.tenant(t);
    for (auto it = tb.entitled.begin(); it != tb.entitled.end();) {
      const JobSpec& j = cy.s.jobs[it->second.index()];
      ++it;
      if (!book_.fits_quota(cy.s, j)) break;
      auto p = layout_.place_guaranteed(cy.free, j);
      if (!p) break;
      runs_.start(cy, j, std::move(*p), Run::Guaranteed);
    }
  }
  for (auto& a : cy.held) {  // hold again what is still free
    const Node& node = cy.s.cluster->nodes[a.node.index()];
    for (int k = 0; k < node.gpus; ++k)
      if (cy.free.free_milli(node.first_gpu + k) != kMilliPerGpu)
        a.gpu_mask &= ~(std::uint64_t{1} << k);
  }
  cy.free.take(cy.held, kMilliPerGpu);
  for (const auto& a : cy.held) cy.free_gpus -= a.gpus();
}

void Admission::within_quota(Cycle& cy) {
  const std::vector<std::size_t> waiting(book_.other_tenants().begin(),
                                         book_.other_tenants().end());
  for (std::size_t t : waiting) {
    if (!start_aged(cy, t)) continue;  // the tenant's quota drains for it
    if (book_.tenant(t).others.empty() || unchanged(marks_[t].quota, t))
      continue;  // nothing freed and nothing new since its last scan
    quota_of(cy, t);
    marks_[t].quota = ScanMark{true, book_.epoch(), book_.tenant(t).queue_epoch, 0, kNever};
  }
}

void Admission::quota_of(Cycle& cy, std::size_t t) {
  const ClusterSnapshot& s = cy.s;
  const TenantBook& tb = book_.tenant(t);
  // kScan bounds the jobs examined in vain; a start is bounded by the free GPUs (counting it
  // would leave GPUs freed in one cycle idle behind a deep queue until something changes).
  int scanned = 0, reclaims = 0;
  for (auto it = tb.others.begin(); it != tb.others.end() && scanned < kScan;) {
    const JobSpec& j = s.jobs[std::get<2>(*it).index()];
    ++it;
    // Quota still owed to queued entitled jobs is not available to others.
    if (tb.guaranteed + tb.queued_entitled + share(j) > quota(s, t)) {
      note_wait(cy.out, j.id,
                tb.guaranteed + share(j) > quota(s, t) ? WaitReason::Quota : WaitReason::Reserved);
      ++scanned;
      continue;
    }
    if (auto p = layout_.place_guaranteed(cy.free, j)) {
      runs_.start(cy, j, std::move(*p), Run::Guaranteed);
      continue;
    }
    ++scanned;
    // The owner's job fits its quota: it may take lent capacity back (issue #13), as
    // an entitled job may, from the time it queued.
    // A few reclaim attempts per tenant and cycle (each plans over all borrowers).
    const bool attempt = c_.reclaim_quota && reclaims < kReclaimAttempts;
    reclaims += attempt;
    const Outcome o = attempt ? reclaim_or_wait(cy, j) : Outcome::NoRoom;
    if (o != Outcome::Started)
      note_wait(cy.out, j.id,
                o == Outcome::Waiting ? WaitReason::Reclaim : room_reason(cy.free_gpus, j));
  }
}

// The tenant's longest-waiting other job that needs at most aging_max_share of its quota,
// once it waited past quota_aging_s, goes before shorter ones: it starts in quota
// (reclaiming borrowed GPUs if needed), or no other job of the tenant takes quota this
// cycle, so that finishing jobs free quota for it. Returns whether the tenant's other jobs
// may go. Larger jobs do not age: holding a tenant's quota back until half of it or more
// drains stalled every shorter job behind them (measured in docs/results.md, quota_aging
// column); they go by their predicted size or borrow.
bool Admission::start_aged(Cycle& cy, std::size_t t) {
  const ClusterSnapshot& s = cy.s;
  const TenantBook& tb = book_.tenant(t);
  if (tb.waiting.empty() || !c_.prediction || !c_.quota_aging)
    return true;  // FIFO order needs no aging
  const int q = quota(s, t);
  const double small = c_.aging_max_share * q;
  Time since = kNever;
  JobId id;
  int scanned = 0;
  for (auto it = tb.waiting.begin(); it != tb.waiting.end() && scanned < kScan; ++it, ++scanned)
    if (share(s.jobs[it->second.index()]) <= small) {
      std::tie(since, id) = *it;
      break;
    }
  if (!id.valid()) return true;  // no job small enough to age
  if (s.now - since < c_.quota_aging_s) {
    cy.wake_at(since + c_.quota_aging_s);
    return true;
  }
  const JobSpec& j = s.jobs[id.index()];
  if (tb.guaranteed + tb.queued_entitled + share(j) > q) {
    note_wait(cy.out, j.id, WaitReason::Quota);
    return false;
  }
  ScanMark& mark = marks_[t].aged;
  if (unchanged(mark, t)) return false;
  if (auto p = layout_.place_guaranteed(cy.free, j)) {
    runs_.start(cy, j, std::move(*p), Run::Guaranteed);
    return true;
  }
  const Outcome o = reclaim_or_wait(cy, j);
  if (o == Outcome::Started) return true;
  note_wait(cy.out, j.id,
            o == Outcome::Waiting ? WaitReason::Reclaim : room_reason(cy.free_gpus, j));
  mark = ScanMark{true, book_.epoch(), tb.queue_epoch, 0, kNever};
  return false;
}

struct Admission::Borrow {
  int available = 0;       // lendable capacity left (all idle quota while calm)
  int aged_available = 0;  // idle capacity left, reserves included
  bool calm = false;       // no present risk: every idle GPU is lent
  int headroom = 0;        // lendable share long jobs leave free
  int no_fit = std::numeric_limits<int>::max();  // fewest whole GPUs that found no room
};

void Admission::borrowed(Cycle& cy) {
  const Lendable& lent = cy.lent.value();
  const int borrowed = book_.borrowed_total();
  Borrow b;
  b.calm = c_.present_risk && !lent.present_risk;
  // Borrowers that waited past borrow_aging may use reserves too (so that no job
  // starves behind them); they stay preemptible, so a reserve returns by reclaim.
  b.aged_available = lent.idle - borrowed;
  b.available = b.calm ? b.aged_available : lent.lendable - borrowed;
  if (b.aged_available <= 0) return;
  auto blocked = [&](std::size_t t) {  // nothing freed, nothing new, no more to lend
    const ScanMark& mark = marks_[t].borrow;
    return unchanged(mark, t) && b.available <= mark.available && cy.s.now < mark.until;
  };
  std::vector<std::size_t> order;
  for (std::size_t t : book_.other_tenants())
    if (!blocked(t)) order.push_back(t);  // else as blocked as at its last scan
  auto borrowed_share = [&](std::size_t t) {
    return book_.tenant(t).borrowed / std::max(1e-9, cy.s.tenants[t].weight);
  };
  // In a tenant tree, idle quota goes inside the subtree first (model/tenant_tree.hpp, rule
  // 3): a borrower whose nearest group with idle guarantee is deeper comes first.
  std::vector<int> inside;  // empty: flat
  if (!book_.tree().flat()) {
    std::vector<std::int64_t> sub;
    book_.subtree_use(sub);
    inside.assign(cy.s.tenants.size(), 0);
    for (std::size_t t : order) inside[t] = book_.tree().inside_rank(t, sub);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    if (!inside.empty() && inside[x] != inside[y]) return inside[x] > inside[y];
    return borrowed_share(x) < borrowed_share(y);
  });
  b.headroom = static_cast<int>(std::ceil(lent.lendable * c_.long_job_headroom));
  for (std::size_t t : order)
    if (!blocked(t)) borrowed_of(cy, t, b);
  cy.borrow_room = std::max(0, b.available);  // what time slicing may still lend
}

void Admission::borrowed_of(Cycle& cy, std::size_t t, Borrow& b) {
  const ClusterSnapshot& s = cy.s;
  const TenantBook& tb = book_.tenant(t);
  Time until = kNever;
  // Starts count here (unlike quota_of): counting only failures made more best-effort work
  // borrow and be preempted (docs/deepshare.md, "Cost").
  int scanned = 0;
  for (auto it = tb.others.begin();
       it != tb.others.end() && scanned < kScan && b.aged_available > 0; ++scanned) {
    const JobSpec& j = s.jobs[std::get<2>(*it).index()];
    ++it;
    if (!j.preemptible) continue;  // could never be reclaimed
    const Time since = s.runtime[j.id.index()].queued_since;
    const bool aged = b.calm || s.now - since >= c_.borrow_aging;
    if (!aged && share(j) > b.available && share(j) <= b.aged_available) {
      cy.wake_at(since + c_.borrow_aging);  // eligible then
      until = std::min(until, since + c_.borrow_aging);
    }
    if (share(j) > (aged ? b.aged_available : b.available)) {
      // Idle quota exists but is held back (reserves), or there is none to lend.
      note_wait(cy.out, j.id,
                share(j) <= b.aged_available ? WaitReason::Reserved : WaitReason::NoFit);
      continue;
    }
    const bool long_job = c_.prediction && book_.job(j.id).predicted > c_.long_job;
    if (long_job && !b.calm && b.available - share(j) < b.headroom) {
      note_wait(cy.out, j.id, WaitReason::Reserved);
      continue;
    }
    const bool whole = j.gpu_milli == kMilliPerGpu;
    std::optional<Placement> p;
    // A job of a GPU model or node mask neither uses nor sets the memo: its failure says
    // nothing of others.
    const bool typed = constrained(j);
    if (!whole || typed || j.gpus < b.no_fit) p = place_job(cy.free, layout_.all_set(), j);
    if (p) {
      b.available -= share(j);
      b.aged_available -= share(j);
      runs_.start(cy, j, std::move(*p), Run::Borrowed);
    } else {
      if (whole && !typed) b.no_fit = std::min(b.no_fit, j.gpus);  // capacity only shrinks
      note_wait(cy.out, j.id, room_reason(cy.free_gpus, j));
    }
  }
  marks_[t].borrow = ScanMark{true, book_.epoch(), tb.queue_epoch, b.available, until};
}

}  // namespace ds::deepshare
