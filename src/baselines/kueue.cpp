#include "baselines/kueue.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <set>
#include <stdexcept>

#include "baselines/request_index.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

// A tenant's nominated head for this round (step 2).
struct Entry {
  JobId job;
  std::size_t tenant = 0;
  int priority = 0;
  bool borrows = false;  // admitting it takes its tenant above nominal
  double share = 0;      // DRS of its tenant after admission (fair sharing)
  Placement placement;
  std::vector<JobId> victims;
  bool search = false;  // preempts: victims and placement come from the search at admission
};

// Cost: the quota, the running jobs (per tenant, in preemption-candidate order) and the free
// map (one indexed node set per partition) are kept across cycles and follow the snapshot's
// deltas; a round looks only at tenants with queued jobs. The algorithm (steps 1-4,
// kueue.hpp) is unchanged.
//
// Classical preemption with reclaim=any answers "does the search find victims?" from a
// shadow state instead of walking the candidates (a failed search walks them all, and a
// nominated head is searched again in every round of a cycle). Why that is exact:
//  - the search removes candidates in order, skipping those whose tenant no longer borrows,
//    until the job fits. A tenant's borrowing depends only on its own usage, so once every
//    candidate was looked at, tenant r has lost exactly shed(r): the shortest prefix of its
//    candidate list that brings it within nominal (all of it if none does), whatever the
//    interleaving with other tenants. The requesting tenant sheds nothing (the search
//    requires it to stay within nominal, so it does not borrow);
//  - "fits" only grows as removals free quota and GPUs (quota: cohort usage falls; placement:
//    the largest placeable job never shrinks on a node set of one node size);
//  so the search succeeds iff the job fits in the shadow state = the real quota and free map
//  less every shed(r). The shadow is kept in step with the real state (quota mirrored, free
//  map overlaid node by node, shed(r) recomputed for the tenants that changed); the walk
//  itself runs only for the entry that is admitted, to pick the victims. Fair sharing,
//  reclaim=lower_priority and node sets of mixed sizes search as before.
class Kueue final : public Policy {
 public:
  Kueue(const PolicyContext& ctx, const KueueConfig& cfg)
      : cfg_(cfg),
        quota_(ctx.tenants, cfg.pooled ? cfg.limits
                                       : KueueLimits{false, cfg.limits.lending_limit,
                                                     cfg.limits.borrowing_limit}),
        running_(ctx.tenants.size()),
        queues_(ctx.tenants.size()),
        cutoff_(ctx.tenants.size(), INT_MAX),
        cutoff_stamp_(ctx.tenants.size(), 0),
        cursor_(ctx.tenants.size()),
        cursor_stamp_(ctx.tenants.size(), 0),
        shadow_quota_(quota_),
        shed_count_(ctx.tenants.size(), 0),
        touched_flag_(ctx.tenants.size(), 0),
        tree_(ctx.tenants) {
    if (!cfg_.pooled) cfg_.limits.cohort = false;
    bool owned = false;
    for (const auto& n : ctx.cluster.nodes) owned = owned || n.owner.valid();
    per_tenant_ = !cfg_.pooled && owned;
    nodes_.resize(per_tenant_ ? ctx.tenants.size() : 1);
    capacity_.resize(nodes_.size(), 0);
    for (const auto& n : ctx.cluster.nodes) {
      if (per_tenant_ && !n.owner.valid()) continue;
      const std::size_t p = per_tenant_ ? n.owner.index() : 0;
      nodes_[p].push_back(n.id);
      capacity_[p] += n.gpus;
    }
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    sync(s);
    for (JobId id : s.withdrawn)
      if (queued_[id]) dequeue(s.jobs[id.index()]);
    for (JobId id : s.arrived) arrive(s, id, out);
    for (JobId id : s.requeued)
      if (!queued_[id] && s.runtime[id.index()].status == JobStatus::Pending) {
        enqueue(s.jobs[id.index()]);
        note_wait(out, id, WaitReason::Priority);
      }

    ++stamp_;
    ++cutoff_epoch_;
    // A tenant whose nomination came back empty stays empty for the rest of the cycle (its
    // jobs are all marked; jobs requeued by an admission are marked too): the rounds skip it.
    active_.assign(waiting_.begin(), waiting_.end());
    for (;;) {
      if (shadowed_) refresh_shadow();
      std::optional<Entry> best;
      std::size_t kept = 0;
      for (std::size_t t : active_) {
        auto e = nominate(s, t, out);
        if (!e) continue;
        active_[kept++] = t;
        if (!best || better(*e, *best, s)) best = std::move(e);
      }
      active_.resize(kept);
      if (!best) break;
      admit(s, std::move(*best), out);
    }
    return out;
  }

