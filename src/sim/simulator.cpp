#include "sim/simulator.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <queue>
#include <stdexcept>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "sim/sample_bound.hpp"

namespace ds {
namespace {

enum class EventKind : std::uint8_t { Complete, Wake };

struct Event {
  Time t;
  std::uint64_t seq;
  EventKind kind;
  JobId job;
  std::uint32_t version;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

// A dense set of job ids with O(1) insert/erase (order unspecified).
class IdSet {
 public:
  explicit IdSet(std::size_t capacity) : pos_(capacity, -1) {}
  void insert(JobId id) {
    pos_[id.index()] = static_cast<std::int32_t>(ids_.size());
    ids_.push_back(id);
  }
  void erase(JobId id) {
    auto p = static_cast<std::size_t>(pos_[id.index()]);
    ids_[p] = ids_.back();
    pos_[ids_[p].index()] = static_cast<std::int32_t>(p);
    ids_.pop_back();
    pos_[id.index()] = -1;
  }
  [[nodiscard]] std::span<const JobId> view() const { return ids_; }
  [[nodiscard]] std::size_t size() const { return ids_.size(); }

 private:
  std::vector<JobId> ids_;
  std::vector<std::int32_t> pos_;
};

// Tenant GPU quantities are in milli-GPUs (GPUs x gpu_milli), so that fractional
// requests count as the share of a GPU they ask for.
struct TenantState {
  int held = 0;             // running jobs
  int borrowed = 0;         // running borrowed jobs
  std::int64_t demand = 0;  // pending + running jobs (int64: a sum over every job)
  int guaranteed = 0;       // running non-borrowed jobs
  int queued_entitled = 0;
  int running_jobs = 0;
  int pending_jobs = 0;
  std::int64_t pending_gpus = 0;
  Time last = 0;
};

double time_slicing(const JobSpec&, std::span<const JobSpec* const> others) {
  return 1.0 / static_cast<double>(others.size() + 1);
}

class Engine {
 public:
  Engine(const Workload& w, Policy& p, const SimConfig& c)
      : w_(w),
        policy_(p),
        cfg_(c),
        n_(w.jobs.size()),
        rt_(n_),
        remaining_(n_, 0.0),
        progressed_at_(n_, 0),
        version_(n_, 0),
        pending_(n_),
        running_(n_),
        gpus_(static_cast<std::size_t>(w.cluster.total_gpus())),
        gpu_free_(gpus_.size(), static_cast<std::int16_t>(kMilliPerGpu)),
        gpu_jobs_(gpus_.size()),
        gpu_sm_(gpus_.size(), 0.0),
        node_free_(w.cluster.nodes.size()),
        tenants_(w.tenants.size()),
        telemetry_(w.tenants.size()),
        latency_rng_(c.latency_seed) {
    for (const auto& node : w.cluster.nodes) node_free_[node.id.index()] = node.gpus;
    res_.jobs.resize(n_);
    res_.tenants.resize(w.tenants.size());
    if (!cfg_.speed_model) cfg_.speed_model = time_slicing;
    if (cfg_.sample_interval <= 0) cfg_.sample_interval = seconds(600);
  }

  RunRecord run() {
    const Time origin = n_ ? w_.jobs.front().submit : 0;
    res_.origin = origin;
    next_sample_ =
        origin - ((origin % cfg_.sample_interval) + cfg_.sample_interval) % cfg_.sample_interval;
    for (auto& t : tenants_) t.last = origin;
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
      while (!events_.empty() && events_.top().t == now_) {
        Event e = events_.top();
        events_.pop();
        if (e.kind == EventKind::Wake) {
          if (wake_at_ == now_) wake_at_ = kNever;
          happened = true;
        } else if (e.version == version_[e.job.index()] &&
                   rt_[e.job.index()].status == JobStatus::Running) {
          complete(e.job);
          happened = true;
        }
      }
      while (next_arrival < n_ && w_.jobs[next_arrival].submit == now_) {
        arrive(JobId(static_cast<std::uint32_t>(next_arrival++)));
        happened = true;
      }
      if (!happened) continue;
      cycle();
      record_step();
      if (cfg_.progress && (++iterations & 4095) == 0) cfg_.progress(now_, settled_, n_);
    }
    emit_samples_before(now_ + 1);
    for (std::size_t i = 0; i < tenants_.size(); ++i)
      touch(TenantId(static_cast<std::uint32_t>(i)));
    res_.end = now_;
    for (std::size_t i = 0; i < n_; ++i) res_.jobs[i].status = rt_[i].status;
    policy_.summarize(res_.policy_summary);
    if (cfg_.progress) cfg_.progress(now_, settled_, n_);
    return std::move(res_);
  }

