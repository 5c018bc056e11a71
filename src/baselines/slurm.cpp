#include "baselines/slurm.hpp"

#include <algorithm>
#include <bit>
#include <set>
#include <string>

#include "baselines/slurm_backfill.hpp"
#include "baselines/slurm_queue.hpp"
#include "core/error.hpp"
#include "policy/placement.hpp"

namespace ds {
namespace {

struct JobState {
  std::uint32_t priority = 0;
  Time limit = 0;
  Time eligible = 0;      // accrue time: submit, or the end of a requeue delay
  Time order_submit = 0;  // the queue's tie-break (a requeue resets Slurm's submit time)
  Time started = 0, accounted = 0;
  bool tenant_qos = true;
  bool queued = false, running = false;
  NodeGpus gpus;        // while running: GPUs per node
  Placement placement;  // while running
  WaitReason said = WaitReason::None;
};

// What a backfill or main-pass test concluded for a job.
struct Outcome {
  Time start = 0;
  NodeGpus nodes;
  bool preempt = false;
};

class Slurm final : public Policy {
 public:
  Slurm(const PolicyContext& ctx, const SlurmConfig& cfg)
      : cfg_(cfg),
        tenants_(ctx.tenants.begin(), ctx.tenants.end()),
        tree_(ctx.tenants, cfg.priority.half_life),
        limits_(cfg.limits),
        queue_([this](JobId id) { return settled_priority(id); }, cfg.reference_scan),
        running_gpus_(ctx.tenants.size(), 0),
        queued_gpus_(ctx.tenants.size(), 0),
        next_tick_(cfg.priority.calc_period) {
    for (const auto& n : ctx.cluster.nodes) {
      size_.push_back(n.gpus);
      models_.push_back(n.gpu_type);
      total_gpus_ += n.gpus;
    }
    nodes_ = static_cast<int>(size_.size());
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    now_ = s.now;
    jobs_ = s.jobs;  // valid during this cycle only
    free_.sync(s);
    refresh_free();
    end_runs(s);
    intake(s, out);
    while (!ineligible_.empty() && ineligible_.begin()->first <= now_) {
      ineligible_.erase(ineligible_.begin());
      dirty_ = true;
    }
    main_pass(s, out);
    if (dirty_ && !queue_.empty() && now_ >= next_backfill_) {
      backfill_pass(out);
      dirty_ = false;
      next_backfill_ = now_ + cfg_.bf_interval;
    }
    out.wake_at = wake_at();
    return out;
  }

  void summarize(std::map<std::string, double>& out) const override {
    accuracy_.summarize(out, "predictor_");
    out["slurm_main_starts"] = static_cast<double>(main_starts_);
    out["slurm_backfill_starts"] = static_cast<double>(backfill_starts_);
    out["slurm_scavenger_starts"] = static_cast<double>(scavenger_starts_);
    out["borrowed_starts"] = static_cast<double>(scavenger_starts_);  // as other policies name it
    out["slurm_preempting_starts"] = static_cast<double>(preempting_starts_);
    out["slurm_victims"] = static_cast<double>(victims_);
    out["slurm_reservations"] = static_cast<double>(reservations_);
    out["slurm_backfill_passes"] = static_cast<double>(passes_);
    out["slurm_limit_overruns"] = static_cast<double>(overruns_);
  }

 private:
  // --- 1. the decay thread -----------------------------------------------------------
  // Ends the runs of finished and engine-requeued jobs, running the decay ticks up to now
  // first (each accounts the running jobs up to the tick or their end).
  void end_runs(const ClusterSnapshot& s) {
    ended_.clear();
    for (const auto& f : s.finished)
      if (st_[f.job].running) ended_.emplace_back(f.job, s.runtime[f.job.index()].end);
    for (JobId id : s.requeued)
      if (st_[id].running) ended_.emplace_back(id, now_);
    for (auto& e : ended_) e.second = std::min(e.second, now_);
    while (next_tick_ <= now_) tick(next_tick_);
    for (const auto& [id, end] : ended_) {
      account(id, end);
      stop_running(id);
      dirty_ = true;
    }
  }