  void summarize(std::map<std::string, double>& out) const override {
    out["kueue_borrowed_starts"] = static_cast<double>(borrowed_starts_);
    out["kueue_preempting_admissions"] = static_cast<double>(preempting_admissions_);
    out["kueue_victims"] = static_cast<double>(victims_);
    out["kueue_preemption_searches"] = static_cast<double>(searches_);
  }

 private:
  [[nodiscard]] std::size_t part(std::size_t tenant) const { return per_tenant_ ? tenant : 0; }

  // The running jobs and the free map follow the snapshot: jobs admitted in the last cycle
  // become candidates (with the start time the driver gave them), finished and
  // engine-preempted ones leave, adopted ones join; the quota counts them all.
  void sync(const ClusterSnapshot& s) {
    const bool first = sets_.empty();
    free_.sync(s);
    if (first) {
      for (const auto& list : nodes_) sets_.push_back(free_.add_set(list));
      // (The shadow knows no tenant tree: trees search.)
      shadowed_ = cfg_.limits.cohort && !cfg_.fair_sharing && cfg_.reclaim == ReclaimPolicy::Any &&
                  tree_.flat();
      for (std::size_t p = 0; p < sets_.size(); ++p)
        shadowed_ = shadowed_ && free_.set_largest_fit(sets_[p]).has_value();
      if (shadowed_) {
        shadow_ = free_;
        extra_.assign(static_cast<std::size_t>(s.cluster->total_gpus()), 0);
        free_.log_changes(&changed_);
      }
    }
    for (JobId id : admitted_) {
      const JobSpec& j = s.jobs[id.index()];
      const JobRuntime& r = s.runtime[id.index()];
      running_.add({id, j.tenant.index(), j.gpus, j.gpu_milli, kueue_priority(j), r.last_start,
                    r.placement});
      if (shadowed_) touch(j.tenant.index());
    }
    admitted_.clear();
    for (const auto& f : s.finished) leave(s, f.job);
    for (JobId id : s.requeued) leave(s, id);  // preempted by the engine (ours left already)
    // Withdrawn while the policy believed it admitted (a start the driver could not apply,
    // then the job stopped being a candidate): it no longer runs.
    for (JobId id : s.withdrawn) leave(s, id);
    for (JobId id : s.adopted) {
      const JobSpec& j = s.jobs[id.index()];
      const JobRuntime& r = s.runtime[id.index()];
      leave(s, id);
      counted_[id] = 1;
      quota_add(j.tenant.index(), j.gpus);
      running_.add({id, j.tenant.index(), j.gpus, j.gpu_milli, kueue_priority(j), r.last_start,
                    r.placement});
    }
  }

  // A job that no longer runs leaves the quota and the candidates.
  void leave(const ClusterSnapshot& s, JobId id) {
    if (!counted_[id]) return;
    counted_[id] = 0;
    unshed(id);
    quota_remove(s.jobs[id.index()].tenant.index(), s.jobs[id.index()].gpus);
    running_.remove(id);
  }

