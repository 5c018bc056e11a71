#include "sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <queue>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "model/apply.hpp"
#include "model/cluster_state.hpp"
#include "sim/sample_bound.hpp"

namespace ds {
namespace {

enum class EventKind : std::uint8_t { Complete, Wake, Cancel, Restart };

struct Event {
  Time t;
  std::uint64_t seq;
  EventKind kind;
  JobId job;
  std::uint32_t version;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

double time_slicing(const JobSpec&, std::span<const JobSpec* const> others) {
  return 1.0 / static_cast<double>(others.size() + 1);
}

// The simulator: its events around the ClusterState, and the hooks of the one apply()
// (model/apply.hpp) for what it adds to a decision: progress, checkpoint loss, restart
// overhead, start latency, speeds and metrics.
class Engine final : private ApplyHooks {
 public:
  Engine(const Workload& w, const PolicyFactory& make, const SimConfig& c)
      : w_(w),
        make_(make),
        policy_(make()),
        cfg_(c),
        n_(w.jobs.size()),
        state_(w.cluster, w.tenants),
        remaining_(n_, 0.0),
        progressed_at_(n_, 0),
        version_(n_, 0),
        gpu_sm_(static_cast<std::size_t>(w.cluster.total_gpus()), 0.0),
        telemetry_(w.tenants.size()),
        latency_rng_(c.latency_seed) {
    state_.set_jobs(w.jobs, w.profiles);  // the state's own copy: flags may change
    res_.jobs.resize(n_);
    if (!cfg_.speed_model) cfg_.speed_model = time_slicing;
    if (cfg_.sample_interval <= 0) cfg_.sample_interval = seconds(600);
    for (const auto& c : cfg_.cancellations) {
      if (!c.job.valid() || c.job.index() >= n_) throw std::invalid_argument("cancel: unknown job");
      events_.push({c.at, seq_++, EventKind::Cancel, c.job, 0});
    }
    if (!cfg_.restart_policy_at.empty() && !make_)
      throw std::invalid_argument("restart_policy_at needs simulate() with a policy factory");
    for (Time t : cfg_.restart_policy_at) events_.push({t, seq_++, EventKind::Restart, JobId(), 0});
  }

  RunRecord run() {
    const Time origin = n_ ? w_.jobs.front().submit : 0;
    res_.origin = origin;
    next_sample_ =
        origin - ((origin % cfg_.sample_interval) + cfg_.sample_interval) % cfg_.sample_interval;
    std::size_t next_arrival = 0;
    std::size_t iterations = 0;
    for (;;) {
      Time t = next_arrival < n_ ? w_.jobs[next_arrival].submit : kNever;
      if (!events_.empty()) t = std::min(t, events_.top().t);
      if (t == kNever) break;
      if (t > cfg_.max_time)  // a hard cap: a run that never ends is no result
        throw InputError("stopped: the simulation passed " +
                         std::to_string(cfg_.max_time / limits::kYear) +
                         " years of simulated time with jobs unfinished");
      emit_samples_before(t);
      now_ = t;
      bool happened = false;  // stale completions (of preempted or re-timed runs) are no events
      bool restart = false;
      while (!events_.empty() && events_.top().t == now_) {
        Event e = events_.top();
        events_.pop();
        switch (e.kind) {
          case EventKind::Wake:
            if (wake_at_ == now_) wake_at_ = kNever;
            happened = true;
            break;
          case EventKind::Complete:
            if (e.version == version_[e.job.index()] &&
                state_.runtime(e.job).status == JobStatus::Running) {
              complete(e.job);
              happened = true;
            }
            break;
          case EventKind::Cancel:
            if (state_.runtime(e.job).status == JobStatus::Pending) {
              state_.withdraw(e.job, now_);
              res_.jobs[e.job.index()].reject_reason = "cancelled while waiting";
              ++settled_;
              happened = true;
            }
            break;
          case EventKind::Restart:
            restart = happened = true;
            break;
        }
      }
      if (restart) restart_policy();
      while (next_arrival < n_ && w_.jobs[next_arrival].submit == now_) {
        remaining_[next_arrival] = static_cast<double>(w_.truth[next_arrival].work);
        state_.submit(JobId(static_cast<std::uint32_t>(next_arrival++)), now_);
        happened = true;
      }
      if (!happened) continue;
      cycle();
      record_step();
      if (cfg_.progress && (++iterations & 4095) == 0) cfg_.progress(now_, settled_, n_);
    }
    emit_samples_before(now_ + 1);
    state_.touch_all(now_);
    state_.close_waits(now_);
    res_.end = now_;
    res_.tenants.assign(state_.tenant_totals().begin(), state_.tenant_totals().end());
    res_.wait_ms_by_reason = state_.wait_totals();
    for (std::size_t i = 0; i < n_; ++i) {
      const JobId id(static_cast<std::uint32_t>(i));
      const JobRuntime& r = state_.runtime(id);
      JobOutcome& out = res_.jobs[i];
      // A job cancelled while waiting never ran: it leaves the run as rejected, with why.
      out.status =
          r.status == JobStatus::Done && out.end == kNever ? JobStatus::Rejected : r.status;
      out.entitled = r.entitled;
      out.wait_reason = state_.longest_wait_reason(id);
    }
    policy_->summarize(res_.policy_summary);
    if (cfg_.progress) cfg_.progress(now_, settled_, n_);
    return std::move(res_);
  }