  void tick(Time t) {
    tree_.decay(t - last_tick_);
    for (JobId id : running_) {
      Time upto = t;
      for (const auto& [e, end] : ended_)
        if (e == id) upto = std::min(upto, end);
      account(id, upto);
    }
    tree_.rank();
    last_tick_ = t;
    next_tick_ = t + cfg_.priority.calc_period;
    if (queue_.empty()) return;
    queue_.settle();  // every pending job's priority is now the one at t (slurm_queue.hpp)
    dirty_ = true;
  }

  void account(JobId id, Time upto) {
    JobState& j = st_[id];
    if (upto <= j.accounted) return;
    tree_.add_run(jobs_[id.index()].tenant.index(), jobs_[id.index()].gpus, upto - j.accounted);
    j.accounted = upto;
  }

  [[nodiscard]] std::uint32_t priority_of(const JobSpec& job, const JobState& j, Time t) const {
    PriorityInputs in;
    in.now = t;
    in.eligible = j.eligible;
    in.gpus = job.gpus;
    in.nodes = job.gpus <= 0 || size_.empty() ? 1 : (job.gpus + size_[0] - 1) / size_[0];
    in.tenant_qos = j.tenant_qos;
    in.fs_factor = tree_.factor(job.tenant.index());
    in.cluster_nodes = nodes_;
    in.cluster_gpus = total_gpus_;
    return slurm_priority(cfg_.priority, in);
  }

  // The class of a job's priority inputs (slurm_queue.hpp).
  [[nodiscard]] SlurmQueueClass class_of(JobId id) const {
    const JobState& s = st_[id];
    const JobSpec& j = jobs_[id.index()];
    return SlurmQueueClass{j.tenant.index(), j.gpus, s.tenant_qos, s.eligible - s.order_submit};
  }

  // A queued job's priority now: the one it keeps after a requeue, else the one computed at
  // the last decay tick (or at its submit, after the tick: with its age 0 the same).
  [[nodiscard]] std::uint32_t queued_priority(JobId id) const {
    return queue_.kept(id) ? st_[id].priority : settled_priority(id);
  }
  [[nodiscard]] std::uint32_t settled_priority(JobId id) const {
    return priority_of(jobs_[id.index()], st_[id], last_tick_);
  }
  [[nodiscard]] SlurmQueue::Walk walk() const { return SlurmQueue::Walk(queue_); }

  // --- 2. intake -------------------------------------------------------------------------
  void intake(const ClusterSnapshot& s, Decisions& out) {
    for (const auto& f : s.finished) {
      const JobSpec& j = s.jobs[f.job.index()];
      accuracy_.finished(f.job, f.runtime);
      limits_.observe(j, f.runtime);
      overruns_ += f.runtime > st_[f.job].limit ? 1 : 0;
    }
    for (JobId id : s.withdrawn)
      if (st_[id].queued) dequeue(id);
    for (JobId id : s.arrived) arrive(s.jobs[id.index()], out);
    for (JobId id : s.requeued)
      if (!st_[id].queued && s.runtime[id.index()].status == JobStatus::Pending) {
        requeue(id);  // by the engine, not by us
        say(out, id, WaitReason::Round);
      }
    for (JobId id : s.adopted) adopt(s, id);
    if (!s.arrived.empty() || !s.withdrawn.empty() || !s.adopted.empty()) dirty_ = true;
  }

  void arrive(const JobSpec& j, Decisions& out) {
    const std::size_t t = j.tenant.index();
    const int quota = tenants_[t].quota_gpus;
    const int capacity = model_gpus(j);
    if (j.gpus > capacity || (!j.preemptible && j.gpus > quota)) {
      out.reject.push_back(
          {j.id, "needs " + std::to_string(j.gpus) + " GPUs" + model_text(j) + "; " +
                     (j.gpus > capacity ? "the partition has " + std::to_string(capacity)
                                        : "it cannot be requeued and QOS " + tenants_[t].name +
                                              " has GrpTRES=gres/gpu=" + std::to_string(quota))});
      return;
    }
    JobState& s = st_[j.id];
    s = JobState{};
    s.tenant_qos =
        slurm_tenant_qos(running_gpus_[t], queued_gpus_[t], j.gpus, quota, j.preemptible);
    s.limit = limits_.limit(j);
    accuracy_.predicted(j.id, limits_.estimate(j));
    s.eligible = s.order_submit = now_;
    s.priority = priority_of(j, s, now_);
    enqueue(j.id, false);
    say(out, j.id, WaitReason::Priority);
  }