 private:
  // --- bookkeeping -------------------------------------------------------
  void touch(TenantId id) {
    TenantState& t = tenants_[id.index()];
    if (now_ > t.last) {
      const double dt = static_cast<double>(now_ - t.last);
      auto& tot = res_.tenants[id.index()];
      tot.received_gpu_ms += dt * t.held / kMilliPerGpu;
      tot.entitled_gpu_ms +=
          dt * std::min<std::int64_t>(w_.tenants[id.index()].quota_gpus * kMilliPerGpu, t.demand) /
          kMilliPerGpu;
      t.last = now_;
    }
  }

  void emit_samples_before(Time t) {
    while (next_sample_ < t && n_ > 0) {
      ClusterSample s{next_sample_,
                      busy_,
                      allocated_,
                      sm_total_,
                      static_cast<int>(running_.size()),
                      static_cast<int>(pending_.size()),
                      saturate_int(pending_gpus_),
                      preemptions_,
                      lost_gpu_ms_ / 3.6e6};
      res_.samples.push_back(s);
      std::fill(telemetry_.begin(), telemetry_.end(), TenantTelemetry{});
      policy_.telemetry(telemetry_);
      for (std::size_t k = 0; k < tenants_.size(); ++k) {
        const auto& ts = tenants_[k];
        const auto& tel = telemetry_[k];
        res_.tenant_samples.push_back({tel.assurance, tel.lent_gpus, tel.reserve_gpus,
                                       gpus(ts.held), gpus(ts.borrowed), ts.running_jobs,
                                       ts.pending_jobs, saturate_int(ts.pending_gpus)});
      }
      next_sample_ += cfg_.sample_interval;
      if (cfg_.max_samples >= 2 && res_.samples.size() >= cfg_.max_samples) {
        cfg_.sample_interval = thin_samples(res_, tenants_.size(), cfg_.sample_interval);
        next_sample_ = res_.samples.back().t + cfg_.sample_interval;
      }
    }
  }

