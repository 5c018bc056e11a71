#include "policy/deepshare/deepshare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "policy/deepshare/assurance.hpp"
#include "policy/deepshare/config.hpp"
#include "policy/deepshare/lending.hpp"
#include "policy/deepshare/reclaim.hpp"
#include "policy/deepshare/sharing.hpp"
#include "policy/interference/colocation.hpp"
#include "policy/interference/interference.hpp"
#include "policy/placement.hpp"
#include "policy/predict/predictor.hpp"

namespace ds {
namespace {

using namespace deepshare;

// Shared: colocated on a partner's GPUs; holds no GPUs of its own, so it counts against
// neither quota nor lent capacity, and is never a reclaim victim.
enum class Run : std::uint8_t { None, Guaranteed, Borrowed, Shared };

// GPU quantities of tenants are in milli-GPUs (GPUs x gpu_milli): a fractional request
// holds the share of a GPU it asks for, in quota as in lending.
struct TenantState {
  std::set<JobId> entitled;                   // pending, entitled at submit (FIFO)
  std::set<std::pair<double, JobId>> others;  // pending, by predicted GPU time
  std::set<std::pair<Time, JobId>> waiting;   // the same jobs, by the time they queued
  int guaranteed = 0;                         // GPUs of running guaranteed jobs
  int borrowed = 0;                           // GPUs of running borrowed jobs
  int pending_gpus = 0;
  int queued_entitled = 0;  // GPUs of pending entitled jobs
  double forecast = 0;      // smoothed demand (GPUs)
  Time last_reclaim = -kNever / 2;
  Lending lend;
  double lent = 0;
};

class DeepSharePolicy final : public Policy {
 public:
  explicit DeepSharePolicy(const PolicyContext& ctx)
      : c_(Config::from(ctx.options)),
        tenants_(ctx.tenants.size()),
        signal_(ctx.tenants.size(), c_),
        predictor_(make_predictor(PredictorConfig{.kind = c_.predictor})),
        job_(ctx.jobs.size()) {
    for (const auto& n : ctx.cluster.nodes) nodes_.push_back(n.id);
    total_gpus_ = ctx.cluster.total_gpus();
    int quota_sum = 0;
    for (const auto& t : ctx.tenants) quota_sum += t.quota_gpus;
    unowned_ = std::max(0, ctx.cluster.total_gpus() - quota_sum) * kMilliPerGpu;
    if (c_.sharing) {
      std::string aux = ctx.options.get("aux", ctx.aux_dir);
      if (!aux.empty() && ColocationTable::available(aux)) {
        table_ = std::make_unique<ColocationTable>(ColocationTable::load(aux));
      }
      auto fit = fit_interference(table_.get());
      model_ = std::move(fit.model);
      model_cv_mae_ = fit.cv_mae;
    }
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    FreeMap free(s);
    ingest(s);
    update_assurance(s);
    place_entitled(s, free, out);
    place_within_quota(s, free, out);
    compute_lending(s);  // after the guaranteed starts of this cycle
    place_borrowed(s, free, out);
    share(s, out);
    if (next_wake_ != kNever && next_wake_ > s.now) out.wake_at = next_wake_;
    out.reject = std::move(rejected_);
    rejected_.clear();
    return out;
  }

  void telemetry(std::span<TenantTelemetry> out) const override {
    for (std::size_t t = 0; t < out.size() && t < tenants_.size(); ++t) {
      out[t].assurance = signal_.value(t);
      out[t].lent_gpus = static_cast<int>(std::lround(tenants_[t].lent / kMilliPerGpu));
      out[t].reserve_gpus = (tenants_[t].lend.reserve + kMilliPerGpu / 2) / kMilliPerGpu;
    }
  }

  void summarize(std::map<std::string, double>& out) const override {
    out["predictor_scored_jobs"] = static_cast<double>(accuracy_.scored());
    out["predictor_median_abs_log2_error"] = accuracy_.median_abs_log2_error();
    out["predictor_within_2x"] = accuracy_.within_2x();
    if (model_) out["interference_cv_mae"] = model_cv_mae_;
    out["reclaims"] = static_cast<double>(reclaims_);
    out["reclaim_victims"] = static_cast<double>(victims_);
    out["reclaim_waits"] = static_cast<double>(waits_);
    out["shared_starts"] = static_cast<double>(shared_starts_);
    out["borrowed_starts"] = static_cast<double>(borrowed_starts_);
  }