 private:
  // --- metrics -------------------------------------------------------------------
  void emit_samples_before(Time t) {
    while (next_sample_ < t && n_ > 0) {
      ClusterSample s{next_sample_,
                      state_.busy_gpus(),
                      state_.allocated_gpus(),
                      sm_total_,
                      static_cast<int>(state_.running().size()),
                      static_cast<int>(state_.pending().size()),
                      saturate_int(state_.pending_gpus()),
                      preemptions_,
                      lost_gpu_ms_ / 3.6e6};
      res_.samples.push_back(s);
      std::fill(telemetry_.begin(), telemetry_.end(), TenantTelemetry{});
      policy_->telemetry(telemetry_);
      for (std::size_t k = 0; k < w_.tenants.size(); ++k) {
        const TenantUsage& u = state_.usage(TenantId(static_cast<std::uint32_t>(k)));
        const auto& tel = telemetry_[k];
        res_.tenant_samples.push_back({tel.assurance, tel.lent_gpus, tel.reserve_gpus, gpus(u.held),
                                       gpus(u.borrowed), u.running_jobs, u.pending_jobs,
                                       saturate_int(u.pending_gpus)});
      }
      next_sample_ += cfg_.sample_interval;
      if (cfg_.max_samples >= 2 && res_.samples.size() >= cfg_.max_samples) {
        cfg_.sample_interval = thin_samples(res_, w_.tenants.size(), cfg_.sample_interval);
        next_sample_ = res_.samples.back().t + cfg_.sample_interval;
      }
    }
  }

  void record_step() {
    StepPoint p{now_, state_.busy_gpus(), state_.allocated_gpus(), sm_total_};
    if (!res_.steps.empty()) {
      const StepPoint& last = res_.steps.back();
      if (last.busy_gpus == p.busy_gpus && last.allocated_gpus == p.allocated_gpus &&
          last.sm_sum == p.sm_sum)
        return;
      if (last.t == p.t) {
        res_.steps.back() = p;
        return;
      }
    }
    res_.steps.push_back(p);
  }

  const JobSpec& spec(JobId id) const { return w_.jobs[id.index()]; }
  static int gpus(std::int64_t milli_gpus) {
    return static_cast<int>((milli_gpus + kMilliPerGpu / 2) / kMilliPerGpu);
  }
  double util_of(const JobSpec& j) const { return j.gpu_util >= 0 ? j.gpu_util : 100.0; }

  // --- job transitions -----------------------------------------------------------
  void complete(JobId id) {
    const Placement p = state_.runtime(id).placement;
    state_.finish(id, now_);
    res_.jobs[id.index()].end = now_;
    ++settled_;
    after_release(p);
  }

  // --- the hooks of apply() --------------------------------------------------------
  void reject(const RejectJob& d) override {
    res_.jobs[d.job.index()].reject_reason = d.reason;
    ++settled_;
  }

  // The victim's progress up to now, what its checkpoint keeps, and its restart overhead.
  Preempted preempt(JobId id) override {
    const JobSpec& j = spec(id);
    advance_progress(id);
    const Time work = w_.truth[id.index()].work;
    const double done = static_cast<double>(work) - remaining_[id.index()];
    const double kept = checkpoint_kept(done, w_.tenants[j.tenant.index()].checkpoint_interval);
    const Time overhead = cfg_.restart_overhead.of(j.gpus);
    auto& out = res_.jobs[id.index()];
    out.lost_work += static_cast<Time>(std::llround(done - kept));
    ++preemptions_;
    lost_gpu_ms_ += (done - kept) * j.gpus;
    out.overhead += overhead;
    ++out.preemptions;
    remaining_[id.index()] = static_cast<double>(work) - kept + static_cast<double>(overhead);
    ++version_[id.index()];
    if (!cfg_.restarts_colocatable) state_.set_colocatable(id, false);
    return Preempted::Requeued;
  }