  // --- the shadow state (see the class comment) --------------------------------------
  void quota_add(std::size_t t, int gpus) {
    quota_.add(t, gpus);
    if (shadowed_) {
      shadow_quota_.add(t, gpus);
      touch(t);
    }
  }
  void quota_remove(std::size_t t, int gpus) { quota_add(t, -gpus); }
  void touch(std::size_t t) {
    if (!touched_flag_[t]) {
      touched_flag_[t] = 1;
      touched_.push_back(t);
    }
  }
  void add_extra(const KueueRunning& r, int sign) {
    for (const auto& a : r.placement) {
      const Node& n = free_.cluster().nodes[a.node.index()];
      for (std::uint64_t m = a.gpu_mask; m != 0; m &= m - 1) {
        auto& e = extra_[static_cast<std::size_t>(n.first_gpu + std::countr_zero(m))];
        e = static_cast<std::int16_t>(e + sign * r.milli);
      }
      changed_.push_back(a.node);
    }
  }
  // Takes a job out of its tenant's shed set (it stays in the real state).
  void unshed(JobId id) {
    if (!shed_[id]) return;
    shed_[id] = 0;
    const KueueRunning& r = running_.at(id);
    --shed_count_[r.tenant];
    shadow_quota_.add(r.tenant, r.gpus);
    add_extra(r, -1);
    touch(r.tenant);
  }
  // shed(t) for a tenant whose usage or candidates changed.
  void reshed(std::size_t t) {
    int over = quota_.usage(t) - quota_.nominal(t);
    std::size_t seen = 0;
    running_.for_each_of(t, [&](JobId id) {
      const KueueRunning& r = running_.at(id);
      if (over > 0) {
        over -= r.gpus;
        ++seen;
        if (!shed_[id]) {
          shed_[id] = 1;
          ++shed_count_[t];
          shadow_quota_.remove(t, r.gpus);
          add_extra(r, +1);
        }
        return true;
      }
      if (seen == shed_count_[t]) return false;  // no shed job further on
      if (shed_[id]) {
        shed_[id] = 0;
        --shed_count_[t];
        shadow_quota_.add(t, r.gpus);
        add_extra(r, -1);
      }
      return true;
    });
  }
  void refresh_shadow() {
    for (std::size_t t : touched_) {
      touched_flag_[t] = 0;
      reshed(t);
    }
    touched_.clear();
    for (NodeId n : changed_) shadow_.overlay_node(n, free_, extra_);
    changed_.clear();
  }
  // The classical search's answer (class comment): the job fits once every tenant shed.
  [[nodiscard]] bool shadow_fits(const JobSpec& j, std::size_t t, FreeMap::SetId nodes) const {
    if (quota_.borrowing(t, j.gpus)) return false;  // borrowWithinCohort = Never
    return j.gpus <= shadow_quota_.available(t) && place_job(shadow_, nodes, j).has_value();
  }

  // A tenant's queue in creation order (ids follow submit), and its jobs by request class
  // and reason last stated (request_index.hpp), for the nomination scan.
  struct TenantQueue {
    std::set<JobId> all;
    RequestIndex<JobId> index;
  };
  // What decides a queued job's answers in a scan: its request, priority and preemptibility.
  static RequestClass request_of(const JobSpec& j) {
    return request_class(j, (kueue_priority(j) + 8) * 2 + (j.preemptible ? 1 : 0));
  }

  // Queues j (not admissible in this cycle when `marked`); the caller states Priority.
  void enqueue(const JobSpec& j, bool marked = false) {
    auto& q = queues_[j.tenant.index()];
    if (q.all.empty())
      waiting_.insert(std::lower_bound(waiting_.begin(), waiting_.end(), j.tenant.index()),
                      j.tenant.index());
    if (!q.all.insert(j.id).second) return;
    q.index.add(j.id, request_of(j), j.id, WaitReason::Priority);
    mark_[j.id] = marked ? stamp_ : 0;
    queued_[j.id] = 1;
  }

  void dequeue(const JobSpec& j) {
    auto& q = queues_[j.tenant.index()];
    if (q.all.erase(j.id) > 0) q.index.erase(j.id, j.id);
    if (q.all.empty())
      waiting_.erase(std::lower_bound(waiting_.begin(), waiting_.end(), j.tenant.index()));
    queued_[j.id] = 0;
  }

  void arrive(const ClusterSnapshot& s, JobId id, Decisions& out) {
    const JobSpec& j = s.jobs[id.index()];
    const std::size_t t = j.tenant.index();
    const int limit = std::min(quota_.potential(t),
                               model_capacity(*s.cluster, nodes_[part(t)], j, capacity_[part(t)]));
    if (j.gpus > limit) {
      out.reject.push_back({id, "needs " + std::to_string(j.gpus) + " GPUs" + model_text(j) +
                                    "; tenant '" + s.tenants[t].name + "' can hold at most " +
                                    std::to_string(limit) + " (quota and nodes)"});
      return;
    }
    enqueue(j);
    note_wait(out, id, WaitReason::Priority);
  }