 private:
  struct JobState {
    Time predicted = 0;
    bool entitled = false;
    bool queued = false;
    Run run = Run::None;
    JobId partner;               // sharing partner while both run
    std::uint64_t tried = 0;     // partner epoch of the last failed sharing attempt (+1)
    bool preempted = false;      // preempted by this policy; its requeue notice is expected
    bool quota_counted = false;  // a Shared job that holds its tenant's quota
    Time queued_since = 0;
  };

  static int share(const JobSpec& j) { return j.gpus * j.gpu_milli; }  // milli-GPUs
  static int quota(const ClusterSnapshot& s, std::size_t t) {
    return s.tenants[t].quota_gpus * kMilliPerGpu;
  }

  // --- phase 1 -------------------------------------------------------------
  double key(const JobSpec& j) const {
    if (!c_.prediction) return static_cast<double>(j.id.index());
    return to_seconds(job_[j.id.index()].predicted) * share(j) / kMilliPerGpu;
  }

  void enqueue(const JobSpec& j, Time now) {
    TenantState& t = tenants_[j.tenant.index()];
    JobState& js = job_[j.id.index()];
    js.queued = true;
    js.queued_since = now;
    t.pending_gpus += share(j);
    if (js.entitled) {
      t.entitled.insert(j.id);
      t.queued_entitled += share(j);
    } else {
      t.others.insert({key(j), j.id});
      t.waiting.insert({now, j.id});
    }
  }

  void dequeue(const JobSpec& j) {
    TenantState& t = tenants_[j.tenant.index()];
    JobState& js = job_[j.id.index()];
    js.queued = false;
    t.pending_gpus -= share(j);
    if (js.entitled) {
      t.entitled.erase(j.id);
      t.queued_entitled -= share(j);
    } else {
      t.others.erase({key(j), j.id});
      t.waiting.erase({js.queued_since, j.id});
    }
  }

  // A job stopped running (finished or requeued): release its accounting.
  void stopped(const ClusterSnapshot& s, JobId id) {
    JobState& js = job_[id.index()];
    const JobSpec& j = s.jobs[id.index()];
    TenantState& t = tenants_[j.tenant.index()];
    if (js.run == Run::Guaranteed || (js.run == Run::Shared && js.quota_counted))
      t.guaranteed -= share(j);
    js.quota_counted = false;
    if (js.run == Run::Borrowed) {
      t.borrowed -= share(j);
      borrowed_running_.erase(id);
    }
    if (js.run != Run::None) exclusive_[j.gpus].erase(id);
    js.run = Run::None;
    if (js.partner.valid()) {
      // The partner runs alone again and may take a new partner. A job that was
      // started shared now holds the GPUs alone: account it like any other.
      const JobSpec& p = s.jobs[js.partner.index()];
      JobState& ps = job_[js.partner.index()];
      ps.partner = JobId();
      if (ps.run == Run::Shared) {
        TenantState& pt = tenants_[p.tenant.index()];
        if (ps.quota_counted) {
          ps.run = Run::Guaranteed;  // its quota is already counted
          ps.quota_counted = false;
        } else {
          ps.run = Run::Borrowed;
          pt.borrowed += share(p);
          borrowed_running_.insert(p.id);
        }
      }
      if (ps.run != Run::None) add_exclusive(p);
      js.partner = JobId();
    }
  }

  void add_exclusive(const JobSpec& j) {
    if (j.gpu_memory_mib <= 0) return;
    exclusive_[j.gpus].insert(j.id);
    ++partner_epoch_;
  }