  // A requeued job: eligible after the delay; Slurm keeps its priority until the next tick.
  void requeue(JobId id) {
    JobState& s = st_[id];
    s.eligible = now_ + cfg_.requeue_delay;
    s.order_submit = now_;
    if (s.eligible > now_) ineligible_.emplace(s.eligible, id);
    enqueue(id, true);
    dirty_ = true;
  }

  void adopt(const ClusterSnapshot& s, JobId id) {
    if (st_[id].queued) dequeue(id);
    const JobSpec& j = s.jobs[id.index()];
    const JobRuntime& r = s.runtime[id.index()];
    JobState& js = st_[id];
    js.tenant_qos = !r.borrowed;
    js.limit = limits_.limit(j);
    NodeGpus g;
    for (const auto& a : r.placement) g.emplace_back(a.node.index(), a.gpus());
    begin_running(id, r.last_start == kNever ? now_ : r.last_start, std::move(g));
    js.placement = r.placement;
    js.accounted = now_;
  }

  // Queues a job; `keep_priority`: it keeps s.priority until the next decay tick (a requeue).
  void enqueue(JobId id, bool keep_priority) {
    JobState& s = st_[id];
    if (s.queued) return;
    s.queued = true;
    // The state enters a job pending without a reason (a requeue, a return from a hold): the
    // next say() must be heard even if it repeats what was said before the job left.
    s.said = WaitReason::None;
    const SlurmQueueClass c = class_of(id);
    if (keep_priority)
      queue_.add_kept(id, c, s.order_submit, s.priority);
    else
      queue_.add(id, c, s.order_submit);
    if (s.tenant_qos) queued_gpus_[jobs_[id.index()].tenant.index()] += jobs_[id.index()].gpus;
  }

  void dequeue(JobId id) {
    JobState& s = st_[id];
    if (!s.queued) return;
    s.queued = false;
    s.priority = queued_priority(id);  // what a requeue keeps
    queue_.remove(id);
    ineligible_.erase({s.eligible, id});
    if (s.tenant_qos) queued_gpus_[jobs_[id.index()].tenant.index()] -= jobs_[id.index()].gpus;
  }

  void say(Decisions& out, JobId id, WaitReason r) {
    if (st_[id].said == r) return;
    st_[id].said = r;
    note_wait(out, id, r);
  }

  // --- running jobs and the free GPUs --------------------------------------------------
  void refresh_free() {
    free_gpus_.resize(size_.size());
    for (std::size_t n = 0; n < size_.size(); ++n)
      free_gpus_[n] = free_.free_gpus(NodeId(static_cast<std::uint32_t>(n)));
    free_sum_ = 0;
    for (int f : free_gpus_) free_sum_ += f;
  }

  void begin_running(JobId id, Time start, NodeGpus gpus) {
    JobState& s = st_[id];
    s.running = true;
    s.started = start;
    s.accounted = start;
    s.gpus = std::move(gpus);
    s.said = WaitReason::None;
    running_pos_[id] = static_cast<std::int64_t>(running_.size());
    running_.push_back(id);
    if (s.tenant_qos) running_gpus_[jobs_[id.index()].tenant.index()] += jobs_[id.index()].gpus;
  }

  void stop_running(JobId id) {
    JobState& s = st_[id];
    if (!s.running) return;
    s.running = false;
    const auto pos = static_cast<std::size_t>(running_pos_[id]);
    running_[pos] = running_.back();
    running_pos_[running_[pos]] = static_cast<std::int64_t>(pos);
    running_.pop_back();
    if (s.tenant_qos) running_gpus_[jobs_[id.index()].tenant.index()] -= jobs_[id.index()].gpus;
  }

  // The lowest whole free GPUs of each chosen node, as a placement.
  [[nodiscard]] Placement placement_of(const NodeGpus& nodes) const {
    Placement p;
    for (const auto& [n, k] : nodes) {
      const Node& node = free_.cluster().nodes[n];
      std::uint64_t mask = 0;
      for (int g = 0, left = k; g < node.gpus && left > 0; ++g)
        if (free_.free_milli(node.first_gpu + g) == kMilliPerGpu) {
          mask |= std::uint64_t{1} << g;
          --left;
        }
      p.push_back(NodeAlloc{NodeId(n), mask});
    }
    return p;
  }

