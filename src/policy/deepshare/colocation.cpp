#include "policy/deepshare/colocation.hpp"

#include <algorithm>

#include "policy/deepshare/assurance.hpp"
#include "policy/deepshare/drain.hpp"
#include "policy/deepshare/sharing.hpp"

namespace ds::deepshare {

void Probation::observed(std::size_t t, double error) {
  ++tenant_[t].n;
  tenant_[t].error += error;
  ++all_.n;
  all_.error += error;
}

// It ends after probation_pairs observed shared jobs of any tenant. It fails for the
// cluster when their mean error exceeds probation_error, and for one tenant when the mean
// error of its own probation_pairs or more observed jobs does.
bool Probation::failed(const Count& k) const {
  return k.n >= std::max(1, c_.probation_pairs) && k.error > c_.probation_error * k.n;
}

bool Probation::failed(std::size_t t) const {
  return c_.probation && (failed(all_) || failed(tenant_[t]));
}

void SharingSummary::write(std::map<std::string, double>& out) const {
  if (model) out["interference_cv_mae"] = cv_mae;
  out["sharing_observations"] = static_cast<double>(observations);
  out["sharing_slowdown_ratio"] = ratio;
  out["sharing_slowdown_scale"] = scale;
  out["sharing_failed_tenants"] = failed_tenants;
}

Colocation::Colocation(const Handle& h, std::unique_ptr<InterferenceModel> model, double cv_mae,
                       Partners& partners, const Drains* drains)
    : Handle(h),
      model_(std::move(model)),
      model_cv_mae_(cv_mae),
      partners_(partners),
      drains_(drains),
      probation_(c_, book_.tenants()),
      budgets_(book_.tenants(), 0),
      budgets_at_(book_.tenants(), -1) {}

SharingSummary Colocation::summary() const {
  SharingSummary m;
  m.model = true;
  m.cv_mae = model_cv_mae_;
  m.observations = ratio_n_;
  m.ratio = ratio_n_ ? ratio_sum_ / static_cast<double>(ratio_n_) : 1.0;
  m.scale = slowdown_scale();
  for (std::size_t t = 0; t < book_.tenants(); ++t) m.failed_tenants += probation_.failed(t);
  return m;
}

// A job whose sharing partner came last cycle: the snapshot now shows its observed rate,
// in effect since the partner came (speeds change only when partners come or go).
void Colocation::observe(Cycle& cy) {
  const ClusterSnapshot& s = cy.s;
  for (JobId id : speed_unknown_) {
    if (id.index() >= s.runtime.size()) continue;
    const JobRuntime& r = s.runtime[id.index()];
    JobState& js = book_.job(id);
    const double model = job_[id].model_speed;
    job_[id].model_speed = 0;
    if (r.status != JobStatus::Running || js.run == Run::None) continue;
    js.prog_speed = r.speed;
    // Still with the partner it joined: observed slowdown / the model's (speeds are 1 /
    // slowdowns). A partner that ended or was preempted since it came leaves the job running
    // alone at the snapshot's rate: that rate says nothing of the pair (counted, it once
    // let probation pass on a solo speed of 1 under a model half as fast as the truth).
    const JobId with = js.partner;
    if (model > 0 && r.speed > 0 && with.valid() &&
        s.runtime[with.index()].status == JobStatus::Running) {
      ratio_sum_ += model / r.speed;
      ++ratio_n_;
      const std::size_t t = s.jobs[id.index()].tenant.index();
      probation_.observed(t, 1.0 / r.speed - std::max(1.0, 1.0 / model));
      // Beyond a member's bound: the job that joined the pair leaves it (split_pairs).
      const JobId partner = with;
      const double bound = s.tenants[t].max_slowdown;
      if (c_.split_pairs && 1.0 / r.speed > bound + 1e-9) {
        const JobId joiner = js.run == Run::Shared ? id : partner;
        splits_.emplace_back(joiner, book_.job(joiner).run_id);
      }
    }
  }
  speed_unknown_.clear();
}

void Colocation::split_pairs(Cycle& cy) {
  const ClusterSnapshot& s = cy.s;
  std::erase_if(splits_, [&](const std::pair<JobId, std::uint64_t>& e) {
    const auto [id, run] = e;
    const JobState& js = book_.job(id);
    if (js.run_id != run || js.run != Run::Shared || !js.partner.valid() || js.preempted ||
        !s.jobs[id.index()].preemptible || s.runtime[id.index()].status != JobStatus::Running)
      return true;  // ended, or alone already
    const Time lost = book_.lost_now(s, id);
    if (lost > c_.slice_lost) {
      cy.wake_at(checkpoints_.on_grid(book_.next_checkpoint(s, id)));
      return false;
    }
    job_[id].no_share = true;
    tally_.slice_lost += to_seconds(lost) * s.jobs[id.index()].gpus;
    runs_.preempt(cy, id);
    ++tally_.pair_splits;
    return true;
  });
}

// The mean ratio of observed to predicted slowdown scales every predicted slowdown, once it
// exceeds what the model's own cross-validated error explains (never below 1: the model is
// not trusted to be pessimistic).
double Colocation::slowdown_scale() const {
  if (!c_.learn_sharing || ratio_n_ == 0) return 1.0;
  const double mean = ratio_sum_ / static_cast<double>(ratio_n_);
  return mean > 1.0 + std::max(0.0, model_cv_mae_) ? mean : 1.0;
}

void Colocation::compute_budget(const Cycle& cy, TenantId t) {
  budgets_[t.index()] =
      probation_.failed(t.index())
          ? 1.0
          : sharing_budget(cy.s.tenants[t.index()], cy.assured().value(t.index()), c_);
  budgets_at_[t.index()] = cy.s.now;
}

// The partners to look at: those added since its last failed try (`again`), else every job
// alone on GPUs of its count; at most partner_scan. Not a job preempted in this cycle (and
// perhaps restarted elsewhere: the snapshot still shows its old GPUs, which another start of
// this cycle may now use), nor one on nodes being drained (pair_victims: the drain takes their
// jobs), nor, on probation, one entitled at submit.
void Colocation::candidates(const Cycle& cy, const JobSpec& j, bool again,
                            std::vector<JobId>& out) {
  const std::set<JobId>& alone = *partners_.alone_with(j.gpus);
  const std::vector<JobId>& added = partners_.added(j.gpus);
  const bool probation = probation_.on();
  const bool drained = c_.pair_victims && drains_ && drains_->any();
  const auto full = [&] { return static_cast<int>(out.size()) >= c_.partner_scan; };
  auto consider = [&](JobId id) {
    const JobState& ps = book_.job(id);
    if (ps.preempted || job_[id].no_share) return;
    if (drained && drains_->on_drained_nodes(cy.s.runtime[id.index()].placement)) return;
    if (ps.submit_entitled && probation) return;
    out.push_back(id);
    budget(cy, cy.s.jobs[id.index()].tenant);
  };
  if (again) {
    for (std::size_t k = job_[j.id].tried_seen; k < added.size() && !full(); ++k)
      if (alone.contains(added[k]) && std::find(out.begin(), out.end(), added[k]) == out.end())
        consider(added[k]);
  } else {
    for (JobId id : alone) {
      if (full()) break;
      consider(id);
    }
  }
}

bool Colocation::try_share(Cycle& cy, const JobSpec& j) {
  if (j.gpu_memory_mib <= 0) return false;
  const JobState& js = book_.job(j.id);
  if (job_[j.id].no_share) return false;
  // Probation: entitled jobs share only once the model passed probation.
  if (js.submit_entitled && probation_.on()) return false;
  // A learned slowdown scale beyond every budget (no budget exceeds sharing_budget) leaves no
  // pair that fits: the model proved too optimistic, so no partner is scanned at all.
  if (slowdown_scale() > std::max(1.0, c_.sharing_budget)) return false;
  // Partners are looked at once per assurance refresh (budgets move with assurance): a job
  // whose try failed looks again, until the next refresh, only at the partners added since,
  // unless its own tenant's budget grew.
  const std::set<JobId>* alone = partners_.alone_with(j.gpus);
  if (!alone || alone->empty()) return false;
  const std::size_t added = partners_.added(j.gpus).size();
  const double own = budget(cy, j.tenant);
  const Time refreshed = cy.assured().refreshed_at();
  // (job_ grows as it is written: no reference into it is kept across writes.)
  const bool again = job_[j.id].tried_at == refreshed && own <= job_[j.id].tried_budget;
  if (again && job_[j.id].tried_seen >= added) return false;  // nothing new since
  std::vector<JobId>& partners = partners_seen_;
  partners.clear();
  candidates(cy, j, again, partners);
  const double scale = slowdown_scale();
  auto choice = choose_partner(cy.s, j, partners, budgets_, *model_, scale);
  if (!choice) {
    JobSharing& mine = job_[j.id];
    mine.tried_at = refreshed;
    mine.tried_seen = added;
    mine.tried_budget = own;
    return false;
  }
  // An entitled job within its quota holds quota while it shares (not preemptible); a job
  // that cannot be preempted shares only so (once its partner ends it would be a borrower).
  const bool quota_counted = js.entitled && book_.fits_quota(cy.s, j);
  if (!quota_counted && !j.preemptible) return false;
  job_[j.id].model_speed = choice->speed;
  job_[choice->partner].model_speed = choice->partner_speed;
  speed_unknown_.push_back(j.id);
  speed_unknown_.push_back(choice->partner);
  runs_.join(cy, j, *choice, scale, quota_counted);
  ++tally_.shared_starts;
  return true;
}

void Colocation::share(Cycle& cy) {
  partners_.list_running(cy.s, book_);
  int budget = c_.sharing_scan;
  const std::vector<std::size_t> waiting(book_.other_tenants().begin(),
                                         book_.other_tenants().end());
  for (std::size_t k = 0; k < waiting.size() && budget > 0; ++k) {
    const TenantBook& tb = book_.tenant(waiting[k]);
    for (auto it = tb.others.begin(); it != tb.others.end() && budget > 0; --budget) {
      const JobSpec& j = cy.s.jobs[std::get<2>(*it).index()];
      ++it;
      try_share(cy, j);
    }
  }
}

}  // namespace ds::deepshare