  void ingest(const ClusterSnapshot& s) {
    if (job_.size() < s.jobs.size()) job_.resize(s.jobs.size());  // drivers that learn jobs late
    for (JobId id : s.withdrawn) {
      if (job_[id.index()].queued) dequeue(s.jobs[id.index()]);
      if (job_[id.index()].run != Run::None) stopped(s, id);
    }
    for (JobId id : s.adopted) adopt(s, id);
    for (const auto& f : s.finished) {
      const JobSpec& j = s.jobs[f.job.index()];
      stopped(s, f.job);
      predictor_->observe(j, f.runtime);
      accuracy_.finished(f.job, f.runtime);
    }
    for (JobId id : s.requeued) {
      JobState& js = job_[id.index()];
      if (js.preempted) {  // our own reclaim: already accounted (and maybe restarted)
        js.preempted = false;
        continue;
      }
      if (js.run != Run::None) stopped(s, id);  // preempted by someone else (e.g. a node failure)
      if (!job_[id.index()].queued) enqueue(s.jobs[id.index()], s.now);
    }
    for (JobId id : s.arrived) {
      const JobSpec& j = s.jobs[id.index()];
      if (j.gpus > total_gpus_) {
        rejected_.push_back({id, "needs " + std::to_string(j.gpus) + " GPUs; the cluster has " +
                                     std::to_string(total_gpus_)});
        continue;
      }
      TenantState& t = tenants_[j.tenant.index()];
      JobState& js = job_[id.index()];
      js.predicted = std::max<Time>(kSecond, predictor_->predict(j));
      accuracy_.predicted(id, js.predicted);
      js.entitled = t.guaranteed + t.queued_entitled + share(j) <= quota(s, j.tenant.index());
      enqueue(j, s.now);
    }
  }

  // A running job this policy object did not start (a restarted controller): account
  // it as its runtime flags say; a shared one holds no GPUs of its own and no partner.
  void adopt(const ClusterSnapshot& s, JobId id) {
    const JobSpec& j = s.jobs[id.index()];
    const JobRuntime& r = s.runtime[id.index()];
    JobState& js = job_[id.index()];
    if (js.queued) dequeue(j);
    if (js.run != Run::None) return;
    if (js.predicted == 0) js.predicted = std::max<Time>(kSecond, predictor_->predict(j));
    TenantState& t = tenants_[j.tenant.index()];
    if (r.shared) {
      js.run = Run::Shared;
    } else if (r.borrowed) {
      js.run = Run::Borrowed;
      t.borrowed += share(j);
      borrowed_running_.insert(id);
      add_exclusive(j);
    } else {
      js.run = Run::Guaranteed;
      t.guaranteed += share(j);
      add_exclusive(j);
    }
  }

  // --- phase 2 -------------------------------------------------------------
  Time remaining(const ClusterSnapshot& s, JobId id) const {
    const JobRuntime& r = s.runtime[id.index()];
    const Time ran = r.attained + (s.now - r.last_start);
    return std::max<Time>(kMinute, job_[id.index()].predicted - ran);
  }

  void update_assurance(const ClusterSnapshot& s) {
    // Share of borrowed GPUs predicted back within each tenant's SLO.
    std::vector<AssuranceInputs> in(tenants_.size());
    for (std::size_t t = 0; t < tenants_.size(); ++t) {
      const TenantState& ts = tenants_[t];
      const Tenant& tenant = s.tenants[t];
      AssuranceInputs& a = in[t];
      a.quota = quota(s, t);
      a.held = ts.guaranteed + ts.borrowed;
      a.demand = a.held + ts.pending_gpus;
      a.slo = tenant.slo_queue;
      if (!ts.entitled.empty()) a.oldest_wait = s.now - s.jobs[ts.entitled.begin()->index()].submit;
      a.lent = ts.lent;
    }
    if (borrowed_total() > 0) {
      for (std::size_t t = 0; t < tenants_.size(); ++t) {
        if (in[t].lent <= 0) continue;
        int back = 0, total = 0;
        for (JobId id : borrowed_running_) {
          total += share(s.jobs[id.index()]);
          if (!c_.prediction || remaining(s, id) <= s.tenants[t].slo_queue)
            back += share(s.jobs[id.index()]);
        }
        in[t].lent_back = total ? static_cast<double>(back) / total : 1.0;
      }
    }
    signal_.update(s.now, in);
    const double alpha = 1.0 - std::exp(-static_cast<double>(s.now - last_forecast_) /
                                        static_cast<double>(c_.demand_tau));
    for (std::size_t t = 0; t < tenants_.size(); ++t)
      tenants_[t].forecast += alpha * (in[t].demand - tenants_[t].forecast);
    last_forecast_ = s.now;
  }

  // --- phase 3 -------------------------------------------------------------
  int borrowed_total() const {
    int b = 0;
    for (const auto& t : tenants_) b += t.borrowed;
    return b;
  }