  void record_step() {
    StepPoint p{now_, busy_, allocated_, sm_total_};
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
  static int milli(const JobSpec& j) { return j.gpus * j.gpu_milli; }
  static int gpus(int milli_gpus) { return (milli_gpus + kMilliPerGpu / 2) / kMilliPerGpu; }
  double util_of(const JobSpec& j) const { return j.gpu_util >= 0 ? j.gpu_util : 100.0; }

  void add_pending(JobId id) {
    const JobSpec& j = spec(id);
    TenantState& t = tenants_[j.tenant.index()];
    pending_.insert(id);
    rt_[id.index()].status = JobStatus::Pending;
    rt_[id.index()].queued_since = now_;
    ++t.pending_jobs;
    t.pending_gpus += j.gpus;
    pending_gpus_ += j.gpus;
    if (res_.jobs[id.index()].entitled) t.queued_entitled += milli(j);
  }

  void remove_pending(JobId id) {
    const JobSpec& j = spec(id);
    TenantState& t = tenants_[j.tenant.index()];
    pending_.erase(id);
    --t.pending_jobs;
    t.pending_gpus -= j.gpus;
    pending_gpus_ -= j.gpus;
    if (res_.jobs[id.index()].entitled) t.queued_entitled -= milli(j);
  }

  // --- job transitions ---------------------------------------------------
  void arrive(JobId id) {
    const JobSpec& j = spec(id);
    touch(j.tenant);
    TenantState& t = tenants_[j.tenant.index()];
    const int quota = w_.tenants[j.tenant.index()].quota_gpus * kMilliPerGpu;
    res_.jobs[id.index()].entitled = t.guaranteed + t.queued_entitled + milli(j) <= quota;
    remaining_[id.index()] = static_cast<double>(w_.truth[id.index()].work);
    t.demand += milli(j);
    add_pending(id);
    arrived_.push_back(id);
  }

  void complete(JobId id) {
    const JobSpec& j = spec(id);
    touch(j.tenant);
    JobRuntime& r = rt_[id.index()];
    r.attained += now_ - r.last_start;
    release_gpus(id);
    TenantState& t = tenants_[j.tenant.index()];
    t.held -= milli(j);
    t.demand -= milli(j);
    --t.running_jobs;
    if (r.borrowed)
      t.borrowed -= milli(j);
    else
      t.guaranteed -= milli(j);
    running_.erase(id);
    r.status = JobStatus::Done;
    r.end = now_;
    r.placement.clear();
    res_.jobs[id.index()].end = now_;
    ++settled_;
    finished_.push_back({id, r.attained});
  }

  void reject(const RejectJob& d) {
    check(d.job.index() < n_ && rt_[d.job.index()].status == JobStatus::Pending, d.job,
          "rejects a job that is not pending");
    check(!d.reason.empty(), d.job, "rejects a job without a reason");
    const JobSpec& j = spec(d.job);
    touch(j.tenant);
    remove_pending(d.job);
    tenants_[j.tenant.index()].demand -= milli(j);
    rt_[d.job.index()].status = JobStatus::Rejected;
    res_.jobs[d.job.index()].reject_reason = d.reason;
    ++settled_;
  }

  void preempt(JobId id) {
    check(id.index() < n_ && rt_[id.index()].status == JobStatus::Running, id,
          "preempts a job that is not running");
    const JobSpec& j = spec(id);
    touch(j.tenant);
    JobRuntime& r = rt_[id.index()];
    advance_progress(id);
    const Time work = w_.truth[id.index()].work;
    const double done = static_cast<double>(work) - remaining_[id.index()];
    const Time interval = w_.tenants[j.tenant.index()].checkpoint_interval;
    double kept = done;
    // done < 0: preempted again before it paid its restart overhead; the unpaid rest is
    // carried (kept = done), never rounded down to -interval (which added a whole phantom
    // checkpoint interval of work per such preemption: 31 years at 1e9 s).
    if (interval > 0 && done > 0)
      kept = std::floor(done / static_cast<double>(interval)) * interval;
    const Time overhead = j.gpus <= 8 ? cfg_.restart_overhead_small : cfg_.restart_overhead_large;
    auto& out = res_.jobs[id.index()];
    out.lost_work += static_cast<Time>(std::llround(done - kept));
    ++preemptions_;
    lost_gpu_ms_ += (done - kept) * j.gpus;
    out.overhead += overhead;
    ++out.preemptions;
    remaining_[id.index()] = static_cast<double>(work) - kept + static_cast<double>(overhead);
    ++version_[id.index()];
    r.attained += std::max<Time>(0, now_ - r.last_start);  // 0 if preempted while starting
    ++r.preemptions;
    release_gpus(id);
    TenantState& t = tenants_[j.tenant.index()];
    t.held -= milli(j);
    --t.running_jobs;
    if (r.borrowed)
      t.borrowed -= milli(j);
    else
      t.guaranteed -= milli(j);
    r.placement.clear();
    r.borrowed = r.shared = false;
    running_.erase(id);
    add_pending(id);
    requeued_.push_back(id);
  }

  Time start_latency() {
    if (cfg_.start_latency_jitter <= 0) return cfg_.start_latency;
    const double j = static_cast<double>(cfg_.start_latency_jitter);
    const auto drawn = static_cast<Time>(std::llround(latency_rng_.uniform(-j, j)));
    return std::max<Time>(0, cfg_.start_latency + drawn);
  }

  void start(StartJob& d) {
    const JobId id = d.job;
    check(id.index() < n_ && rt_[id.index()].status == JobStatus::Pending, id,
          "starts a job that is not pending");
    const JobSpec& j = spec(id);
    validate_placement(d, j);
    touch(j.tenant);
    remove_pending(id);
    JobRuntime& r = rt_[id.index()];
    auto& out = res_.jobs[id.index()];
    const Time running_at = now_ + start_latency();
    out.queue += running_at - r.queued_since;
    if (r.first_start == kNever) {
      r.first_start = running_at;
      out.first_start = running_at;
    }
    r.last_start = running_at;
    r.status = JobStatus::Running;
    r.borrowed = d.borrowed;
    r.shared = d.shared;
    r.placement = std::move(d.placement);
    r.speed = 1.0;
    progressed_at_[id.index()] = running_at;  // no progress during the start latency
    TenantState& t = tenants_[j.tenant.index()];
    t.held += milli(j);
    ++t.running_jobs;
    if (r.borrowed)
      t.borrowed += milli(j);
    else
      t.guaranteed += milli(j);
    running_.insert(id);
    occupy_gpus(id);
    schedule_completion(id);
  }

  // --- GPUs and speeds ---------------------------------------------------
  template <class F>
  void for_each_gpu(const Placement& p, F&& f) {
    for (const auto& a : p) {
      const Node& node = w_.cluster.nodes[a.node.index()];
      for (std::uint64_t m = a.gpu_mask; m != 0; m &= m - 1)
        f(static_cast<std::size_t>(node.first_gpu + std::countr_zero(m)), a.node);
    }
  }

  void validate_placement(const StartJob& d, const JobSpec& j) {
    int total = 0;
    for (const auto& a : d.placement) {
      check(a.node.valid() && a.node.index() < w_.cluster.nodes.size(), d.job,
            "places a job on an unknown node");
      const Node& node = w_.cluster.nodes[a.node.index()];
      check(node.gpus >= 64 || (a.gpu_mask >> node.gpus) == 0, d.job,
            "uses a GPU index beyond its node");
      total += a.gpus();
    }
    check(total == j.gpus, d.job, "places a job on a different number of GPUs than it asks for");
    for_each_gpu(d.placement, [&](std::size_t g, NodeId n) {
      if (d.shared) {
        const double mem = gpus_[g].memory_used_mib + j.gpu_memory_mib;
        if (mem <= static_cast<double>(w_.cluster.nodes[n.index()].gpu_memory_mib)) return;
        std::string on;
        for (JobId other : gpu_jobs_[g]) on += " '" + spec(other).name + "'";
        const std::string what = "shares GPU " + std::to_string(g) + " (with" + on + ", " +
                                 std::to_string(gpus_[g].memory_used_mib) +
                                 " MiB used) but needs " +
                                 std::to_string(static_cast<long long>(j.gpu_memory_mib)) +
                                 " MiB more: its memory would overflow";
        check(false, d.job, what.c_str());
      } else {
        check(gpu_free_[g] >= j.gpu_milli && (j.gpu_milli < kMilliPerGpu || gpus_[g].jobs == 0),
              d.job, "places a job on a GPU that is not free");
      }
    });
  }

  void occupy_gpus(JobId id) {
    const JobSpec& j = spec(id);
    for_each_gpu(rt_[id.index()].placement, [&](std::size_t g, NodeId n) {
      GpuState& s = gpus_[g];
      if (s.jobs == 0) {
        ++busy_;
        --node_free_[n.index()];
      }
      ++s.jobs;
      s.milli_used = static_cast<std::int16_t>(s.milli_used + j.gpu_milli);
      s.memory_used_mib += static_cast<std::int32_t>(j.gpu_memory_mib);
      gpu_free_[g] = static_cast<std::int16_t>(std::max(0, kMilliPerGpu - s.milli_used));
      gpu_jobs_[g].push_back(id);
    });
    allocated_ += j.gpus;
    refresh_speeds(id);
  }

  void release_gpus(JobId id) {
    const JobSpec& j = spec(id);
    Placement p = rt_[id.index()].placement;
    for_each_gpu(p, [&](std::size_t g, NodeId n) {
      GpuState& s = gpus_[g];
      --s.jobs;
      if (s.jobs == 0) {
        --busy_;
        ++node_free_[n.index()];
      }
      s.milli_used = static_cast<std::int16_t>(s.milli_used - j.gpu_milli);
      s.memory_used_mib -= static_cast<std::int32_t>(j.gpu_memory_mib);
      gpu_free_[g] = static_cast<std::int16_t>(std::max(0, kMilliPerGpu - s.milli_used));
      auto& v = gpu_jobs_[g];
      v.erase(std::find(v.begin(), v.end(), id));
    });
    allocated_ -= j.gpus;
    rt_[id.index()].placement.clear();
    // Refresh the speeds of the jobs left on these GPUs, and the SM accounting.
    std::vector<JobId> neighbours;
    for_each_gpu(p, [&](std::size_t g, NodeId) {
      for (JobId o : gpu_jobs_[g]) neighbours.push_back(o);
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
    for_each_gpu(rt_[id.index()].placement, [&](std::size_t g, NodeId) {
      const GpuState& s = gpus_[g];
      if (s.jobs <= 1 || s.milli_used <= kMilliPerGpu) return;
      others.clear();
      for (JobId o : gpu_jobs_[g])
        if (o != id) others.push_back(&spec(o));
      const double v = cfg_.speed_model(spec(id), others);
      speed = speed < 0 ? v : std::min(speed, v);
    });
    return speed < 0 ? 1.0 : speed;
  }

  void refresh_speeds(JobId started) {
    std::vector<JobId> affected{started};
    for_each_gpu(rt_[started.index()].placement, [&](std::size_t g, NodeId) {
      for (JobId o : gpu_jobs_[g]) affected.push_back(o);
    });
    std::sort(affected.begin(), affected.end());
    affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
    for (JobId o : affected) set_speed(o, speed_for(o));
    for_each_gpu(rt_[started.index()].placement, [&](std::size_t g, NodeId) { update_gpu_sm(g); });
  }

  void update_gpu_sm(std::size_t g) {
    double sum = 0;
    for (JobId o : gpu_jobs_[g]) sum += util_of(spec(o)) * rt_[o.index()].speed;
    const double v = std::min(100.0, sum);
    sm_total_ += v - gpu_sm_[g];
    gpu_sm_[g] = v;
  }

  void advance_progress(JobId id) {
    if (progressed_at_[id.index()] > now_) return;  // still within its start latency
    const Time dt = now_ - progressed_at_[id.index()];
    if (dt > 0) remaining_[id.index()] -= static_cast<double>(dt) * rt_[id.index()].speed;
    if (remaining_[id.index()] < 0) remaining_[id.index()] = 0;
    progressed_at_[id.index()] = now_;
  }

  void set_speed(JobId id, double speed) {
    JobRuntime& r = rt_[id.index()];
    if (r.status != JobStatus::Running || speed == r.speed) return;
    advance_progress(id);
    r.speed = speed;
    if (speed > 0)
      res_.jobs[id.index()].max_slowdown =
          std::max(res_.jobs[id.index()].max_slowdown, 1.0 / speed);
    for_each_gpu(r.placement, [&](std::size_t g, NodeId) { update_gpu_sm(g); });
    ++version_[id.index()];
    schedule_completion(id);
  }

  void schedule_completion(JobId id) {
    const double speed = rt_[id.index()].speed;
    if (speed <= 0) return;
    const double left = remaining_[id.index()] / speed;
    const Time from = std::max(now_, progressed_at_[id.index()]);     // after the start latency
    const Time end = from + saturating_time(std::ceil(left - 1e-9));  // max_time stops it
    events_.push({end, seq_++, EventKind::Complete, id, version_[id.index()]});
  }

  // --- the policy cycle --------------------------------------------------
  void cycle() {
    ClusterSnapshot s;
    s.now = now_;
    s.cluster = &w_.cluster;
    s.tenants = w_.tenants;
    s.jobs = w_.jobs;
    s.profiles = w_.profiles;
    s.runtime = rt_;
    s.gpus = gpus_;
    s.gpu_free_milli = gpu_free_;
    s.node_free_gpus = node_free_;
    s.pending = pending_.view();
    s.running = running_.view();
    s.arrived = arrived_;
    s.requeued = requeued_;
    s.finished = finished_;
    Decisions d = policy_.decide(s);
    ++res_.cycles;
    arrived_.clear();
    requeued_.clear();
    finished_.clear();
    for (const auto& r : d.reject) reject(r);
    for (const auto& p : d.preempt) preempt(p.job);
    for (auto& st : d.start) start(st);
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
    throw std::logic_error("policy decision at t=" + std::to_string(now_) + " ms" + who + ": " +
                           what);
  }

  const Workload& w_;
  Policy& policy_;
  SimConfig cfg_;
  std::size_t n_;
  std::vector<JobRuntime> rt_;
  std::vector<double> remaining_;
  std::vector<Time> progressed_at_;
  std::vector<std::uint32_t> version_;
  IdSet pending_;
  IdSet running_;
  std::vector<GpuState> gpus_;
  std::vector<std::int16_t> gpu_free_;
  std::vector<std::vector<JobId>> gpu_jobs_;
  std::vector<double> gpu_sm_;
  std::vector<std::int32_t> node_free_;
  std::vector<TenantState> tenants_;
  std::vector<TenantTelemetry> telemetry_;
  Rng latency_rng_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<JobId> arrived_;
  std::vector<JobId> requeued_;
  std::vector<FinishedJob> finished_;
  RunRecord res_;
  Time now_ = 0;
  Time wake_at_ = kNever;
  Time next_sample_ = 0;
  std::uint64_t seq_ = 0;
  int busy_ = 0;
  int allocated_ = 0;
  std::int64_t pending_gpus_ = 0;
  double sm_total_ = 0;
  std::size_t preemptions_ = 0;
  double lost_gpu_ms_ = 0;
  std::size_t settled_ = 0;
};

}  // namespace

RunRecord simulate(const Workload& workload, Policy& policy, const SimConfig& config) {
  Engine engine(workload, policy, config);
  return engine.run();
}

}  // namespace ds