  void preempted(JobId, const Placement& released) override { after_release(released); }

  Time running_at(const StartJob&, Time now) override { return now + start_latency(); }

  void started(const StartJob& d, Time queued_since, Time running_at) override {
    const JobId id = d.job;
    auto& out = res_.jobs[id.index()];
    out.queue += running_at - queued_since;
    if (out.first_start == kNever) out.first_start = running_at;
    progressed_at_[id.index()] = running_at;  // no progress during the start latency
    refresh_speeds(id);
    schedule_completion(id);
  }

  Time start_latency() {
    if (cfg_.start_latency_jitter <= 0) return cfg_.start_latency;
    const double j = static_cast<double>(cfg_.start_latency_jitter);
    const auto drawn = static_cast<Time>(std::llround(latency_rng_.uniform(-j, j)));
    return std::max<Time>(0, cfg_.start_latency + drawn);
  }

  // The first decisions of a fresh policy object: everything it must learn at once.
  void restart_policy() {
    policy_ = make_();
    state_.present_all();
  }

  // --- GPUs and speeds -----------------------------------------------------------
  // Speeds of the jobs left on the GPUs of placement `p`, and their SM accounting.
  void after_release(const Placement& p) {
    std::vector<JobId> neighbours;
    state_.for_each_gpu(p, [&](std::size_t g, NodeId) {
      for (JobId o : state_.jobs_on_gpu(g)) neighbours.push_back(o);
      update_gpu_sm(g);
    });
    std::sort(neighbours.begin(), neighbours.end());
    neighbours.erase(std::unique(neighbours.begin(), neighbours.end()), neighbours.end());
    for (JobId o : neighbours) set_speed(o, speed_for(o));
  }

  // The speed of a job: the slowest of its shared GPUs as the speed model says (a model
  // may report a speed above 1, as Lucid's measured pairs do); 1 when no GPU is shared.
  double speed_for(JobId id) {
    double speed = -1;
    std::vector<const JobSpec*> others;
    state_.for_each_gpu(state_.runtime(id).placement, [&](std::size_t g, NodeId) {
      const GpuState& s = state_.gpu(g);
      if (s.jobs <= 1 || s.milli_used <= kMilliPerGpu) return;
      others.clear();
      for (JobId o : state_.jobs_on_gpu(g))
        if (o != id) others.push_back(&spec(o));
      const double v = cfg_.speed_model(spec(id), others);
      speed = speed < 0 ? v : std::min(speed, v);
    });
    return speed < 0 ? 1.0 : speed;
  }

  void refresh_speeds(JobId started) {
    const Placement& p = state_.runtime(started).placement;
    // Alone on its GPUs (the common case): it runs at full speed and nobody else changes.
    bool shared = false;
    state_.for_each_gpu(p,
                        [&](std::size_t g, NodeId) { shared = shared || state_.gpu(g).jobs > 1; });
    if (!shared) {
      set_speed(started, 1.0);
      state_.for_each_gpu(p, [&](std::size_t g, NodeId) { update_gpu_sm(g); });
      return;
    }
    std::vector<JobId> affected{started};
    state_.for_each_gpu(p, [&](std::size_t g, NodeId) {
      for (JobId o : state_.jobs_on_gpu(g)) affected.push_back(o);
    });
    std::sort(affected.begin(), affected.end());
    affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
    for (JobId o : affected) set_speed(o, speed_for(o));
    state_.for_each_gpu(p, [&](std::size_t g, NodeId) { update_gpu_sm(g); });
  }

  void update_gpu_sm(std::size_t g) {
    double sum = 0;
    for (JobId o : state_.jobs_on_gpu(g)) sum += util_of(spec(o)) * state_.runtime(o).speed;
    const double v = std::min(100.0, sum);
    sm_total_ += v - gpu_sm_[g];
    gpu_sm_[g] = v;
  }

