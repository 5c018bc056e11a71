// DeepShare's sharing part: interference-aware MPS colocation of pending jobs with running
// ones (the rule of one pair is in sharing.hpp), with what it learns from observed speeds.
//
// Algorithm (docs/deepshare.md, "Interference-aware MPS colocation"):
//  1. observe (first step of a cycle): a job whose partner came last cycle now shows its
//     observed rate; the ratio of observed to predicted slowdown is learned, and its error
//     feeds probation. A pair observed beyond a member's bound is marked to be split.
//  2. split_pairs (after the entitled step): the joiner of each marked pair is preempted at
//     once while it loses at most slice_lost (it just joined: nearly nothing), else at its
//     next checkpoint; its partner runs alone again, and it never shares again.
//  3. try_share (entitled step, step "share"): partners of the job's GPU count, once per
//     assurance refresh (a failed try looks again only at partners added since, unless its
//     tenant's budget grew); budgets scale with assurance; a learned slowdown scale beyond
//     every budget stops sharing outright.
//  4. share (last placement step): pending jobs that are not entitled, at most sharing_scan.
// Probation: a tenant's sharing starts on probation, where only jobs that are not entitled
// at submit share (on either side); after probation_pairs observed shared jobs of any tenant
// it ends, and sharing turns off for good for the cluster (or one tenant) whose mean
// observed-minus-predicted slowdown exceeds probation_error.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "policy/deepshare/book.hpp"
#include "policy/deepshare/checkpoints.hpp"
#include "policy/deepshare/cycle.hpp"
#include "policy/deepshare/handle.hpp"
#include "policy/deepshare/partners.hpp"
#include "policy/deepshare/runs.hpp"
#include "policy/deepshare/tally.hpp"
#include "policy/interference/interference.hpp"

namespace ds::deepshare {

class Drains;

// Probation of the interference model (one for the cluster: the model is one for all pairs).
class Probation {
 public:
  Probation(const Config& c, std::size_t tenants) : c_(c), tenant_(tenants) {}
  void observed(std::size_t t, double error);  // observed minus predicted slowdown
  [[nodiscard]] bool on() const { return c_.probation && all_.n < c_.probation_pairs; }
  [[nodiscard]] bool failed(std::size_t t) const;

 private:
  struct Count {
    int n = 0;
    double error = 0;
  };
  bool failed(const Count& k) const;
  const Config& c_;
  Count all_;
  std::vector<Count> tenant_;
};

// What summary.json reports of sharing (the values without a sharing part as defaults).
struct SharingSummary {
  std::size_t observations = 0;
  double ratio = 1, scale = 1;
  double failed_tenants = 0;
  double cv_mae = -1;
  bool model = false;
  void write(std::map<std::string, double>& out) const;
};

class Colocation : private Handle {
 public:
  // `drains`: null without time slicing.
  Colocation(const Handle& h, std::unique_ptr<InterferenceModel> model, double cv_mae,
             Partners& partners, const Drains* drains);
  void observe(Cycle& cy);      // step 1
  void split_pairs(Cycle& cy);  // step 2
  bool try_share(Cycle& cy, const JobSpec& j);
  void share(Cycle& cy);  // step 4
  void forget(JobId id) { job_.reset(id); }
  [[nodiscard]] SharingSummary summary() const;

 private:
  struct JobSharing {
    // Its last failed try: at which assurance refresh, how many partners of its GPU count
    // had been added by then (only those added since are new to it), its tenant's budget.
    Time tried_at = kNever;
    std::size_t tried_seen = 0;
    double tried_budget = 0;
    double model_speed = 0;  // the model's speed for the pair it just joined (0: none)
    bool no_share = false;   // split from a pair: never shares again
  };
  // Sharing backs off when jobs run slower shared than the model predicts.
  [[nodiscard]] double slowdown_scale() const;
  // This cycle's sharing budget of tenant t (computed once per time).
  double budget(const Cycle& cy, TenantId t) {
    if (budgets_at_[t.index()] != cy.s.now) compute_budget(cy, t);
    return budgets_[t.index()];
  }
  void compute_budget(const Cycle& cy, TenantId t);
  void candidates(const Cycle& cy, const JobSpec& j, bool again, std::vector<JobId>& out);

  std::unique_ptr<InterferenceModel> model_;
  double model_cv_mae_;
  Partners& partners_;
  const Drains* drains_;
  PerJob<JobSharing> job_;
  Probation probation_;
  std::vector<JobId> speed_unknown_;                     // started or joined sharing last cycle
  std::vector<std::pair<JobId, std::uint64_t>> splits_;  // joiners to split (job, its run)
  // Observed / predicted slowdown of shared jobs: its mean scales predicted slowdowns once
  // it exceeds the model's cross-validated error.
  double ratio_sum_ = 0;
  std::size_t ratio_n_ = 0;
  std::vector<double> budgets_;
  std::vector<Time> budgets_at_;      // per tenant: when its budget was computed
  std::vector<JobId> partners_seen_;  // scratch of try_share
};

}  // namespace ds::deepshare
