// DeepShare's placement steps over the tenants' queues: entitled jobs, jobs within their
// tenant's quota, borrowed jobs on lent capacity, and the GPUs later steps freed.
//
// Algorithm (docs/deepshare.md, "The parts and the cycle"):
//  - entitled: tenants in ascending A_t; each tenant's entitled jobs in submit order: start
//    at home (else away) on free GPUs; else share a GPU; else wait for borrowers or reclaim
//    (Reclaimer). A waiting job keeps the tenant's later entitled jobs behind it; a job that
//    no reclaim can place does not.
//  - quota: the tenant's other pending jobs that fit its quota not owed to queued entitled
//    jobs, by queue key, start guaranteed; such a job may reclaim (reclaim_quota, a few
//    attempts per tenant and cycle). Quota aging first: the longest-waiting job of at most
//    aging_max_share of the quota, once it waited quota_aging_s, starts or holds the
//    tenant's quota back for itself.
//  - borrowed: tenants by weighted borrowed share, jobs by key, on lent capacity
//    (Cycle::lent); long jobs only while lendable headroom remains; jobs waiting past
//    borrow_aging may use reserves.
//  - freed: GPUs that later steps freed (reclaims, slices, drains, and those drains hold) go
//    to waiting entitled jobs first.
// A tenant's scan that found nothing is not repeated until capacity is freed (Book::epoch),
// its queue changes, lent capacity grows or time makes a job eligible.
#pragma once

#include <cstdint>
#include <vector>

#include "policy/deepshare/book.hpp"
#include "policy/deepshare/colocation.hpp"
#include "policy/deepshare/cycle.hpp"
#include "policy/deepshare/handle.hpp"
#include "policy/deepshare/layout.hpp"
#include "policy/deepshare/reclaimer.hpp"
#include "policy/deepshare/runs.hpp"

namespace ds::deepshare {

class Admission : private Handle {
 public:
  // `colocation`, `reclaimer`: null while sharing, reclaim are off.
  Admission(const Handle& h, Colocation* colocation, Reclaimer* reclaimer)
      : Handle(h), colocation_(colocation), reclaimer_(reclaimer), marks_(book_.tenants()) {}
  void entitled(Cycle& cy);
  void within_quota(Cycle& cy);
  void borrowed(Cycle& cy);
  void entitled_freed(Cycle& cy);

 private:
  // What a tenant's last scan saw: nothing to retry until capacity is freed (`epoch`), its
  // queue changes, lent capacity grows or time makes a job eligible.
  struct ScanMark {
    bool valid = false;
    std::uint64_t epoch = 0, queue = 0;
    int available = 0;
    Time until = kNever;
  };
  struct TenantMarks {
    ScanMark quota, borrow, aged;
  };
  static constexpr int kReclaimAttempts = 2;  // in-quota reclaims tried per tenant and cycle

  [[nodiscard]] bool unchanged(const ScanMark& m, std::size_t t) const {
    return m.valid && m.epoch == book_.epoch() && m.queue == book_.tenant(t).queue_epoch;
  }
  bool try_share(Cycle& cy, const JobSpec& j) {
    return colocation_ && colocation_->try_share(cy, j);
  }
  Outcome reclaim_or_wait(Cycle& cy, const JobSpec& j) {
    return reclaimer_ ? reclaimer_->reclaim_or_wait(cy, j) : Outcome::Waiting;
  }
  void entitled_of(Cycle& cy, std::size_t t);
  void quota_of(Cycle& cy, std::size_t t);
  bool start_aged(Cycle& cy, std::size_t t);
  struct Borrow;  // what the borrowed step has left to lend, across tenants
  void borrowed_of(Cycle& cy, std::size_t t, Borrow& b);

  Colocation* colocation_;
  Reclaimer* reclaimer_;
  std::vector<TenantMarks> marks_;
};

}  // namespace ds::deepshare