  // A failed search is not repeated for as large a job of this tenant until capacity moves
  // in this cycle (Kueue: the workload waits as inadmissible until something changes).
  [[nodiscard]] int cutoff(std::size_t t) const {
    return cutoff_stamp_[t] == cutoff_epoch_ ? cutoff_[t] : INT_MAX;
  }

  // Step 2 for tenant t: the first job in queue order that fits now (quota and placement) or
  // whose preemption search finds victims; the jobs passed are marked for the rest of the
  // cycle and told why they wait. BestEffortFIFO resumes at the tenant's cursor (the jobs
  // before it were passed earlier in this cycle); StrictFIFO looks at its head only.
  // Nothing changes during a scan, so every job of a request class gets the same answers
  // (request_index.hpp): the scan reads the first unmarked job of each class, and states the
  // passed jobs per class, only where their reason changes, in queue order.
  std::optional<Entry> nominate(const ClusterSnapshot& s, std::size_t t, Decisions& out) {
    TenantQueue& q = queues_[t];
    facts_.assign(q.index.classes(), Facts{});
    if (cfg_.strict_fifo || cfg_.reference_scan) return nominate_plain(s, t, out);
    const auto marked = [&](JobId k) { return mark_[k] == stamp_; };
    const bool resumes = cursor_stamp_[t] == stamp_;  // else from the queue's start
    const JobId from = resumes ? cursor_[t] : JobId(0);
    cursor_stamp_[t] = stamp_;
    // Each class's first unmarked job from the scan's position, read once: a class that fits
    // offers it, one that may search offers it until its search fails (then its next job).
    heads_.assign(q.index.classes(), JobId());
    std::optional<JobId> fit;
    for (std::size_t c = 0; c < q.index.classes(); ++c) {
      if (q.index.at(c).size == 0) continue;
      const JobId* k = q.index.first(c, resumes ? &from : nullptr, false, marked);
      if (!k) continue;
      heads_[c] = *k;
      const Facts& f = facts(s, t, *k);
      if (f.in_quota && f.fits) fit = fit ? std::min(*fit, *k) : *k;
    }
    // The jobs that would search, in queue order: the heads of the classes that do not fit
    // (a heap); a class whose GPUs reach the cutoff searches no more in this scan (the cutoff
    // only falls, and a failed search sets it to the job's GPUs).
    probes_heap_.clear();
    if (cfg_.limits.cohort && cfg_.reclaim != ReclaimPolicy::Never)
      for (std::uint32_t c = 0; c < heads_.size(); ++c)
        if (heads_[c].valid() && !(facts_[c].in_quota && facts_[c].fits))
          probes_heap_.emplace_back(heads_[c], c);
    const auto later = [](const auto& a, const auto& b) { return b.first < a.first; };
    std::make_heap(probes_heap_.begin(), probes_heap_.end(), later);
    std::optional<Entry> found;
    std::optional<JobId> end;  // the job nominated; none: the scan passed every job
    for (;;) {
      while (!probes_heap_.empty() &&
             q.index.at(probes_heap_.front().second).req.gpus >= cutoff(t)) {
        std::pop_heap(probes_heap_.begin(), probes_heap_.end(), later);
        probes_heap_.pop_back();
      }
      const bool probe = !probes_heap_.empty();
      if (fit && (!probe || *fit < probes_heap_.front().first)) {
        end = fit;
        found = entry(s, t, *fit);
        break;
      }
      if (!probe) break;
      std::pop_heap(probes_heap_.begin(), probes_heap_.end(), later);
      const JobId id = probes_heap_.back().first;
      probes_heap_.pop_back();
      if ((found = search(s, t, id))) {
        end = id;
        break;
      }
      // Passed (stated below), then marked. Its class searches no more in this scan: the
      // cutoff is now its GPUs.
      probes_.push_back(id);
    }
    cursor_[t] = end.value_or(JobId());
    notes_.clear();
    pass(q, resumes ? &from : nullptr, end ? &*end : nullptr, marked);
    for (JobId k : probes_) mark_[k] = stamp_;
    probes_.clear();
    // In the order restate() found them (request_index.hpp: any order gives the same state).
    for (const auto& [id, reason] : notes_) note_wait(out, id, reason);
    return found;
  }

