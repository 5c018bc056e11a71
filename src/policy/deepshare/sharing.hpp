// Interference-aware MPS colocation: which running job a pending job may share
// its GPUs with, and with which MPS settings.
//
// Algorithm (docs/deepshare.md):
//  1. Budget of a tenant: no sharing below sharing_min_assurance; above it the largest
//     tolerated predicted slowdown grows linearly with A up to min(sharing_budget, the
//     tenant's own bound) at A = 1 (fixed at that value when assurance coupling is off).
//  2. Candidates: running jobs alone on their GPUs with the same GPU count (so the new
//     job takes exactly the partner's GPUs, at most two jobs per GPU, as Lucid pairs).
//  3. Feasible: both jobs' memory fits every shared GPU, and both predicted slowdowns
//     (1 / predicted speed, times the slowdown ratio learned from observed speeds) are
//     within their tenants' budgets.
//  4. Choose the feasible partner with the highest predicted combined speed (ties: the
//     lowest job id).
//  5. MPS: the new client gets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = its share of the pair's
//     SM demand + 10 points (10..100), and a memory limit of its own footprint.
#pragma once

#include <optional>
#include <span>

#include "model/snapshot.hpp"
#include "policy/deepshare/config.hpp"
#include "policy/interference/interference.hpp"

namespace ds::deepshare {

// Largest predicted slowdown tenant `t` accepts now (1.0: no sharing).
double sharing_budget(const Tenant& t, double assurance, const Config& c);

struct ShareChoice {
  JobId partner;
  Placement placement;
  double speed = 1;          // predicted speed of the new job
  double partner_speed = 1;  // predicted speed of the partner
  int thread_percent = 100;
  std::int64_t memory_limit_mib = 0;
};

// `budgets[t]` is sharing_budget for tenant t; `partners` the candidate running jobs;
// `slowdown_scale` multiplies every predicted slowdown (observed / predicted, >= 1). The
// speeds of the choice are the model's.
std::optional<ShareChoice> choose_partner(const ClusterSnapshot& s, const JobSpec& job,
                                          std::span<const JobId> partners,
                                          std::span<const double> budgets,
                                          const InterferenceModel& model,
                                          double slowdown_scale = 1.0);

}  // namespace ds::deepshare