  void compute_lending(const ClusterSnapshot& s) {
    int lendable = unowned_;
    for (std::size_t t = 0; t < tenants_.size(); ++t) {
      TenantState& ts = tenants_[t];
      LendInputs in;
      in.quota = quota(s, t);
      in.unit = kMilliPerGpu;
      in.guaranteed = ts.guaranteed + ts.queued_entitled;  // quota owed to queued entitled jobs
      in.assurance = signal_.value(t);
      in.forecast_demand = std::min<double>(ts.forecast, in.quota);
      in.since_reclaim = s.now - ts.last_reclaim;
      ts.lend = lending(in, c_);
      lendable += ts.lend.lendable;
    }
    lendable_total_ = lendable;
    idle_total_ = unowned_;
    for (const auto& ts : tenants_) idle_total_ += ts.lend.idle;
    const int borrowed = borrowed_total();
    for (auto& ts : tenants_)
      ts.lent = lendable > 0 ? static_cast<double>(borrowed) * ts.lend.lendable / lendable : 0;
  }

  // --- starting jobs -------------------------------------------------------
  void start(const ClusterSnapshot& s, FreeMap& free, Decisions& out, const JobSpec& j, Placement p,
             Run run) {
    free.take(p, j.gpu_milli);
    dequeue(j);
    JobState& js = job_[j.id.index()];
    js.run = run;
    TenantState& t = tenants_[j.tenant.index()];
    if (run == Run::Guaranteed)
      t.guaranteed += share(j);
    else {
      t.borrowed += share(j);
      borrowed_running_.insert(j.id);
      ++borrowed_starts_;
    }
    add_exclusive(j);
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
    out.start.push_back(std::move(st));
  }

  bool fits_quota(const ClusterSnapshot& s, const JobSpec& j) const {
    return tenants_[j.tenant.index()].guaranteed + share(j) <= quota(s, j.tenant.index());
  }

  // --- phase 4 -------------------------------------------------------------
  void place_entitled(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
    next_wake_ = kNever;
    // Tenants with the lowest assurance go first.
    std::vector<std::size_t> order(tenants_.size());
    for (std::size_t t = 0; t < order.size(); ++t) order[t] = t;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return signal_.value(a) < signal_.value(b);
    });
    for (std::size_t t : order) {
      TenantState& ts = tenants_[t];
      for (auto it = ts.entitled.begin(); it != ts.entitled.end();) {
        const JobSpec& j = s.jobs[it->index()];
        ++it;  // the job may leave the queue below
        if (!fits_quota(s, j)) break;
        if (auto p = place_job(free, nodes_, j)) {
          start(s, free, out, j, std::move(*p), Run::Guaranteed);
          continue;
        }
        if (try_share(s, out, j)) continue;
        const Outcome o = reclaim_or_wait(s, free, out, j);
        if (o == Outcome::Waiting) break;  // keep submit order within the tenant
        // Started, or no reclaim can make room for it: later entitled jobs may still fit.
      }
    }
  }

  enum class Outcome { Started, Waiting, NoRoom };

  // Phase 3, step "reclaim": wait for borrowers predicted to end before the deadline,
  // else preempt the cheapest set that makes room.
  Outcome reclaim_or_wait(const ClusterSnapshot& s, FreeMap& free, Decisions& out,
                          const JobSpec& j) {
    const Tenant& tenant = s.tenants[j.tenant.index()];
    const Time deadline = j.submit + std::max<Time>(0, tenant.slo_queue - c_.deadline_margin);
    if (!c_.reclaim) return Outcome::Waiting;
    if (borrowed_running_.empty()) return Outcome::NoRoom;  // nothing to reclaim
    const bool due = s.now >= deadline;
    const bool urgent = due || (c_.assurance && signal_.at_risk(j.tenant.index()));
    if (!urgent && c_.prediction) {
      // Borrowed GPUs predicted to be released before the deadline.
      int soon = 0;
      Time first = kNever;
      for (JobId id : borrowed_running_) {
        const Time end = s.now + remaining(s, id);
        if (end <= deadline) {
          soon += s.jobs[id.index()].gpus;
          first = std::min(first, end);
        }
      }
      if (soon + free.total_free_gpus(nodes_) >= j.gpus) {
        ++waits_;
        next_wake_ = std::min({next_wake_, deadline, first});
        return Outcome::Waiting;
      }
    }
    std::vector<Victim> candidates;
    for (JobId id : borrowed_running_) {
      const JobRuntime& r = s.runtime[id.index()];
      if (r.status != JobStatus::Running || job_[id.index()].partner.valid()) continue;
      if (!due && s.now - r.last_start < c_.min_runtime) continue;
      const JobSpec& v = s.jobs[id.index()];
      const Time overhead = v.gpus <= 8 ? seconds(40) : seconds(60);
      candidates.push_back(Victim{
          id,
          preemption_cost(v, r, s.now, s.tenants[v.tenant.index()].checkpoint_interval, overhead),
          r.last_start, &r.placement, v.gpu_milli});
    }
    auto plan = plan_reclaim(free, nodes_, j, std::move(candidates));
    if (!plan) {
      if (due) return Outcome::NoRoom;
      next_wake_ = std::min(next_wake_, deadline);
      return Outcome::Waiting;
    }
    for (JobId v : plan->victims) {
      const JobSpec& vj = s.jobs[v.index()];
      free.give(s.runtime[v.index()].placement, vj.gpu_milli);
      stopped(s, v);
      job_[v.index()].preempted = true;
      enqueue(vj, s.now);
      out.preempt.push_back({v});
      ++victims_;
    }
    ++reclaims_;
    tenants_[j.tenant.index()].last_reclaim = s.now;
    start(s, free, out, j, std::move(plan->placement), Run::Guaranteed);
    return Outcome::Started;
  }