  void start(JobId id, const NodeGpus& nodes, Decisions& out, bool backfill) {
    const JobSpec& j = jobs_[id.index()];
    Placement p = placement_of(nodes);
    free_.take(p, std::min(j.gpu_milli, kMilliPerGpu));
    for (const auto& [n, k] : nodes) {
      free_gpus_[n] -= k;
      free_sum_ -= k;
    }
    dequeue(id);
    begin_running(id, now_, nodes);
    st_[id].placement = p;
    const bool scavenger = !st_[id].tenant_qos;
    out.start.push_back(StartJob{id, std::move(p), scavenger});
    (backfill ? backfill_starts_ : main_starts_) += 1;
    scavenger_starts_ += scavenger ? 1 : 0;
    dirty_ = true;
  }

  // preempt/qos with PreemptMode=REQUEUE: the victim leaves at once and waits out the delay.
  void preempt(JobId v, Decisions& out) {
    JobState& s = st_[v];
    account(v, now_);
    free_.give(s.placement, std::min(jobs_[v.index()].gpu_milli, kMilliPerGpu));
    for (const auto& [n, k] : s.gpus) {
      free_gpus_[n] += k;
      free_sum_ += k;
    }
    stop_running(v);
    requeue(v);
    s.said = WaitReason::Round;
    note_wait(out, v, WaitReason::Round);
    out.preempt.push_back({v});
    ++victims_;
  }

  // Scavenger jobs in preempt/qos's candidate order (fewer nodes first; job order, or the
  // youngest first with preempt_youngest_first).
  [[nodiscard]] std::vector<JobId> candidates() const {
    std::vector<JobId> c;
    for (JobId id : running_)
      if (!st_[id].tenant_qos) c.push_back(id);
    std::sort(c.begin(), c.end(), [&](JobId a, JobId b) {
      const std::size_t na = st_[a].gpus.size(), nb = st_[b].gpus.size();
      if (na != nb) return na < nb;
      if (cfg_.preempt_youngest_first && st_[a].started != st_[b].started)
        return st_[a].started > st_[b].started;
      return a < b;
    });
    return c;
  }

  // Starts `id` on `usable` by requeueing scavenger jobs, if that makes room.
  bool preempt_and_start(JobId id, const NodeSet& usable, Decisions& out, bool backfill) {
    const std::vector<JobId> c = candidates();
    if (c.empty()) return false;
    std::vector<NodeGpus> held;
    for (JobId v : c) held.push_back(st_[v].gpus);
    auto p = choose_victims(free_gpus_, size_, usable, jobs_[id.index()].gpus, held,
                            cfg_.preempt_reorder_count);
    if (!p) return false;
    for (std::size_t k : p->victims) preempt(c[k], out);
    start(id, p->nodes, out, backfill);
    ++preempting_starts_;
    return true;
  }

  // --- GPU models (--gres=gpu:<type>:N) ---------------------------------------------------
  // The nodes of `usable` the job may use: all of them without a model, else those of an
  // accepted model, written into `scratch`.
  const NodeSet& for_job(const JobSpec& j, const NodeSet& usable, NodeSet& scratch) const {
    if (!constrained(j)) return usable;
    scratch = usable;
    for (std::size_t n = 0; n < models_.size(); ++n)
      if (!accepts_node(j, NodeId(static_cast<std::uint32_t>(n)), models_[n])) scratch.reset(n);
    return scratch;
  }

  [[nodiscard]] int model_gpus(const JobSpec& j) const {
    if (!constrained(j)) return total_gpus_;
    int gpus = 0;
    for (std::size_t n = 0; n < models_.size(); ++n)
      if (accepts_node(j, NodeId(static_cast<std::uint32_t>(n)), models_[n])) gpus += size_[n];
    return gpus;
  }