  void advance_progress(JobId id) {
    if (progressed_at_[id.index()] > now_) return;  // still within its start latency
    const Time dt = now_ - progressed_at_[id.index()];
    if (dt > 0) remaining_[id.index()] -= static_cast<double>(dt) * state_.runtime(id).speed;
    if (remaining_[id.index()] < 0) remaining_[id.index()] = 0;
    progressed_at_[id.index()] = now_;
  }

  void set_speed(JobId id, double speed) {
    const JobRuntime& r = state_.runtime(id);
    if (r.status != JobStatus::Running || speed == r.speed) return;
    advance_progress(id);
    state_.set_speed(id, speed);
    if (speed > 0)
      res_.jobs[id.index()].max_slowdown =
          std::max(res_.jobs[id.index()].max_slowdown, 1.0 / speed);
    state_.for_each_gpu(r.placement, [&](std::size_t g, NodeId) { update_gpu_sm(g); });
    ++version_[id.index()];
    schedule_completion(id);
  }

  void schedule_completion(JobId id) {
    const double speed = state_.runtime(id).speed;
    if (speed <= 0) return;
    const double left = remaining_[id.index()] / speed;
    const Time from = std::max(now_, progressed_at_[id.index()]);     // after the start latency
    const Time end = from + saturating_time(std::ceil(left - 1e-9));  // max_time stops it
    events_.push({end, seq_++, EventKind::Complete, id, version_[id.index()]});
  }

  // --- the policy cycle ----------------------------------------------------------
  void cycle() {
    Decisions d = policy_->decide(state_.snapshot(now_));
    ++res_.cycles;
    state_.clear_deltas();
    const ApplyReport applied = apply(state_, d, now_, *this);
    if (!applied.refused.empty()) {  // a policy bug: the run stops on the first
      const Refused& r = applied.refused.front();
      check(false, r.job, r.what.c_str());
    }
    res_.decisions_applied += d.reject.size() + d.preempt.size() + d.start.size();
    if (d.wake_at != kNever) {
      check(d.wake_at > now_, JobId(), "asks to wake up at or before now");
      if (d.wake_at < wake_at_ || wake_at_ <= now_) {
        wake_at_ = d.wake_at;
        events_.push({d.wake_at, seq_++, EventKind::Wake, JobId(), 0});
      }
    }
  }

  void check(bool ok, JobId id, const char* what) const {
    if (ok) return;
    std::string who = id.valid() && id.index() < n_ ? " job '" + spec(id).name + "'" : "";
    throw DecisionError("policy decision at t=" + std::to_string(now_) + " ms" + who + ": " + what);
  }

  const Workload& w_;
  PolicyFactory make_;
  std::unique_ptr<Policy> policy_;
  SimConfig cfg_;
  std::size_t n_;
  ClusterState state_;
  std::vector<double> remaining_;
  std::vector<Time> progressed_at_;
  std::vector<std::uint32_t> version_;
  std::vector<double> gpu_sm_;
  std::vector<TenantTelemetry> telemetry_;
  Rng latency_rng_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  RunRecord res_;
  Time now_ = 0;
  Time wake_at_ = kNever;
  Time next_sample_ = 0;
  std::uint64_t seq_ = 0;
  double sm_total_ = 0;
  std::size_t preemptions_ = 0;
  double lost_gpu_ms_ = 0;
  std::size_t settled_ = 0;
};

// A policy object owned by the caller, for the overload without a factory.
class Borrowed final : public Policy {
 public:
  explicit Borrowed(Policy& p) : p_(p) {}
  Decisions decide(const ClusterSnapshot& s) override { return p_.decide(s); }
  void telemetry(std::span<TenantTelemetry> t) const override { p_.telemetry(t); }
  void summarize(std::map<std::string, double>& out) const override { p_.summarize(out); }

 private:
  Policy& p_;
};

}  // namespace

RunRecord simulate(const Workload& workload, const PolicyFactory& make, const SimConfig& config) {
  Engine engine(workload, make, config);
  return engine.run();
}

RunRecord simulate(const Workload& workload, Policy& policy, const SimConfig& config) {
  if (!config.restart_policy_at.empty())
    throw std::invalid_argument("restart_policy_at needs simulate() with a policy factory");
  bool made = false;
  PolicyFactory once = [&]() -> std::unique_ptr<Policy> {
    if (made) throw std::logic_error("simulate: a borrowed policy cannot be restarted");
    made = true;
    return std::make_unique<Borrowed>(policy);
  };
  Engine engine(workload, once, config);
  return engine.run();
}

}  // namespace ds