  // The same scan job by job (StrictFIFO: its head only): the reference the indexed scan
  // is checked against (KueueConfig::reference_scan, tests/deep_queue_test.cpp).
  std::optional<Entry> nominate_plain(const ClusterSnapshot& s, std::size_t t, Decisions& out) {
    TenantQueue& q = queues_[t];
    auto it = cfg_.strict_fifo || cursor_stamp_[t] != stamp_ ? q.all.begin()
                                                             : q.all.lower_bound(cursor_[t]);
    for (; it != q.all.end(); ++it) {
      const JobId id = *it;
      if (mark_[id] == stamp_) {
        if (cfg_.strict_fifo) return std::nullopt;
        continue;
      }
      cursor_[t] = id;
      cursor_stamp_[t] = stamp_;
      const Facts f = facts_of(s, t, id);
      if (f.in_quota && f.fits) return entry(s, t, id);
      if (searches(t, id, s))
        if (auto e = search(s, t, id)) return e;
      mark_[id] = stamp_;
      note_wait(out, id, f.reason);
      q.index.stated(id, id, f.reason);
      if (cfg_.strict_fifo) return std::nullopt;
    }
    cursor_[t] = JobId();  // after every job
    cursor_stamp_[t] = stamp_;
    return std::nullopt;
  }

  // What a scan answers for a job, and so for every job of its request class (the indexed
  // scan asks once per class and scan).
  struct Facts {
    bool known = false;
    bool in_quota = false;
    bool fits = false;
    WaitReason reason = WaitReason::Priority;  // room_reason(), or Quota
  };
  const Facts& facts(const ClusterSnapshot& s, std::size_t t, JobId sample) {
    Facts& f = facts_[queues_[t].index.class_of(sample)];
    if (!f.known) f = facts_of(s, t, sample);
    return f;
  }
  Facts facts_of(const ClusterSnapshot& s, std::size_t t, JobId id) const {
    Facts f;
    const FreeMap::SetId nodes = sets_[part(t)];
    const JobSpec& j = s.jobs[id.index()];
    // A job the engine cannot preempt (Slurm --no-requeue) is admitted within its nominal
    // quota only: a borrowed admission could never be reclaimed. (Trace jobs are all
    // preemptible.) With preemption it never borrows either (borrowWithinCohort = Never).
    f.known = true;
    f.in_quota = j.gpus <= quota_.available(t) && (j.preemptible || !quota_.borrowing(t, j.gpus));
    const auto largest = free_.set_largest_fit(nodes);
    // The size shortcut is exact only for a job without a GPU model or node mask.
    if (f.in_quota)
      f.fits = largest && j.gpu_milli >= kMilliPerGpu && !constrained(j)
                   ? j.gpus <= *largest
                   : place_job(free_, nodes, j).has_value();
    const bool no_fit = j.gpu_milli < kMilliPerGpu || j.gpus > free_.set_free_gpus(nodes);
    f.reason =
        !f.in_quota ? WaitReason::Quota : (no_fit ? WaitReason::NoFit : WaitReason::Fragmented);
    return f;
  }
  // Whether a job that does not fit now has its preemption search run.
  [[nodiscard]] bool searches(std::size_t t, JobId id, const ClusterSnapshot& s) const {
    return cfg_.limits.cohort && cfg_.reclaim != ReclaimPolicy::Never &&
           s.jobs[id.index()].gpus < cutoff(t);
  }
  Entry entry(const ClusterSnapshot& s, std::size_t t, JobId id) const {
    const JobSpec& j = s.jobs[id.index()];
    return Entry{id,
                 t,
                 kueue_priority(j),
                 quota_.borrowing(t, j.gpus),
                 cfg_.fair_sharing ? quota_.drs(t, j.gpus) : 0,
                 {},
                 {}};
  }
  // The preemption search for `id`; when it fails, no job as large of this tenant searches
  // again until capacity moves in this cycle.
  std::optional<Entry> search(const ClusterSnapshot& s, std::size_t t, JobId id) {
    ++searches_;
    const JobSpec& j = s.jobs[id.index()];
    const FreeMap::SetId nodes = sets_[part(t)];
    Entry e = entry(s, t, id);
    if (shadowed_) {
      if (shadow_fits(j, t, nodes)) {
        e.search = true;
        return e;
      }
    } else {
      const KueueRequest req{&j, t, e.priority, nodes, &tree_};
      auto v = cfg_.fair_sharing
                   ? kueue_fair_preemption(req, running_, quota_, free_, cfg_.reclaim)
                   : kueue_classical_preemption(req, running_, quota_, free_, cfg_.reclaim);
      if (v) {
        e.placement = std::move(v->placement);
        e.victims = std::move(v->victims);
        return e;
      }
    }
    if (!constrained(j)) {  // a model's or mask's failure says nothing of other jobs
      cutoff_[t] = j.gpus;
      cutoff_stamp_[t] = cutoff_epoch_;
    }
    return std::nullopt;
  }
  // The scan passes the unmarked jobs of [from, to) (null: from the start, to the end): each
  // is told the reason of its class (every class with a job in the range has its facts known).
  template <class Marked>
  void pass(TenantQueue& q, const JobId* from, const JobId* to, Marked marked) {
    for (std::size_t c = 0; c < q.index.classes(); ++c)
      if (facts_[c].known) q.index.restate(c, from, to, facts_[c].reason, notes_, marked);
  }