  // --- phase 5 -------------------------------------------------------------
  void place_within_quota(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
    for (std::size_t t = 0; t < tenants_.size(); ++t) {
      TenantState& ts = tenants_[t];
      if (!start_aged(s, free, out, t)) continue;  // the tenant's quota drains for it
      int scanned = 0;
      for (auto it = ts.others.begin(); it != ts.others.end() && scanned < kScan; ++scanned) {
        const JobSpec& j = s.jobs[it->second.index()];
        ++it;
        // Quota still owed to queued entitled jobs is not available to others.
        if (ts.guaranteed + ts.queued_entitled + share(j) > quota(s, t)) continue;
        if (auto p = place_job(free, nodes_, j))
          start(s, free, out, j, std::move(*p), Run::Guaranteed);
      }
    }
  }

  // Phase 4, first step: the tenant's longest-waiting other job, once it waited past
  // quota_aging, goes before shorter ones: it starts in quota (reclaiming borrowed
  // GPUs if needed), or no other job of the tenant takes quota this cycle, so that
  // finishing jobs free quota for it. Returns whether the tenant's other jobs may go.
  bool start_aged(const ClusterSnapshot& s, FreeMap& free, Decisions& out, std::size_t t) {
    TenantState& ts = tenants_[t];
    if (ts.waiting.empty() || !c_.prediction) return true;  // FIFO order needs no aging
    const auto [since, id] = *ts.waiting.begin();
    if (s.now - since < c_.quota_aging) {
      next_wake_ = std::min(next_wake_, since + c_.quota_aging);
      return true;
    }
    const JobSpec& j = s.jobs[id.index()];
    const int q = quota(s, t);
    if (share(j) > q) return true;  // never fits the quota: it can only borrow
    if (ts.guaranteed + ts.queued_entitled + share(j) > q) return false;
    if (auto p = place_job(free, nodes_, j)) {
      start(s, free, out, j, std::move(*p), Run::Guaranteed);
      return true;
    }
    return reclaim_or_wait(s, free, out, j) == Outcome::Started;
  }

