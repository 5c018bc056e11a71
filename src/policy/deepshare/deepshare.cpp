#include "policy/deepshare/deepshare.hpp"

#include <algorithm>
#include <cmath>

#include "model/aux_data.hpp"
#include "model/execution.hpp"
#include "policy/deepshare/policy_impl.hpp"

namespace ds {
namespace deepshare {

DeepSharePolicy::DeepSharePolicy(const PolicyContext& ctx)
    : c_(Config::from(ctx.options)),
      tenants_(ctx.tenants.size()),
      signal_(ctx.tenants.size(), c_),
      predictor_(make_predictor(PredictorConfig{.kind = c_.predictor})) {
  // Where each tenant's guaranteed work runs: its own nodes and the unowned pool; a tenant
  // that owns no node, anywhere.
  home_.resize(ctx.tenants.size());
  std::vector<bool> owns(ctx.tenants.size(), false);
  for (const auto& n : ctx.cluster.nodes)
    if (n.owner.valid() && n.owner.index() < owns.size()) owns[n.owner.index()] = true;
  for (const auto& n : ctx.cluster.nodes) {
    const bool pool = !n.owner.valid() || n.owner.index() >= owns.size();
    for (std::size_t t = 0; t < home_.size(); ++t)
      if (!owns[t] || pool || n.owner.index() == t) home_[t].push_back(n.id);
  }
  for (const auto& n : ctx.cluster.nodes) {
    nodes_.push_back(n.id);
    node_size_ = std::max(node_size_, n.gpus);
  }
  total_gpus_ = ctx.cluster.total_gpus();
  int quota_sum = 0;
  for (const auto& t : ctx.tenants) quota_sum += t.quota_gpus;
  unowned_ = std::max(0, ctx.cluster.total_gpus() - quota_sum) * kMilliPerGpu;
  if (c_.sharing) {
    // The interference model learns from measured pairs when the driver has them.
    const ColocationTable* table = ctx.aux && ctx.aux->colocation ? &*ctx.aux->colocation : nullptr;
    auto fit = fit_interference(table);
    model_ = std::move(fit.model);
    model_cv_mae_ = fit.cv_mae;
  }
}

Decisions DeepSharePolicy::decide(const ClusterSnapshot& s) {
  Decisions out;
  ++cycles_;
  free_.sync(s);
  if (free_.growths() != growths_seen_) {
    growths_seen_ = free_.growths();
    ++epoch_;
  }
  if (!sets_ready_) register_sets();
  FreeMap& free = free_;
  free_gpus_ = free.total_free_gpus();
  ingest(s);
  collect_checkpoints(s);
  out.waiting = std::move(waits_on_arrival_);  // later phases may state other reasons
  waits_on_arrival_.clear();
  update_assurance(s);
  place_entitled(s, free, out);
  split_pairs(s, free, out);
  run_drains(s, free, out);
  place_within_quota(s, free, out);
  compute_lending(s);  // after the guaranteed starts of this cycle
  place_borrowed(s, free, out);
  make_room(s, free, out);
  place_entitled_freed(s, free, out);
  share(s, out);
  if (next_wake_ != kNever && next_wake_ > s.now) out.wake_at = next_wake_;
  out.reject = std::move(rejected_);
  rejected_.clear();
  return out;
}

void DeepSharePolicy::register_sets() {
  sets_ready_ = true;
  all_set_ = free_.add_set(nodes_);
  std::map<std::vector<NodeId>, FreeMap::SetId> known;  // tenants with equal homes share one
  home_set_.resize(home_.size());
  for (std::size_t t = 0; t < home_.size(); ++t) {
    if (home_[t].size() == nodes_.size()) {
      home_set_[t] = all_set_;
      continue;
    }
    auto [it, fresh] = known.emplace(home_[t], 0);
    if (fresh) it->second = free_.add_set(home_[t]);
    home_set_[t] = it->second;
  }
}

void DeepSharePolicy::telemetry(std::span<TenantTelemetry> out) const {
  for (std::size_t t = 0; t < out.size() && t < tenants_.size(); ++t) {
    out[t].assurance = signal_.value(t);
    out[t].lent_gpus = static_cast<int>(std::lround(tenants_[t].lent / kMilliPerGpu));
    out[t].reserve_gpus = (tenants_[t].lend.reserve + kMilliPerGpu / 2) / kMilliPerGpu;
  }
}

void DeepSharePolicy::summarize(std::map<std::string, double>& out) const {
  out["predictor_scored_jobs"] = static_cast<double>(accuracy_.scored());
  out["predictor_median_abs_log2_error"] = accuracy_.median_abs_log2_error();
  out["predictor_within_2x"] = accuracy_.within_2x();
  if (model_) out["interference_cv_mae"] = model_cv_mae_;
  out["reclaims"] = static_cast<double>(reclaims_);
  out["reclaim_victims"] = static_cast<double>(victims_);
  out["reclaim_waits"] = static_cast<double>(waits_);
  out["shared_starts"] = static_cast<double>(shared_starts_);
  out["sharing_observations"] = static_cast<double>(ratio_n_);
  out["sharing_slowdown_ratio"] = ratio_n_ ? ratio_sum_ / static_cast<double>(ratio_n_) : 1.0;
  out["sharing_slowdown_scale"] = slowdown_scale();
  double failed = 0;
  for (std::size_t t = 0; t < tenants_.size(); ++t) failed += sharing_failed(t);
  out["sharing_failed_tenants"] = failed;
  out["pair_splits"] = static_cast<double>(splits_done_);
  out["borrowed_starts"] = static_cast<double>(borrowed_starts_);
  out["slices"] = static_cast<double>(slices_);
  out["slice_victims"] = static_cast<double>(slice_victims_);
  out["cycles"] = static_cast<double>(cycles_);
  out["drains"] = static_cast<double>(drains_);
  out["drain_victims"] = static_cast<double>(drain_victims_);
  out["reclaim_lost_gpu_hours"] = reclaim_lost_ / 3600;  // estimated by the policy
  out["slice_lost_gpu_hours"] = slice_lost_ / 3600;
  out["drain_lost_gpu_hours"] = drain_lost_ / 3600;
}

// Queue order of a job that is not entitled: fresh jobs (attained service below
// fresh_gpu_s GPU-seconds) before jobs that have run long, each by predicted GPU time
// (FIFO without prediction). Fixed while the job waits.
double DeepSharePolicy::key(const JobSpec& j, Time attained) const {
  const double gpus = static_cast<double>(share(j)) / kMilliPerGpu;
  const bool fresh = !c_.time_slicing || to_seconds(attained) * gpus < c_.fresh_gpu_s;
  const double order = c_.prediction ? to_seconds(job_[j.id.index()].predicted) * gpus
                                     : static_cast<double>(j.submit);  // FIFO
  return (fresh ? 0.0 : kLongRun) + order;
}

void DeepSharePolicy::enqueue(const JobSpec& j, Time now, Time attained) {
  TenantState& t = tenants_[j.tenant.index()];
  JobState& js = job_[j.id.index()];
  js.key = key(j, attained);
  js.queued = true;
  ++t.queue_epoch;
  touch(j.tenant.index());
  js.queued_since = now;
  t.pending_gpus += share(j);
  if (js.submit_entitled) t.queued_submit_entitled += share(j);  // as ClusterState counts them
  if (js.entitled) {
    t.entitled.insert({j.submit, j.id});
    t.queued_entitled += share(j);
    entitled_tenants_.insert(j.tenant.index());
  } else {
    t.others.insert({js.key, j.submit, j.id});
    t.waiting.insert({now, j.id});
    other_tenants_.insert(j.tenant.index());
  }
}

void DeepSharePolicy::dequeue(const JobSpec& j) {
  TenantState& t = tenants_[j.tenant.index()];
  JobState& js = job_[j.id.index()];
  js.queued = false;
  ++t.queue_epoch;
  touch(j.tenant.index());
  t.pending_gpus -= share(j);
  if (js.submit_entitled) t.queued_submit_entitled -= share(j);
  if (js.entitled) {
    t.entitled.erase({j.submit, j.id});
    t.queued_entitled -= share(j);
    if (t.entitled.empty()) entitled_tenants_.erase(j.tenant.index());
  } else {
    t.others.erase({js.key, j.submit, j.id});
    t.waiting.erase({js.queued_since, j.id});
    if (t.others.empty()) other_tenants_.erase(j.tenant.index());
  }
}

// A job stopped running (finished or requeued): release its accounting.
void DeepSharePolicy::stopped(const ClusterSnapshot& s, JobId id) {
  ++epoch_;
  touch(s.jobs[id.index()].tenant.index());
  JobState& js = job_[id.index()];
  const JobSpec& j = s.jobs[id.index()];
  TenantState& t = tenants_[j.tenant.index()];
  if (js.run == Run::Guaranteed || (js.run == Run::Shared && js.quota_counted))
    t.guaranteed -= share(j);
  if (js.away) away_running_.erase(id);
  js.away = false;
  js.quota_counted = false;
  if (js.run == Run::Borrowed) {
    remove_borrowed(s, id);
  }
  if (js.run != Run::None) exclusive_[j.gpus].erase(id);
  js.run = Run::None;
  if (js.partner.valid()) {
    // The partner runs alone again and may take a new partner. A job that was
    // started shared now holds the GPUs alone: account it like any other.
    const JobSpec& p = s.jobs[js.partner.index()];
    JobState& ps = job_[js.partner.index()];
    ps.partner = JobId();
    if (ps.run != Run::None) settle(p.id, s.now, 1.0);  // alone again: full speed
    if (ps.run == Run::Shared) {
      if (ps.quota_counted) {
        ps.run = Run::Guaranteed;  // its quota is already counted
        ps.quota_counted = false;
      } else {
        ps.run = Run::Borrowed;
        add_borrowed(s, p.id);
      }
    }
    if (ps.run != Run::None) add_exclusive(p);
    js.partner = JobId();
  }
}

void DeepSharePolicy::add_exclusive(const JobSpec& j) {
  if (j.gpu_memory_mib <= 0) return;
  exclusive_[j.gpus].insert(j.id);
  unlisted_.push_back(j.id);  // a new partner, listed in added_ once it runs (share())
}

void DeepSharePolicy::ingest(const ClusterSnapshot& s) {
  if (job_.size() < s.jobs.size()) job_.resize(s.jobs.size());  // drivers that learn jobs late
  observe_speeds(s);
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
    if (js.run != Run::None) {  // preempted by someone else (e.g. a node failure)
      const JobRuntime& r = s.runtime[id.index()];
      const Time ended = r.last_start + (r.attained - js.attained0);
      const double done = js.prog + static_cast<double>(ended - js.prog_at) * js.prog_speed;
      const Time interval = s.tenants[s.jobs[id.index()].tenant.index()].checkpoint_interval;
      stopped(s, id);
      js.prog = checkpoint_kept(done, interval) -
                static_cast<double>(restart_overhead(s.jobs[id.index()].gpus));
    }
    if (!job_[id.index()].queued)
      enqueue(s.jobs[id.index()], s.now, s.runtime[id.index()].attained);
    waits_on_arrival_.push_back({id, WaitReason::Priority});
  }
  for (JobId id : s.arrived) {
    const JobSpec& j = s.jobs[id.index()];
    const int capacity = model_capacity(*s.cluster, j, total_gpus_);
    if (j.gpus > capacity) {
      rejected_.push_back({id, "needs " + std::to_string(j.gpus) + " GPUs" + model_text(j) +
                                   "; the cluster has " + std::to_string(capacity)});
      continue;
    }
    TenantState& t = tenants_[j.tenant.index()];
    JobState& js = job_[id.index()];
    js = JobState{};  // a driver may reuse the id of a job that left
    js.predicted = std::max<Time>(kSecond, predictor_->predict(j));
    accuracy_.predicted(id, js.predicted);
    // Entitlement as the metric defines it (DESIGN §4): requeued jobs that were entitled at
    // submit count among the queued entitled ones.
    js.entitled = t.guaranteed + t.queued_submit_entitled + share(j) <= quota(s, j.tenant.index());
    js.submit_entitled = js.entitled;
    enqueue(j, s.now, 0);
    waits_on_arrival_.push_back({id, WaitReason::Priority});
  }
}

// A running job this policy object did not start (a restarted controller): account
// it as its runtime flags say; a shared one holds no GPUs of its own. Jobs found on the
// same GPUs are partners (so that neither is a reclaim victim whose GPUs would not free).
void DeepSharePolicy::adopt(const ClusterSnapshot& s, JobId id) {
  const JobSpec& j = s.jobs[id.index()];
  const JobRuntime& r = s.runtime[id.index()];
  JobState& js = job_[id.index()];
  if (js.queued) dequeue(j);
  if (js.run != Run::None) return;
  if (js.predicted == 0) js.predicted = std::max<Time>(kSecond, predictor_->predict(j));
  js.prog = static_cast<double>(r.attained + (s.now - r.last_start)) * r.speed;  // best guess
  js.prog_at = s.now;
  js.prog_speed = r.speed;
  js.attained0 = r.attained;
  track_run(s, id);
  if (!js.partner.valid()) {
    for (JobId other : s.running) {
      if (other == id || job_[other.index()].partner.valid()) continue;
      if (!overlaps(r.placement, s.runtime[other.index()].placement)) continue;
      js.partner = other;
      job_[other.index()].partner = id;
      exclusive_[s.jobs[other.index()].gpus].erase(other);
      break;
    }
  }
  TenantState& t = tenants_[j.tenant.index()];
  if (r.shared) {
    js.run = Run::Shared;
    return;
  }
  if (r.borrowed) {
    js.run = Run::Borrowed;
    js.started_at = r.last_start;
    add_borrowed(s, id);
  } else {
    js.run = Run::Guaranteed;
    t.guaranteed += share(j);
  }
  if (!js.partner.valid()) add_exclusive(j);
}

bool DeepSharePolicy::overlaps(const Placement& a, const Placement& b) {
  for (const auto& x : a)
    for (const auto& y : b)
      if (x.node == y.node && (x.gpu_mask & y.gpu_mask) != 0) return true;
  return false;
}

double DeepSharePolicy::progress(const ClusterSnapshot& s, JobId id) const {
  const JobState& js = job_[id.index()];
  if (s.runtime[id.index()].status != JobStatus::Running) return js.prog;
  return js.prog + static_cast<double>(s.now - js.prog_at) * js.prog_speed;
}

void DeepSharePolicy::settle(JobId id, Time now, double speed) {
  JobState& js = job_[id.index()];
  js.prog += static_cast<double>(now - js.prog_at) * js.prog_speed;
  js.prog_at = now;
  js.prog_speed = speed;
}

// A job whose sharing partner came last cycle: the snapshot now shows its observed rate,
// in effect since the partner came (speeds change only when partners come or go).
void DeepSharePolicy::observe_speeds(const ClusterSnapshot& s) {
  for (JobId id : speed_unknown_) {
    if (id.index() >= s.runtime.size()) continue;
    const JobRuntime& r = s.runtime[id.index()];
    JobState& js = job_[id.index()];
    const double model = js.model_speed;
    js.model_speed = 0;
    if (r.status != JobStatus::Running || js.run == Run::None) continue;
    js.prog_speed = r.speed;
    // Still with the partner it joined: observed slowdown / the model's (speeds are 1 /
    // slowdowns).
    if (model > 0 && r.speed > 0 && js.partner.valid()) {
      ratio_sum_ += model / r.speed;
      ++ratio_n_;
      TenantState& ts = tenants_[s.jobs[id.index()].tenant.index()];
      const double error = 1.0 / r.speed - std::max(1.0, 1.0 / model);
      ++ts.observed_pairs;
      ts.slowdown_error += error;
      ++observed_pairs_;
      slowdown_error_ += error;
      // Beyond a member's bound: the job that joined the pair leaves it (split_pairs).
      const JobId partner = js.partner;
      const double bound = s.tenants[s.jobs[id.index()].tenant.index()].max_slowdown;
      if (c_.split_pairs && 1.0 / r.speed > bound + 1e-9) {
        const JobId joiner = js.run == Run::Shared ? id : partner;
        splits_.emplace_back(joiner, job_[joiner.index()].run_id);
      }
    }
  }
  speed_unknown_.clear();
}

// Probation is the model's, one for the cluster (the interference model is one for all
// pairs): it ends after probation_pairs observed shared jobs of any tenant. It fails for the
// cluster when their mean error exceeds probation_error, and for one tenant when the mean
// error of its own probation_pairs or more observed jobs does.
bool DeepSharePolicy::on_probation() const {
  return c_.probation && observed_pairs_ < c_.probation_pairs;
}

bool DeepSharePolicy::sharing_failed(std::size_t t) const {
  auto failed = [&](int n, double error) {
    return n >= std::max(1, c_.probation_pairs) && error > c_.probation_error * n;
  };
  const TenantState& ts = tenants_[t];
  return c_.probation &&
         (failed(observed_pairs_, slowdown_error_) || failed(ts.observed_pairs, ts.slowdown_error));
}

// Phase 1b: the joiners of pairs observed beyond a member's bound are preempted, each at
// once while it loses at most slice_lost (it just joined: nearly nothing), else at its
// next checkpoint; its partner runs alone again.
void DeepSharePolicy::split_pairs(const ClusterSnapshot& s, FreeMap& free, Decisions& out) {
  std::erase_if(splits_, [&](const std::pair<JobId, std::uint64_t>& e) {
    const auto [id, run] = e;
    JobState& js = job_[id.index()];
    if (js.run_id != run || js.run != Run::Shared || !js.partner.valid() || js.preempted ||
        !s.jobs[id.index()].preemptible || s.runtime[id.index()].status != JobStatus::Running)
      return true;  // ended, or alone already
    const Time lost = lost_now(s, id);
    if (lost > c_.slice_lost) {
      next_wake_ = std::min(next_wake_, on_grid(next_checkpoint(s, id)));
      return false;
    }
    js.no_share = true;
    slice_lost_ += to_seconds(lost) * s.jobs[id.index()].gpus;
    preempted(s, free, out, id);
    ++splits_done_;
    return true;
  });
}

// Sharing backs off when jobs run slower shared than the model predicts: the mean ratio of
// observed to predicted slowdown scales every predicted slowdown, once it exceeds what the
// model's own cross-validated error explains (never below 1: the model is not trusted to
// be pessimistic).
double DeepSharePolicy::slowdown_scale() const {
  if (!c_.learn_sharing || ratio_n_ == 0) return 1.0;
  const double mean = ratio_sum_ / static_cast<double>(ratio_n_);
  return mean > 1.0 + std::max(0.0, model_cv_mae_) ? mean : 1.0;
}

Time DeepSharePolicy::lost_now(const ClusterSnapshot& s, JobId id) const {
  const Time interval = s.tenants[s.jobs[id.index()].tenant.index()].checkpoint_interval;
  const double done = progress(s, id);
  if (interval <= 0 || done <= 0) return 0;
  return static_cast<Time>(std::llround(done - checkpoint_kept(done, interval)));
}

// Wall time at which the running job's progress reaches its next checkpoint at or after
// `from` (at its current rate).
Time DeepSharePolicy::next_checkpoint(const ClusterSnapshot& s, JobId id, Time from) const {
  const JobRuntime& r = s.runtime[id.index()];
  const JobState& js = job_[id.index()];
  from = std::max(from, s.now);
  const Time interval = s.tenants[s.jobs[id.index()].tenant.index()].checkpoint_interval;
  if (interval <= 0 || r.status != JobStatus::Running || js.prog_speed <= 0) return from;
  const double done = progress(s, id) + static_cast<double>(from - s.now) * js.prog_speed;
  const double next = (std::floor(std::max(0.0, done) / interval) + 1) * interval;
  return from + static_cast<Time>(std::ceil((next - done) / js.prog_speed));
}

Time DeepSharePolicy::on_grid(Time t) const {
  if (t == kNever || c_.checkpoint_grid <= 0) return t;
  return (t + c_.checkpoint_grid - 1) / c_.checkpoint_grid * c_.checkpoint_grid;
}

double DeepSharePolicy::cost_of(const ClusterSnapshot& s, JobId id) const {
  const JobSpec& v = s.jobs[id.index()];
  return to_seconds(lost_now(s, id) + restart_overhead(v.gpus)) * v.gpus;
}

// This policy preempts a running job: its GPUs return to `free`, its accounting and its
// progress estimate follow, and it goes back to its queue.
void DeepSharePolicy::preempted(const ClusterSnapshot& s, FreeMap& free, Decisions& out, JobId v) {
  const JobSpec& vj = s.jobs[v.index()];
  JobState& vs = job_[v.index()];
  const Time interval = s.tenants[vj.tenant.index()].checkpoint_interval;
  const double kept = checkpoint_kept(progress(s, v), interval);
  // A shared job holds no GPUs of its own: the snapshot's free share of an oversubscribed
  // GPU is 0, and it becomes free when its partner leaves.
  if (vs.run != Run::Shared) {
    free.give(s.runtime[v.index()].placement, vj.gpu_milli);
    if (vj.gpu_milli == kMilliPerGpu) free_gpus_ += vj.gpus;
  }
  stopped(s, v);
  vs.prog = kept - static_cast<double>(restart_overhead(vj.gpus));
  vs.preempted = true;
  const JobRuntime& vr = s.runtime[v.index()];
  enqueue(vj, s.now, vr.attained + (s.now - vr.last_start));
  out.preempt.push_back({v});
  note_wait(out, v, WaitReason::Priority);  // back in its queue (it may restart below)
}

std::optional<Victim> DeepSharePolicy::as_victim(const ClusterSnapshot& s, JobId id) const {
  const JobState& vs = job_[id.index()];
  const JobRuntime& r = s.runtime[id.index()];
  if (vs.run == Run::None || vs.run == Run::Shared || vs.preempted ||
      r.status != JobStatus::Running || !s.jobs[id.index()].preemptible)
    return std::nullopt;
  Victim v{id, cost_of(s, id), r.last_start, &r.placement, s.jobs[id.index()].gpu_milli};
  if (vs.partner.valid()) {
    const JobId p = vs.partner;
    if (s.runtime[p.index()].status != JobStatus::Running || job_[p.index()].preempted ||
        !s.jobs[p.index()].preemptible)
      return std::nullopt;    // a partner started this cycle, or one that cannot be preempted
    v.cost += cost_of(s, p);  // its GPUs free when it leaves with the pair (no share of its own)
  }
  return v;
}

void DeepSharePolicy::preempt_victim(const ClusterSnapshot& s, FreeMap& free, Decisions& out,
                                     JobId id) {
  const JobId partner = job_[id.index()].partner;
  if (partner.valid()) preempted(s, free, out, partner);  // holds no GPUs of its own: first
  preempted(s, free, out, id);
}

bool DeepSharePolicy::pair_victim(const ClusterSnapshot& s, JobId id, double lost_share) const {
  const JobId p = job_[id.index()].partner;
  if (!c_.pair_victims || !p.valid() || job_[p.index()].run != Run::Shared ||
      job_[p.index()].preempted || !s.jobs[p.index()].preemptible ||
      s.runtime[p.index()].status != JobStatus::Running)
    return false;
  const Time interval = s.tenants[s.jobs[p.index()].tenant.index()].checkpoint_interval;
  return static_cast<double>(lost_now(s, p)) <= lost_share * static_cast<double>(interval);
}

void EndIndex::add(Time end, int share) {
  if (end < mark_)
    overdue_ += share;
  else
    ends_[end] += share;
}

void EndIndex::remove(Time end, int share) {
  if (end < mark_) {
    overdue_ -= share;
    return;
  }
  auto it = ends_.find(end);
  if (it != ends_.end() && (it->second -= share) == 0) ends_.erase(it);
}

int EndIndex::within(Time now, Time horizon) {
  while (!ends_.empty() && ends_.begin()->first < now) {
    overdue_ += ends_.begin()->second;
    ends_.erase(ends_.begin());
  }
  mark_ = std::max(mark_, now);
  int sum = overdue_;
  for (auto it = ends_.begin(); it != ends_.end() && it->first <= now + horizon; ++it)
    sum += it->second;
  return sum;
}

void DeepSharePolicy::add_borrowed(const ClusterSnapshot& s, JobId id) {
  JobState& js = job_[id.index()];
  const JobSpec& j = s.jobs[id.index()];
  tenants_[j.tenant.index()].borrowed += share(j);
  borrowed_sum_ += share(j);
  borrowed_running_.insert(id);
  if (js.borrow_pos == kNoPos) {
    js.borrow_pos = static_cast<std::uint32_t>(borrowed_runs_.size());
    borrowed_runs_.push_back({id, j.gpus, js.predicted});
  }
  ends_cycle_ = 0;  // borrowed_ends() is out of date
  touch(j.tenant.index());
  js.borrow_end = js.started_at + std::max<Time>(0, js.predicted - js.attained0);
  ends_.add(js.borrow_end, share(j));
}

void DeepSharePolicy::remove_borrowed(const ClusterSnapshot& s, JobId id) {
  const JobSpec& j = s.jobs[id.index()];
  tenants_[j.tenant.index()].borrowed -= share(j);
  borrowed_sum_ -= share(j);
  borrowed_running_.erase(id);
  if (const std::uint32_t pos = job_[id.index()].borrow_pos; pos != kNoPos) {
    borrowed_runs_[pos] = borrowed_runs_.back();
    job_[borrowed_runs_[pos].id.index()].borrow_pos = pos;
    borrowed_runs_.pop_back();
    job_[id.index()].borrow_pos = kNoPos;
  }
  ends_cycle_ = 0;
  ends_.remove(job_[id.index()].borrow_end, share(j));
}

Time DeepSharePolicy::remaining(const JobRuntime& r, Time now, Time predicted) {
  const Time ran = r.attained + (now - r.last_start);
  return std::max<Time>(kMinute, predicted - ran);
}

void DeepSharePolicy::touch(std::size_t t) {
  TenantState& ts = tenants_[t];
  if (!ts.assurance_dirty) assurance_dirty_.push_back(t);
  if (!ts.lending_dirty) lending_dirty_.push_back(t);
  ts.assurance_dirty = ts.lending_dirty = true;
}

// Phase 2: the tenants whose inputs changed, those with entitled jobs waiting (their delay
// term moves with time), and every tenant each assurance_refresh.
void DeepSharePolicy::update_assurance(const ClusterSnapshot& s) {
  const int total = borrowed_total();
  Time horizon = -1;  // the back share for one SLO at a time (usually all tenants')
  double back = 1.0;
  auto refresh = [&](std::size_t t) {
    TenantState& ts = tenants_[t];
    ts.assurance_dirty = false;
    AssuranceInputs a;
    a.quota = quota(s, t);
    a.held = ts.guaranteed + ts.borrowed;
    a.demand = a.held + ts.pending_gpus;
    a.slo = s.tenants[t].slo_queue;
    if (!ts.entitled.empty()) a.oldest_wait = s.now - ts.entitled.begin()->first;
    a.lent = ts.lent;
    if (total > 0 && a.lent > 0 && c_.prediction) {
      // A job's remaining time is at least a minute (remaining()).
      const Time h = std::max(a.slo, kMinute);
      if (h != horizon) {
        horizon = h;
        back = static_cast<double>(ends_.within(s.now, h)) / total;
      }
      a.lent_back = back;
    }
    signal_.update(t, s.now, a);
    const double alpha = forecast_decay_.alpha(s.now - ts.forecast_at, c_.demand_tau);
    ts.forecast += alpha * (a.demand - ts.forecast);
    ts.forecast_at = s.now;
  };
  if (s.now - assurance_at_ >= c_.assurance_refresh) {
    assurance_at_ = s.now;
    for (std::size_t t = 0; t < tenants_.size(); ++t) refresh(t);
  } else {
    for (std::size_t t : assurance_dirty_)
      if (tenants_[t].assurance_dirty) refresh(t);
    for (std::size_t t : entitled_tenants_)
      if (s.now != signal_.updated(t)) refresh(t);
  }
  assurance_dirty_.clear();
}

void DeepSharePolicy::start(const ClusterSnapshot& s, FreeMap& free, Decisions& out,
                            const JobSpec& j, Placement p, Run run) {
  free.take(p, j.gpu_milli);
  if (j.gpu_milli == kMilliPerGpu) free_gpus_ -= j.gpus;
  dequeue(j);
  JobState& js = job_[j.id.index()];
  js.entitled = false;  // its start was what entitlement promised; requeued, it is like others
  js.run = run;
  js.attained0 = s.runtime[j.id.index()].attained;
  js.started_at = s.now;
  js.prog_at = s.now;  // js.prog: kept progress (0 at first start)
  js.prog_speed = 1;
  TenantState& t = tenants_[j.tenant.index()];
  touch(j.tenant.index());
  if (run == Run::Guaranteed) {
    t.guaranteed += share(j);
    js.away = is_away(s, j, p);
    if (js.away) away_running_.insert(j.id);
  } else {
    add_borrowed(s, j.id);
    ++borrowed_starts_;
  }
  track_run(s, j.id);  // after `away` is known
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

std::optional<Placement> DeepSharePolicy::place_guaranteed(const FreeMap& free,
                                                           const JobSpec& j) const {
  const FreeMap::SetId home = home_set_[j.tenant.index()];
  if (auto p = place_job(free, home, j)) return p;
  if (home == all_set_) return std::nullopt;
  return place_job(free, all_set_, j);  // away
}

bool DeepSharePolicy::is_away(const ClusterSnapshot& s, const JobSpec& j,
                              const Placement& p) const {
  for (const auto& a : p) {
    const TenantId owner = s.cluster->nodes[a.node.index()].owner;
    if (owner.valid() && owner.index() < tenants_.size() && owner != j.tenant) return true;
  }
  return false;
}

// At home first (borrowers, others' jobs away there, and whatever own jobs the caller
// offers); else anywhere, with borrowers only (the job then runs away).
std::optional<ReclaimPlan> DeepSharePolicy::plan_home(const FreeMap& free, const JobSpec& j,
                                                      std::vector<Victim> candidates) const {
  const auto& home = home_[j.tenant.index()];
  if (auto plan = plan_reclaim(free, home, j, candidates)) return plan;
  if (home.size() == nodes_.size()) return std::nullopt;
  std::erase_if(candidates, [&](const Victim& v) {
    const JobState& vs = job_[v.job.index()];
    return vs.run != Run::Borrowed ||
           (vs.partner.valid() && job_[vs.partner.index()].quota_counted);
  });
  return plan_reclaim(free, nodes_, j, std::move(candidates));
}

bool DeepSharePolicy::fits_quota(const ClusterSnapshot& s, const JobSpec& j) const {
  return tenants_[j.tenant.index()].guaranteed + share(j) <= quota(s, j.tenant.index());
}

}  // namespace deepshare

std::unique_ptr<Policy> make_deepshare(const PolicyContext& ctx) {
  return std::make_unique<deepshare::DeepSharePolicy>(ctx);
}

const char* deepshare_options() {
  return deepshare::option_keys();
}

}  // namespace ds