  // Step 3.
  [[nodiscard]] bool better(const Entry& a, const Entry& b, const ClusterSnapshot& s) const {
    if (a.borrows != b.borrows) return !a.borrows;
    if (cfg_.fair_sharing && a.share != b.share) return a.share < b.share;
    if (a.priority != b.priority) return a.priority > b.priority;
    const Time ta = s.jobs[a.job.index()].submit, tb = s.jobs[b.job.index()].submit;
    if (ta != tb) return ta < tb;
    return a.job < b.job;
  }

  // Step 4.
  void admit(const ClusterSnapshot& s, Entry e, Decisions& out) {
    if (e.search) {  // the walk, now that this entry is admitted (it succeeds: see above)
      const JobSpec& j = s.jobs[e.job.index()];
      const KueueRequest req{&j, e.tenant, e.priority, sets_[part(e.tenant)], &tree_};
      auto v = kueue_classical_preemption(req, running_, quota_, free_, cfg_.reclaim);
      if (!v) throw std::logic_error("kueue: the shadow state and the search disagree");
      e.placement = std::move(v->placement);
      e.victims = std::move(v->victims);
    } else if (e.placement.empty()) {  // fits now: where (the free map is as nominated)
      e.placement = *place_job(free_, sets_[part(e.tenant)], s.jobs[e.job.index()]);
    }
    // Preempted in reverse order of the snapshot's running list (as Kueue's running list
    // was built from it: a fixed order for byte-identical outputs).
    if (e.victims.size() > 1) {
      std::vector<std::pair<std::size_t, JobId>> pos;
      for (std::size_t k = 0; k < s.running.size(); ++k)
        if (std::find(e.victims.begin(), e.victims.end(), s.running[k]) != e.victims.end())
          pos.emplace_back(k, s.running[k]);
      std::sort(pos.begin(), pos.end(), std::greater<>());
      for (std::size_t k = 0; k < pos.size(); ++k) e.victims[k] = pos[k].second;
    }
    for (JobId v : e.victims) {
      unshed(v);
      const KueueRunning& r = running_.at(v);
      out.preempt.push_back({r.job});
      quota_remove(r.tenant, r.gpus);
      free_.give(r.placement, r.milli);
      counted_[v] = 0;
      running_.remove(v);
      // Requeued at its old place, but not readmitted in the cycle that evicted it.
      enqueue(s.jobs[v.index()], true);
      note_wait(out, v, WaitReason::Priority);
      ++victims_;
    }
    if (!e.victims.empty()) {
      ++preempting_admissions_;
      ++cutoff_epoch_;  // capacity moved: searches may succeed again
    }
    const JobSpec& j = s.jobs[e.job.index()];
    const bool borrowed = quota_.borrowing(e.tenant, j.gpus);
    borrowed_starts_ += borrowed ? 1 : 0;
    quota_add(e.tenant, j.gpus);
    counted_[e.job] = 1;
    admitted_.push_back(e.job);  // a candidate from the next cycle on
    free_.take(e.placement, j.gpu_milli);
    dequeue(j);
    out.start.push_back(StartJob{e.job, std::move(e.placement), borrowed});
  }