  // --- phase 6 -------------------------------------------------------------
  void place_borrowed(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
    if (!c_.borrowing) return;
    const int borrowed = borrowed_total();
    int available = lendable_total_ - borrowed;
    // Borrowers that waited past borrow_aging may use reserves too (so that no job
    // starves behind them); they stay preemptible, so a reserve returns by reclaim.
    int aged_available = idle_total_ - borrowed;
    if (aged_available <= 0) return;
    std::vector<std::size_t> order;
    for (std::size_t t = 0; t < tenants_.size(); ++t)
      if (!tenants_[t].others.empty()) order.push_back(t);
    auto borrowed_share = [&](std::size_t t) {
      return tenants_[t].borrowed / std::max(1e-9, s.tenants[t].weight);
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return borrowed_share(a) < borrowed_share(b);
    });
    const int headroom = static_cast<int>(std::ceil(lendable_total_ * c_.long_job_headroom));
    for (std::size_t t : order) {
      TenantState& ts = tenants_[t];
      int scanned = 0;
      for (auto it = ts.others.begin();
           it != ts.others.end() && scanned < kScan && aged_available > 0; ++scanned) {
        const JobSpec& j = s.jobs[it->second.index()];
        ++it;
        const Time since = s.runtime[j.id.index()].queued_since;
        const bool aged = s.now - since >= c_.borrow_aging;
        if (!aged && share(j) > available && share(j) <= aged_available)
          next_wake_ = std::min(next_wake_, since + c_.borrow_aging);  // eligible then
        if (share(j) > (aged ? aged_available : available)) continue;
        const bool long_job = c_.prediction && job_[j.id.index()].predicted > c_.long_job;
        if (long_job && available - share(j) < headroom) continue;
        if (auto p = place_job(free, nodes_, j)) {
          available -= share(j);
          aged_available -= share(j);
          start(s, free, out, j, std::move(*p), Run::Borrowed);
        }
      }
    }
  }

  // --- phase 7 -------------------------------------------------------------
  bool try_share(const ClusterSnapshot& s, Decisions& out, const JobSpec& j) {
    if (!c_.sharing || !model_ || j.gpu_memory_mib <= 0) return false;
    JobState& js = job_[j.id.index()];
    if (js.tried == partner_epoch_ + 1) return false;  // nothing new to pair with
    auto it = exclusive_.find(j.gpus);
    if (it == exclusive_.end() || it->second.empty()) return false;
    if (budgets_at_ != s.now) {
      budgets_.resize(tenants_.size());
      for (std::size_t t = 0; t < tenants_.size(); ++t)
        budgets_[t] = sharing_budget(s.tenants[t], signal_.value(t), c_);
      budgets_at_ = s.now;
    }
    std::vector<JobId> partners;
    for (JobId id : it->second) {
      if (static_cast<int>(partners.size()) >= c_.partner_scan) break;
      partners.push_back(id);
    }
    auto choice = choose_partner(s, j, partners, budgets_, *model_);
    if (!choice) {
      js.tried = partner_epoch_ + 1;
      return false;
    }
    dequeue(j);
    js.run = Run::Shared;
    // An entitled job within its quota holds quota while it shares (not preemptible).
    js.quota_counted = js.entitled && fits_quota(s, j);
    if (js.quota_counted) tenants_[j.tenant.index()].guaranteed += share(j);
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

  void share(const ClusterSnapshot& s, Decisions& out) {
    if (!c_.sharing || !model_) return;
    int budget = c_.sharing_scan;
    for (std::size_t t = 0; t < tenants_.size() && budget > 0; ++t) {
      TenantState& ts = tenants_[t];
      for (auto it = ts.others.begin(); it != ts.others.end() && budget > 0; --budget) {
        const JobSpec& j = s.jobs[it->second.index()];
        ++it;
        try_share(s, out, j);
      }
    }
  }

  static constexpr int kScan = 64;  // pending jobs examined per tenant and phase

  Config c_;
  std::vector<TenantState> tenants_;
  AssuranceSignal signal_;
  std::unique_ptr<RuntimePredictor> predictor_;
  AccuracyTracker accuracy_;
  std::unique_ptr<ColocationTable> table_;
  std::unique_ptr<InterferenceModel> model_;
  double model_cv_mae_ = -1;
  std::vector<JobState> job_;
  std::vector<NodeId> nodes_;
  std::set<JobId> borrowed_running_;
  std::map<int, std::set<JobId>> exclusive_;  // GPU count -> running jobs alone on their GPUs
  std::uint64_t partner_epoch_ = 0;
  std::vector<double> budgets_;
  Time budgets_at_ = -1;
  int unowned_ = 0;
  int total_gpus_ = 0;
  std::vector<RejectJob> rejected_;  // emitted with the next decisions
  int lendable_total_ = 0;
  int idle_total_ = 0;  // idle quota including reserves (not owed to entitled jobs)
  Time last_forecast_ = 0;
  Time next_wake_ = kNever;
  std::size_t reclaims_ = 0, victims_ = 0, waits_ = 0, shared_starts_ = 0, borrowed_starts_ = 0;
};

}  // namespace

std::unique_ptr<Policy> make_deepshare(const PolicyContext& ctx) {
  return std::make_unique<DeepSharePolicy>(ctx);
}

const char* deepshare_options() {
  return deepshare::option_keys();
}

}  // namespace ds