  // --- 3. the main scheduler -------------------------------------------------------------
  [[nodiscard]] bool held_back(JobId id) const {
    const JobState& s = st_[id];
    if (s.eligible > now_) return true;
    const JobSpec& j = jobs_[id.index()];
    return s.tenant_qos &&
           running_gpus_[j.tenant.index()] + j.gpus > tenants_[j.tenant.index()].quota_gpus;
  }

  void main_pass(const ClusterSnapshot& s, Decisions& out) {
    const NodeSet all(size_.size(), true);
    for (SlurmQueue::Walk w = walk(); const auto next = w.next();) {
      const JobId id = *next;  // a start takes `id` out of the queue (the walk allows it)
      if (held_back(id)) {
        say(out, id, st_[id].eligible > now_ ? WaitReason::Round : WaitReason::Quota);
        continue;
      }
      const JobSpec& j = s.jobs[id.index()];
      NodeSet scratch;
      const NodeSet& usable = for_job(j, all, scratch);
      if (auto nodes = pick_nodes(free_gpus_, size_, usable, j.gpus)) {
        start(id, *nodes, out, false);
        continue;
      }
      if (st_[id].tenant_qos && preempt_and_start(id, usable, out, false)) continue;
      int free = 0;
      for (int f : free_gpus_) free += f;
      say(out, id, room_reason(free, j));
      break;  // the partition is blocked for lower-priority jobs (the backfill may start them)
    }
  }

  // --- 4. backfill --------------------------------------------------------------------------
  void backfill_pass(Decisions& out) {
    ++passes_;
    NodeSpace space(now_, cfg_.bf_resolution, cfg_.bf_window, size_.size());
    changed_running();
    int tested = 0;
    SlurmQueue::Walk w = walk();
    for (auto next = w.next(); next && tested < cfg_.bf_max_job_test; next = w.next()) {
      const JobId id = *next;  // a start takes `id` out of the queue (the walk allows it)
      if (held_back(id)) continue;
      ++tested;
      backfill_job(id, space, out);
    }
  }

  // One job of the pass: backfill.c's TRY_LATER loop over the node-space map.
  void backfill_job(JobId id, NodeSpace& space, Decisions& out) {
    const JobState& s = st_[id];
    const bool reserves = s.tenant_qos || cfg_.scavenger_reserve;  // NoReserve otherwise
    const JobSpec& j = jobs_[id.index()];
    NodeSet scratch;
    if (!reserves) {
      // A NoReserve job only matters if it can start now (it neither reserves nor, without a
      // reservation, retries later): the will-run estimate is skipped, with the same result,
      // and so is everything when fewer GPUs are free than it asks for.
      if (j.gpus > free_sum_) return;
      const NodeSpace::Avail av = space.available(now_, now_ + s.limit);
      if (auto o = remembered(j.gpus, false, true, for_job(j, av.nodes, scratch))) {
        start(id, o->nodes, out, true);
        changed_running();
      }
      return;
    }
    for (Time from = now_;;) {
      const NodeSpace::Avail av = space.available(from, std::max(from, now_) + s.limit);
      const NodeSet& usable = for_job(j, av.nodes, scratch);
      const std::optional<Outcome> o = remembered(j.gpus, s.tenant_qos, false, usable);
      if (!o) {
        if (!reserves || av.later_start <= from) return;
        from = av.later_start;
        continue;
      }
      const Time begin = std::max(o->start, from);
      if (begin <= now_) {
        if (o->preempt)
          preempt_and_start(id, usable, out, true);
        else
          start(id, o->nodes, out, true);
        changed_running();
        return;
      }
      if (av.later_start > from && begin > av.later_start) {
        from = av.later_start;
        continue;
      }
      if (begin > now_ + cfg_.bf_window || !reserves) return;
      NodeSet mine(size_.size());
      for (const auto& [n, k] : o->nodes) mine.set(n);
      space.reserve(begin, begin + s.limit, mine);
      ++reservations_;
      return;
    }
  }