  KueueConfig cfg_;
  bool per_tenant_ = false;
  std::vector<std::vector<NodeId>> nodes_;
  std::vector<int> capacity_;
  CohortQuota quota_;        // usage of the jobs counted_ (running or admitted now)
  KueueRunningSet running_;  // preemption candidates: admitted before this cycle
  FreeMap free_;
  std::vector<FreeMap::SetId> sets_;  // per partition
  std::vector<JobId> admitted_;       // admitted in this cycle
  PerJob<std::uint8_t> counted_;
  std::vector<TenantQueue> queues_;  // per tenant
  PerJob<std::uint32_t> mark_;       // == stamp_: not admissible in this cycle
  std::vector<Facts> facts_;         // scratch of one nomination: by request class
  std::vector<JobId> heads_, probes_;
  std::vector<std::pair<JobId, std::uint32_t>> probes_heap_;
  RequestIndex<JobId>::Notes notes_;
  std::vector<std::size_t> waiting_;  // tenants with a queued job, ascending
  PerJob<std::uint8_t> queued_;
  std::uint32_t stamp_ = 0;
  std::vector<int> cutoff_;
  std::vector<std::uint64_t> cutoff_stamp_;
  std::vector<std::size_t> active_;  // tenants still nominating in this cycle
  std::vector<JobId> cursor_;        // per tenant: first job not marked in this cycle
  std::vector<std::uint32_t> cursor_stamp_;
  // The shadow state (class comment).
  bool shadowed_ = false;
  CohortQuota shadow_quota_;
  FreeMap shadow_;
  std::vector<std::int16_t> extra_;  // per flat GPU: milli-GPUs of shed jobs on it
  std::vector<NodeId> changed_;      // nodes to overlay again (real changes, shed changes)
  PerJob<std::uint8_t> shed_;
  std::vector<std::size_t> shed_count_;
  std::vector<std::size_t> touched_;  // tenants to reshed
  std::vector<std::uint8_t> touched_flag_;
  TenantTree tree_;  // the tenants' tree (flat for flat tenants): hierarchical reclaim
  std::uint64_t cutoff_epoch_ = 0;
  std::size_t borrowed_starts_ = 0, preempting_admissions_ = 0, victims_ = 0, searches_ = 0;
};

}  // namespace

int kueue_priority(const JobSpec& job) {
  switch (job.qos) {
    case Qos::Guaranteed:
    case Qos::LatencySensitive:
      return 1;
    case Qos::BestEffort:
      return -1;
    default:
      return 0;
  }
}

const char* kueue_options() {
  return "scope=pooled|isolated, fair_sharing=on|off, queueing=best_effort|strict, "
         "reclaim=any|lower_priority|never, lending_limit=GPUS, borrowing_limit=GPUS";
}

std::unique_ptr<Policy> make_kueue(const PolicyContext& ctx, const KueueConfig& config) {
  return std::make_unique<Kueue>(ctx, config);
}

std::unique_ptr<Policy> make_kueue(const PolicyContext& ctx) {
  const PolicyOptions& o = ctx.options;
  KueueConfig c;
  const std::string scope = o.get("scope", "pooled");
  if (scope != "pooled" && scope != "isolated")
    throw InputError("--set scope: expected pooled or isolated, got '" + scope + "'");
  c.pooled = scope == "pooled";
  c.fair_sharing = o.get_bool("fair_sharing", false);
  const std::string queueing = o.get("queueing", "best_effort");
  if (queueing != "best_effort" && queueing != "strict")
    throw InputError("--set queueing: expected best_effort or strict, got '" + queueing + "'");
  c.strict_fifo = queueing == "strict";
  const std::string reclaim = o.get("reclaim", "any");
  if (reclaim == "any")
    c.reclaim = ReclaimPolicy::Any;
  else if (reclaim == "lower_priority")
    c.reclaim = ReclaimPolicy::LowerPriority;
  else if (reclaim == "never")
    c.reclaim = ReclaimPolicy::Never;
  else
    throw InputError("--set reclaim: expected any, lower_priority or never, got '" + reclaim + "'");
  // GPUs, or -1 for no limit; ranged so that the int cannot wrap.
  c.limits.lending_limit = static_cast<int>(o.get_int("lending_limit", -1, -1, 100'000));
  c.limits.borrowing_limit = static_cast<int>(o.get_int("borrowing_limit", -1, -1, 100'000));
  return make_kueue(ctx, c);
}

}  // namespace ds