  // The answer of test() (now_only: of pick_nodes alone) for a job of `gpus` GPUs, remembered
  // until the next start: a job asking what an earlier one of the pass asked - the same GPUs,
  // QOS and usable nodes, while the free GPUs and the running jobs are the same - gets the
  // same answer without the scans (deep queues hold thousands of alike jobs).
  std::optional<Outcome> remembered(int gpus, bool preemptor, bool now_only,
                                    const NodeSet& usable) {
    for (const Asked& a : asked_)
      if (a.gpus == gpus && a.preemptor == preemptor && a.now_only == now_only &&
          a.usable == usable)
        return a.answer;
    std::optional<Outcome> o;
    if (!now_only)
      o = test(gpus, preemptor, usable);
    else if (auto p = pick_nodes(free_gpus_, size_, usable, gpus))
      o = Outcome{now_, std::move(*p), false};
    if (!cfg_.reference_scan && asked_.size() < kRemembered)
      asked_.push_back(Asked{gpus, preemptor, now_only, usable, o});
    return o;
  }

  // _try_sched on `usable`: now, now by preempting scavenger jobs (tenant QOS), or when the
  // running jobs that are not preemptable for it end.
  [[nodiscard]] std::optional<Outcome> test(int gpus, bool preemptor, const NodeSet& usable) {
    if (auto p = pick_nodes(free_gpus_, size_, usable, gpus)) return Outcome{now_, *p, false};
    if (ending_stale_) build_ending();
    const std::vector<int>& free = preemptor ? free_no_scavenger_ : free_gpus_;
    if (preemptor && free != free_gpus_)  // (equal: no scavenger job runs, the same "no")
      if (auto p = pick_nodes(free, size_, usable, gpus)) return Outcome{now_, *p, true};
    auto w = will_run(free, size_, usable, gpus, preemptor ? by_end_tenant_ : by_end_all_, now_,
                      cfg_.will_run_window);
    if (!w) return std::nullopt;
    return Outcome{w->start, std::move(w->nodes), false};
  }

  // The running jobs or the free GPUs changed (a pass begins, a job started): what the pass
  // remembered is void, the view of the running jobs is rebuilt when next needed.
  void changed_running() {
    asked_.clear();
    ending_stale_ = true;
    if (cfg_.reference_scan) build_ending();  // as eagerly as the straightforward pass
  }

  // The running jobs by expected end (start + limit), all and without scavenger jobs, and
  // the free GPUs with every scavenger job gone.
  void build_ending() {
    ending_stale_ = false;
    ending_.clear();
    by_end_all_.clear();
    by_end_tenant_.clear();
    free_no_scavenger_ = free_gpus_;
    for (JobId id : running_) {
      const JobState& s = st_[id];
      ending_.push_back(EndingJob{s.started + s.limit, s.limit, s.gpus});
    }
    for (std::size_t k = 0; k < ending_.size(); ++k) {
      by_end_all_.push_back(&ending_[k]);
      if (st_[running_[k]].tenant_qos)
        by_end_tenant_.push_back(&ending_[k]);
      else
        for (const auto& [n, g] : ending_[k].gpus) free_no_scavenger_[n] += g;
    }
    auto by_end = [&](const EndingJob* a, const EndingJob* b) {
      if (a->end != b->end) return a->end < b->end;
      return running_[static_cast<std::size_t>(a - ending_.data())] <
             running_[static_cast<std::size_t>(b - ending_.data())];
    };
    std::sort(by_end_all_.begin(), by_end_all_.end(), by_end);
    std::sort(by_end_tenant_.begin(), by_end_tenant_.end(), by_end);
  }

  [[nodiscard]] Time wake_at() const {
    Time w = kNever;
    if (!ineligible_.empty()) w = std::min(w, ineligible_.begin()->first);
    if (!queue_.empty()) {
      w = std::min(w, next_tick_);
      if (dirty_) w = std::min(w, std::max(next_backfill_, now_ + 1));
    }
    return w > now_ ? w : kNever;
  }

  SlurmConfig cfg_;
  std::vector<Tenant> tenants_;
  FairTree tree_;
  SlurmTimeLimits limits_;
  AccuracyTracker accuracy_;
  FreeMap free_;
  std::vector<int> size_, free_gpus_;
  int free_sum_ = 0;                 // of free_gpus_
  std::vector<std::string> models_;  // each node's GPU model
  int nodes_ = 0, total_gpus_ = 0;
  std::span<const JobSpec> jobs_;
  PerJob<JobState> st_;
  PerJob<std::int64_t> running_pos_{-1};
  SlurmQueue queue_;
  std::set<std::pair<Time, JobId>> ineligible_;
  std::vector<JobId> running_;
  std::vector<int> running_gpus_, queued_gpus_;  // per tenant, in the tenant QOS
  std::vector<std::pair<JobId, Time>> ended_;
  Time now_ = 0, last_tick_ = 0, next_tick_ = 0, next_backfill_ = 0;
  bool dirty_ = false;
  // The backfill pass's view of the running jobs.
  std::vector<EndingJob> ending_;  // parallel to running_
  std::vector<const EndingJob*> by_end_all_, by_end_tenant_;
  std::vector<int> free_no_scavenger_;
  struct Asked {
    int gpus = 0;
    bool preemptor = false, now_only = false;
    NodeSet usable;
    std::optional<Outcome> answer;
  };
  static constexpr std::size_t kRemembered = 64;
  std::vector<Asked> asked_;  // remembered(): since the last changed_running()
  bool ending_stale_ = true;  // ending_ and the rest need build_ending()
  std::size_t main_starts_ = 0, backfill_starts_ = 0, scavenger_starts_ = 0, preempting_starts_ = 0,
              victims_ = 0, reservations_ = 0, passes_ = 0, overruns_ = 0;
};

}  // namespace

SlurmConfig read_slurm_config(const PolicyOptions& o) {
  SlurmConfig c;
  SlurmWeights& w = c.priority.weights;
  w.age = o.get_double("weight_age", w.age, 0, 4e9);
  w.fairshare = o.get_double("weight_fairshare", w.fairshare, 0, 4e9);
  w.job_size = o.get_double("weight_job_size", w.job_size, 0, 4e9);
  w.qos = o.get_double("weight_qos", w.qos, 0, 4e9);
  w.tres_gpu = o.get_double("weight_tres_gpu", w.tres_gpu, 0, 4e9);
  constexpr long kYear = 365 * 86'400L;
  c.priority.half_life = o.get_seconds("decay_half_life_s", c.priority.half_life, 0, kYear);
  c.priority.max_age = o.get_seconds("max_age_s", c.priority.max_age, 0, kYear);
  c.priority.calc_period = o.get_seconds("calc_period_s", c.priority.calc_period, 1, 86'400);
  c.bf_interval = o.get_seconds("bf_interval_s", c.bf_interval, 1, 86'400);
  c.bf_resolution = o.get_seconds("bf_resolution_s", c.bf_resolution, 1, 86'400);
  c.bf_window = o.get_seconds("bf_window_s", c.bf_window, 60, kYear);
  c.bf_max_job_test =
      static_cast<int>(o.get_int("bf_max_job_test", c.bf_max_job_test, 1, 1'000'000));
  c.will_run_window = o.get_seconds("will_run_window_s", c.will_run_window, 1, 86'400);
  c.requeue_delay = o.get_seconds("requeue_delay_s", c.requeue_delay, 0, 86'400);
  c.preempt_youngest_first = o.get_bool("preempt_youngest_first", c.preempt_youngest_first);
  c.preempt_reorder_count =
      static_cast<int>(o.get_int("preempt_reorder_count", c.preempt_reorder_count, 0, 100));
  c.scavenger_reserve = o.get_bool("scavenger_reserve", c.scavenger_reserve);
  c.limits = read_time_limit_rule(o);
  return c;
}

std::unique_ptr<Policy> make_slurm(const PolicyContext& ctx, const SlurmConfig& config) {
  return std::make_unique<Slurm>(ctx, config);
}

std::unique_ptr<Policy> make_slurm(const PolicyContext& ctx) {
  return make_slurm(ctx, read_slurm_config(ctx.options));
}

const char* slurm_options() {
  return "weight_age, weight_fairshare, weight_job_size, weight_qos, weight_tres_gpu, "
         "decay_half_life_s, max_age_s, calc_period_s, bf_interval_s, bf_resolution_s, "
         "bf_window_s, bf_max_job_test, will_run_window_s, requeue_delay_s, "
         "preempt_youngest_first=on|off, preempt_reorder_count, scavenger_reserve=on|off, "
         "time_limit_factor, time_limit_round_s, time_limit_min_s, "
         "predictor=history|user|tenant|global";
}

}  // namespace ds
