#include "baselines/lucid.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "baselines/lucid_queue.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "model/aux_data.hpp"

namespace ds {
namespace {

constexpr const char* kEbmFile = "Venus_Sept_ebm_weekly_updated.csv";  // Lucid's own
constexpr const char* kLgbFile = "Venus_Sept_lgb.csv";                 // QSSF's
constexpr const char* kForecastFile = "Venus_throughput_pred.csv";     // its arrival forecast
constexpr int kMaxShareGpus = 8;            // Lucid pairs only jobs of <= 8 GPUs
constexpr double kNegativeEstimate = 1000;  // CombinedEstimator: priority < 0 -> 1000

// One virtual cluster (or the pool): its nodes, queue and running jobs in start order.
struct Vc {
  std::vector<NodeId> nodes;
  FreeMap::SetId set = 0;  // `nodes` in the policy's free map
  int capacity = 0;        // GPUs it may ever have (with the elastic node)
  LucidQueue queue;        // (priority, arrival order), with the scan's indexes
  std::vector<JobId> run;
  // Running jobs that run alone (possible partners), by GPU count and sharescore bucket
  // (Lucid::score_bucket), each in start order (the order of `run`): the pairing rule looks
  // only at jobs of the same GPU count whose score can add up to <= 2 with the job's.
  std::array<std::array<std::set<std::pair<std::uint64_t, JobId>>, 4>, kMaxShareGpus + 1> alone;
  // Something allocate() looks at changed since it last ran here (queue, running jobs or
  // partners, its nodes' free GPUs, the sharing switch): otherwise it would try the same
  // jobs against the same partners and free GPUs, start nothing and state the same reasons.
  bool dirty = true;
};

constexpr std::uint32_t kNoVc = ~std::uint32_t{0};

class Lucid final : public Policy {
 public:
  Lucid(const PolicyContext& ctx, LucidSetup setup)
      : setup_(std::move(setup)), profiler_(setup_.profiler_config), vc_entry_(-1), vc_start_(-1) {
    std::set<NodeId> reserved;
    if (setup_.profiler)
      reserved.insert(setup_.profiler_config.base_nodes.begin(),
                      setup_.profiler_config.base_nodes.end());
    bool owned = false;
    for (const auto& n : ctx.cluster.nodes) owned = owned || n.owner.valid();
    per_tenant_ = !setup_.pooled && owned;
    vcs_.resize(per_tenant_ ? ctx.tenants.size() : 1);
    for (const auto& n : ctx.cluster.nodes) {
      if (per_tenant_ && !n.owner.valid()) continue;
      if (reserved.count(n.id)) continue;  // the profiler's
      Vc& vc = vcs_[per_tenant_ ? n.owner.index() : 0];
      vc.capacity += n.gpus;
      vc.nodes.push_back(n.id);
    }
    if (setup_.profiler)
      for (TenantId donor : setup_.profiler_config.elastic_donors)
        donor_vcs_.push_back(per_tenant_ ? donor.index() : 0);
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    sync(s);
    for (const auto& f : s.finished) finish(s, f);
    for (JobId id : s.withdrawn) withdraw(s, id);
    for (JobId id : s.adopted) adopt(s, id);
    for (JobId id : s.arrived) arrive(s, id, out);
    for (JobId id : s.requeued) {
      if (s.runtime[id.index()].status != JobStatus::Pending) continue;
      if (vc_entry_[id] < 0) {
        enter_vc(s, id);
        note_wait(out, id, WaitReason::Priority);
      } else {
        // Back in its VC queue as it was: a start the driver did not carry out (an online
        // engine defers it) or a run the engine requeued. A profiler stop entered its VC
        // already (add: false).
        requeue_in_vc(s, id, out);
      }
    }

    if (setup_.profiler) {
      stopped_.clear();
      profiler_.run(s, free_, out, stopped_);
      for (JobId id : stopped_) {
        enter_vc(s, id);
        note_wait(out, id, WaitReason::Priority);
      }
    }
    const bool sharing = sharing_on(s.now);
    if (sharing != last_sharing_)
      for (std::size_t v = 0; v < vcs_.size(); ++v) mark(v);
    last_sharing_ = sharing;
    std::sort(dirty_.begin(), dirty_.end());
    for (std::uint32_t v : dirty_)
      if (vcs_[v].dirty) allocate(s, vcs_[v], free_, sharing, out);
    dirty_.clear();
    if (setup_.profiler && !donor_vcs_.empty()) {
      if (donor_lists_.empty())  // vcs_ never grows: the pointers stay valid
        for (std::size_t d : donor_vcs_) donor_lists_.push_back(&vcs_[d].nodes);
      moves_.clear();
      profiler_.scale(s, free_, setup_.forecast ? &*setup_.forecast : nullptr, donor_lists_, out,
                      moves_);
      for (const auto& m : moves_) {
        const std::size_t v = donor_vcs_[m.donor];
        if (m.lent) {
          free_.set_erase(vcs_[v].set, m.node);
          vc_of_node_[m.node.index()] = kNoVc;
        } else {
          free_.set_insert(vcs_[v].set, m.node);
          vc_of_node_[m.node.index()] = static_cast<std::uint32_t>(v);
        }
        mark(v);
      }
      // A donor that got its node back runs again at once (in donor order, once each).
      for (std::size_t d = 0; d < donor_vcs_.size() && !moves_.empty(); ++d) {
        const std::size_t v = donor_vcs_[d];
        if (!vcs_[v].dirty) continue;
        bool returned = false;
        for (const auto& m : moves_) returned = returned || (m.donor == d && !m.lent);
        if (returned) allocate(s, vcs_[v], free_, sharing, out);
      }
    }
    out.wake_at = next_wake(s.now);
    return out;
  }

  void summarize(std::map<std::string, double>& out) const override {
    const std::string p = setup_.label + "_";
    const double n = static_cast<double>(std::max<std::size_t>(finished_, 1));
    out[p + "avg_jct_s"] = to_seconds(jct_sum_) / n;
    out[p + "avg_queue_s"] = to_seconds(queue_sum_) / n;
    out[p + "shared_starts"] = static_cast<double>(shared_starts_);
    if (setup_.profiler) {
      const auto& st = profiler_.stats();
      out[p + "profiled_jobs"] = static_cast<double>(st.profiled);
      out[p + "finished_in_profiler"] = static_cast<double>(st.completed);
      out[p + "profiler_stops"] = static_cast<double>(st.stopped);
      out[p + "profiler_scale_ups"] = static_cast<double>(st.scale_ups);
      out[p + "profiler_scale_ups_deferred"] = static_cast<double>(st.scale_ups_deferred);
      out[p + "profiler_scale_downs"] = static_cast<double>(st.scale_downs);
      out[p + "avg_profiler_queue_s"] =
          st.profiled ? to_seconds(prof_queue_sum_) / static_cast<double>(st.profiled) : 0;
    }
    if (setup_.predictor) accuracy_.summarize(out);
  }

 private:
  [[nodiscard]] std::size_t vc_of(const JobSpec& j) const {
    return per_tenant_ ? j.tenant.index() : 0;
  }

  void mark(std::size_t v) {
    if (vcs_[v].dirty) return;
    vcs_[v].dirty = true;
    dirty_.push_back(static_cast<std::uint32_t>(v));
  }

  // Brings the free map up to date (building the VC sets on first use) and marks the VCs
  // whose nodes changed; the profiler retries its queue when its pool changed.
  void sync(const ClusterSnapshot& s) {
    const bool first = vc_of_node_.empty();
    free_.sync(s);
    if (first) {
      vc_of_node_.assign(s.cluster->nodes.size(), kNoVc);
      for (std::size_t v = 0; v < vcs_.size(); ++v) {
        vcs_[v].set = free_.add_set(vcs_[v].nodes);
        for (NodeId n : vcs_[v].nodes) vc_of_node_[n.index()] = static_cast<std::uint32_t>(v);
        vcs_[v].dirty = true;
        dirty_.push_back(static_cast<std::uint32_t>(v));
      }
      return;
    }
    if (s.gpu_epoch == 0) {  // a snapshot without deltas: anything may have changed
      for (std::size_t v = 0; v < vcs_.size(); ++v) mark(v);
      profiler_.pool_changed();
      return;
    }
    for (NodeId n : s.changed_nodes) {
      if (vc_of_node_[n.index()] != kNoVc) mark(vc_of_node_[n.index()]);
      if (profiler_.in_pool(n)) profiler_.pool_changed();
    }
  }

  void finish(const ClusterSnapshot& s, const FinishedJob& f) {
    const JobSpec& j = s.jobs[f.job.index()];
    if (setup_.predictor) {
      setup_.predictor->observe(j, f.runtime);
      accuracy_.finished(f.job, f.runtime);
    }
    // Lucid's definitions: queue = profiler queue + VC wait; JCT from VC entry (or
    // submit, for a job that finished in the profiler).
    const Time pq = profiler_.queue_of(f.job);
    if (pq >= 0) prof_queue_sum_ += pq;
    ++finished_;
    if (setup_.profiler && profiler_.finished(f.job)) {
      queue_sum_ += pq;
      jct_sum_ += s.now - j.submit;
      return;
    }
    queue_sum_ += std::max<Time>(pq, 0) + (vc_start_[f.job] - vc_entry_[f.job]);
    jct_sum_ += s.now - vc_entry_[f.job];
    Vc& vc = vcs_[vc_of(j)];
    if (auto it = std::find(vc.run.begin(), vc.run.end(), f.job); it != vc.run.end()) {
      vc.run.erase(it);
      if (!partner_[f.job].valid()) set_alone(vc, j, false);
    }
    mark(vc_of(j));
    const JobId mate = partner_[f.job];
    if (mate.valid() && mate != f.job) {
      // speed_recover. Lucid quirk (cluster.py Node.check_colocate_jobs compares a job id
      // with the job dict, so the first entry on the GPUs wins): when the job that ran
      // first ends first, Lucid "recovers" the ending job itself and its partner stays
      // marked as sharing until it ends: it is never paired again.
      const bool stuck = setup_.lucid_recover_quirk && first_of_pair_[f.job];
      partner_[mate] = stuck ? mate : JobId();
      if (!stuck) set_alone(vc, s.jobs[mate.index()], true);
    }
    partner_[f.job] = JobId();
    first_of_pair_[f.job] = 0;
    placement_[f.job].clear();
  }

  // A job that left while waiting, in the profiler's queue or its VC's.
  void withdraw(const ClusterSnapshot& s, JobId id) {
    const JobSpec& j = s.jobs[id.index()];
    if (setup_.profiler && profiler_.withdraw(j)) return;
    if (vc_entry_[id] >= 0 && vcs_[vc_of(j)].queue.erase(j, priority_[id])) {
      --queued_;
      mark(vc_of(j));
    }
  }

  // A job found running (a restarted controller): it runs in its VC as it is. A shared
  // one is never paired again (its partner is unknown).
  void adopt(const ClusterSnapshot& s, JobId id) {
    const JobSpec& j = s.jobs[id.index()];
    const JobRuntime& r = s.runtime[id.index()];
    withdraw(s, id);
    share_score_[id] = share_score(s, j);
    if (priority_[id] <= 0) priority_[id] = 1;
    vc_entry_[id] = vc_start_[id] = r.last_start;
    placement_[id] = r.placement;
    partner_[id] = r.shared ? id : JobId();
    first_of_pair_[id] = 0;
    Vc& vc = vcs_[vc_of(j)];
    if (std::find(vc.run.begin(), vc.run.end(), id) == vc.run.end()) {
      vc.run.push_back(id);
      run_seq_[id] = next_run_seq_++;
      if (!r.shared) set_alone(vc, j, true);
    }
    mark(vc_of(j));
  }

  void arrive(const ClusterSnapshot& s, JobId id, Decisions& out) {
    const JobSpec& j = s.jobs[id.index()];
    // Lucid's forecast bins count from midnight before the first submit.
    if (setup_.forecast && !setup_.forecast->anchored())
      setup_.forecast->anchor(j.submit - j.submit % kDay);
    if (setup_.forecast) setup_.forecast->observe_arrival(s.now, j.gpus);
    // Per-job state is set afresh (a driver may reuse the id of a job that left).
    partner_.reset(id);
    first_of_pair_.reset(id);
    placement_.reset(id);
    vc_entry_.reset(id);
    vc_start_.reset(id);
    share_score_[id] = share_score(s, j);
    if (setup_.predictor) accuracy_.predicted(id, setup_.predictor->predict(j));
    const Vc& vc = vcs_[vc_of(j)];
    const int capacity = model_capacity(*s.cluster, vc.nodes, j, vc.capacity);
    if (j.gpus > capacity) {
      out.reject.push_back({id, "needs " + std::to_string(j.gpus) + " GPUs" + model_text(j) +
                                    "; its " + (per_tenant_ ? "virtual cluster" : "pool") +
                                    " has " + std::to_string(capacity)});
      return;
    }
    // A job of a GPU model the profiler's base nodes do not hold is not profiled.
    if (setup_.profiler && profiler_.takes(j) &&
        model_capacity(*s.cluster, setup_.profiler_config.base_nodes, j, j.gpus) >= j.gpus) {
      profiler_.enqueue(j);
      note_wait(out, id, WaitReason::Profiling);
      return;
    }
    enter_vc(s, id);
    note_wait(out, id, WaitReason::Priority);
  }

  [[nodiscard]] int share_score(const ClusterSnapshot& s, const JobSpec& j) const {
    if (auto it = setup_.share_score.find(j.name); it != setup_.share_score.end())
      return it->second;
    const Profile* prof = j.profile >= 0 && static_cast<std::size_t>(j.profile) < s.profiles.size()
                              ? &s.profiles[static_cast<std::size_t>(j.profile)]
                              : nullptr;
    return lucid_share_score(setup_.table, prof, j.gpu_util);
  }

  // The job joins its VC queue now, with its estimated GPU time as priority.
  void enter_vc(const ClusterSnapshot& s, JobId id) {
    const JobSpec& j = s.jobs[id.index()];
    double est = 0;
    if (!setup_.estimate_s.empty()) {
      auto it = setup_.estimate_s.find(j.name);
      if (it == setup_.estimate_s.end())
        throw InputError("lucid: job '" + j.name + "' has no estimate in " +
                         setup_.estimate_source + " (is it the estimate file of this trace?)");
      est = it->second;
    } else if (setup_.predictor) {
      est = to_seconds(setup_.predictor->predict(j));
      // It already ran this long in the profiler without finishing.
      if (profiler_.queue_of(id) >= 0)
        est = std::max(est, to_seconds(setup_.profiler_config.time_limit));
    }
    priority_[id] = est * j.gpus;
    vc_entry_[id] = s.now;
    if (vcs_[vc_of(j)].queue.add(j, priority_[id], share_score_[id])) ++queued_;
    mark(vc_of(j));
  }

  void requeue_in_vc(const ClusterSnapshot& s, JobId id, Decisions& out) {
    const JobSpec& j = s.jobs[id.index()];
    if (!vcs_[vc_of(j)].queue.add(j, priority_[id], share_score_[id])) return;
    ++queued_;
    mark(vc_of(j));
    note_wait(out, id, WaitReason::Priority);
  }

  [[nodiscard]] bool sharing_on(Time now) const {
    switch (setup_.sharing) {
      case LucidSharing::Always:
        return true;
      case LucidSharing::Never:
        return false;
      case LucidSharing::Pas:
        break;
    }
    if (!setup_.forecast) return true;
    const Time tick = now - now % setup_.pas_period;  // PAS holds its value between checks
    const auto f = setup_.forecast->window_mean(tick, ThroughputForecast::Field::Jobs);
    return !f || *f > setup_.pas_threshold;
  }

  [[nodiscard]] PairView view(const JobSpec& j) const {
    return PairView{j.gpus, j.gpu_memory_mib, share_score_[j.id], priority_[j.id]};
  }

  // A running job that runs alone and may take `j` as its partner (pairing rule).
  [[nodiscard]] std::optional<JobId> partner_for(const ClusterSnapshot& s, const Vc& vc,
                                                 const JobSpec& j) const {
    if (j.gpus > kMaxShareGpus || j.gpu_milli < kMilliPerGpu) return std::nullopt;
    const PairView me = view(j);
    // The first in start order over the buckets whose scores may pair: the first match of
    // each bucket, then the earliest of those.
    std::optional<std::pair<std::uint64_t, JobId>> best;
    const auto& buckets = vc.alone[static_cast<std::size_t>(j.gpus)];
    for (int b = 0; b < 4; ++b) {
      if (!bucket_may_pair(b, me.score)) continue;
      for (const auto& entry : buckets[static_cast<std::size_t>(b)]) {
        if (best && entry.first > best->first) break;
        const JobId t = entry.second;
        const Placement& p = placement_[t];
        if (!placement_accepts(*s.cluster, p, j)) continue;  // another GPU model
        const double mem =
            static_cast<double>(s.cluster->nodes[p.front().node.index()].gpu_memory_mib);
        if (lucid_can_pair(me, view(s.jobs[t.index()]), mem)) {
          best = entry;
          break;
        }
      }
    }
    if (!best) return std::nullopt;
    return best->second;
  }

  // Buckets of sharescores: 0 (scores <= 0), 1, 2, 3 (scores >= 3).
  static int score_bucket(int score) { return std::clamp(score, 0, 3); }
  // Whether a job of sharescore `score` may pair with some score of bucket b (sum <= 2).
  static bool bucket_may_pair(int b, int score) {
    return b == 0 || (b < 3 ? b <= 2 - score : score <= -1);
  }

  // Job `id` is a possible partner again (or for the first time).
  void set_alone(Vc& vc, const JobSpec& j, bool alone) {
    if (j.gpus > kMaxShareGpus || j.gpu_milli < kMilliPerGpu) return;
    auto& set = vc.alone[static_cast<std::size_t>(j.gpus)]
                        [static_cast<std::size_t>(score_bucket(share_score_[j.id]))];
    if (alone)
      set.emplace(run_seq_[j.id], j.id);
    else
      set.erase({run_seq_[j.id], j.id});
  }

  void start(const ClusterSnapshot& s, Vc& vc, JobId id, Placement p, bool shared, Decisions& out) {
    vc_start_[id] = s.now;
    placement_[id] = p;
    vc.run.push_back(id);
    run_seq_[id] = next_run_seq_++;
    if (!shared) set_alone(vc, s.jobs[id.index()], true);
    out.start.push_back(StartJob{id, std::move(p), false, shared});
  }

  // Whether some running job of `gpus` GPUs runs alone in the VC (a possible partner).
  [[nodiscard]] static bool any_alone(const Vc& vc, int gpus) {
    if (gpus > kMaxShareGpus) return false;
    for (const auto& bucket : vc.alone[static_cast<std::size_t>(gpus)])
      if (!bucket.empty()) return true;
    return false;
  }

  void note(Vc& vc, const QueueKey& k, WaitReason r, Decisions& out) {
    vc.queue.stated(k, r);
    note_wait(out, k.job, r);
  }
  void dequeue(Vc& vc, const JobSpec& j) {
    vc.queue.erase(j, priority_[j.id]);
    --queued_;
  }

  void allocate(const ClusterSnapshot& s, Vc& vc, FreeMap& free, bool sharing, Decisions& out) {
    vc.dirty = false;
    if (sharing) {
      if (setup_.reference_scan)
        allocate_sharing_plain(s, vc, free, out);
      else
        allocate_sharing(s, vc, free, out);
      return;
    }
    // Sharing off: start jobs in order; stop at the first that does not fit. The largest
    // whole-GPU job consolidate placement can place in the VC now (nullopt: node sizes
    // differ, ask place_job), refreshed after every start.
    std::optional<int> largest = free.set_largest_fit(vc.set);
    while (!vc.queue.empty()) {
      const auto [key, q] = *vc.queue.jobs().begin();
      const JobSpec& j = s.jobs[key.job.index()];
      std::optional<Placement> p;
      if (!largest || q.milli < kMilliPerGpu || q.gpus <= *largest) p = place_job(free, vc.set, j);
      if (!p) {
        note(vc, key, room_reason(free.set_free_gpus(vc.set), j), out);
        break;
      }
      free.take(*p, j.gpu_milli);
      dequeue(vc, j);
      start(s, vc, key.job, std::move(*p), false, out);
      largest = free.set_largest_fit(vc.set);
    }
  }

  // Sharing on, Lucid's scan: every queued job in order first looks for a partner (a running
  // job alone that it may pair with), else for room; one that finds neither waits, and the
  // scan goes on to the end. Looked at per request class (request_index.hpp): whether a job
  // can be placed depends on its class and the free map, which only loses capacity along the
  // scan; whether it can pair, on the running jobs alone of its GPU count (lucid_queue.hpp
  // finds the first job that can). So the scan is a merge, in queue order, of each class's
  // first job that can act; after each start the classes it may affect find theirs again
  // (a placement: those that could be placed, and its own GPU count, which gained a job
  // alone; a pairing: its GPU count, which lost one). The jobs that cannot act are told
  // room_reason(free GPUs when the scan passes them): free GPUs only fall, so per class
  // Fragmented up to the first placement that leaves fewer than its GPUs, NoFit after; only
  // the reasons that change are stated.
  void allocate_sharing(const ClusterSnapshot& s, Vc& vc, FreeMap& free, Decisions& out) {
    auto& index = vc.queue.index();
    const int free_before = free.set_free_gpus(vc.set);
    scan_ = Scan{free.set_largest_fit(vc.set), {}, std::nullopt, {}, {}, {}};
    scan_.cls.assign(index.classes(), ClassState{});
    for (std::uint32_t c = 0; c < index.classes(); ++c) refresh(s, vc, free, c);
    while (!scan_.heap.empty()) {
      std::pop_heap(scan_.heap.begin(), scan_.heap.end(), std::greater<>());
      const auto [key, c] = scan_.heap.back();
      scan_.heap.pop_back();
      if (scan_.cls[c].candidate != key) continue;  // replaced since
      act(s, vc, free, key, c, out);
    }
    // The reasons of the jobs the scan passed (all still queued).
    scan_.notes.clear();
    const auto none = [](const QueueKey&) { return false; };
    for (std::uint32_t c = 0; c < index.classes(); ++c) {
      const RequestClass& req = index.at(c).req;
      const QueueKey* below = nullptr;  // NoFit from here on
      bool all_below = req.milli < kMilliPerGpu || free_before < req.gpus;
      for (const auto& [k, left] : scan_.placed)
        if (!all_below && left < req.gpus) {
          below = &k;
          break;
        }
      if (all_below) {
        index.restate(c, nullptr, nullptr, WaitReason::NoFit, scan_.notes, none);
        continue;
      }
      index.restate(c, nullptr, below, WaitReason::Fragmented, scan_.notes, none);
      if (below) index.restate(c, below, nullptr, WaitReason::NoFit, scan_.notes, none);
    }
    // In the order restate() found them (request_index.hpp: any order gives the same state).
    for (const auto& [k, reason] : scan_.notes) note_wait(out, k.job, reason);
  }

  // The same scan job by job: the reference the indexed scan is checked against
  // (LucidSetup::reference_scan, tests/deep_queue_test.cpp).
  void allocate_sharing_plain(const ClusterSnapshot& s, Vc& vc, FreeMap& free, Decisions& out) {
    std::optional<int> largest = free.set_largest_fit(vc.set);
    for (auto it = vc.queue.jobs().begin(); it != vc.queue.jobs().end();) {
      const auto [key, q] = *it++;
      const JobSpec& j = s.jobs[key.job.index()];
      if (auto t = partner_for(s, vc, j)) {
        pair_start(s, vc, j, *t, out);
        continue;
      }
      std::optional<Placement> p;
      if (!largest || q.milli < kMilliPerGpu || q.gpus <= *largest) p = place_job(free, vc.set, j);
      if (!p) {
        note(vc, key, room_reason(free.set_free_gpus(vc.set), j), out);
        continue;
      }
      free.take(*p, j.gpu_milli);
      dequeue(vc, j);
      start(s, vc, key.job, std::move(*p), false, out);
      largest = free.set_largest_fit(vc.set);
    }
  }

  void pair_start(const ClusterSnapshot& s, Vc& vc, const JobSpec& j, JobId t, Decisions& out) {
    set_alone(vc, s.jobs[t.index()], false);
    partner_[j.id] = t;
    partner_[t] = j.id;
    first_of_pair_[t] = 1;
    ++shared_starts_;
    dequeue(vc, j);
    start(s, vc, j.id, placement_[t], true, out);
  }

  // The scan's next job that acts: pairs if it can, else is placed.
  void act(const ClusterSnapshot& s, Vc& vc, FreeMap& free, const QueueKey& key, std::uint32_t c,
           Decisions& out) {
    const JobId id = key.job;
    const JobSpec& j = s.jobs[id.index()];
    scan_.at = key;
    if (auto t = partner_for(s, vc, j)) {
      pair_start(s, vc, j, *t, out);
      // Every class of its GPU count lost a partner (one class per count without GPU models).
      for (std::uint32_t k = 0; k < scan_.cls.size(); ++k)
        if (k == c || vc.queue.index().at(k).req.gpus == j.gpus) refresh(s, vc, free, k);
      return;
    }
    auto p = place_job(free, vc.set, j);
    if (!p) throw std::logic_error("lucid: a job the scan found placeable does not fit");
    free.take(*p, j.gpu_milli);
    dequeue(vc, j);
    start(s, vc, id, std::move(*p), false, out);
    scan_.largest = free.set_largest_fit(vc.set);
    scan_.placed.emplace_back(key, free.set_free_gpus(vc.set));
    for (std::uint32_t k = 0; k < scan_.cls.size(); ++k)
      if (k == c || (scan_.cls[k].placeable && !placeable(s, vc, free, k)) ||
          (!scan_.cls[k].placeable && vc.queue.index().at(k).req.gpus == j.gpus))
        refresh(s, vc, free, k);
  }

  // Whether the jobs of class c can be placed now (`sample`: any of them).
  bool placeable(const ClusterSnapshot& s, Vc& vc, const FreeMap& free, std::uint32_t c) {
    const RequestClass& req = vc.queue.index().at(c).req;
    // The size shortcut is exact only for a class without a GPU model or node mask.
    if (scan_.largest && req.milli >= kMilliPerGpu && !req.constrained())
      return req.gpus <= *scan_.largest;
    const QueueKey* k = vc.queue.index().first(c, scan_.at ? &*scan_.at : nullptr, true,
                                               [](const QueueKey&) { return false; });
    return k && place_job(free, vc.set, s.jobs[k->job.index()]).has_value();
  }

  // Class c's first job after the scan's position that can act now.
  void refresh(const ClusterSnapshot& s, Vc& vc, const FreeMap& free, std::uint32_t c) {
    ClassState& st = scan_.cls[c];
    st.candidate.reset();
    const QueueKey* after = scan_.at ? &*scan_.at : nullptr;
    const QueueKey* first =
        vc.queue.index().first(c, after, true, [](const QueueKey&) { return false; });
    if (!first) return;
    st.placeable = placeable(s, vc, free, c);
    if (st.placeable) {
      st.candidate = *first;
    } else {
      const RequestClass& req = vc.queue.index().at(c).req;
      if (req.gpus > kMaxShareGpus || req.milli < kMilliPerGpu || !any_alone(vc, req.gpus)) return;
      for (const auto& bucket : vc.alone[static_cast<std::size_t>(req.gpus)])
        for (const auto& [seq, t] : bucket) {
          // The class has one GPU model and node mask (RequestClass): any of its jobs answers.
          if (!placement_accepts(*s.cluster, placement_[t], s.jobs[first->job.index()])) continue;
          const PairView tv = view(s.jobs[t.index()]);
          const double mem = static_cast<double>(
              s.cluster->nodes[placement_[t].front().node.index()].gpu_memory_mib);
          auto k = vc.queue.first_partner(
              c, after, tv.score, mem - tv.gmem_mib, 2 * tv.priority, [&](const QueueKey& q) {
                return lucid_can_pair(view(s.jobs[q.job.index()]), tv, mem);
              });
          if (k && (!st.candidate || *k < *st.candidate)) st.candidate = k;
        }
    }
    if (st.candidate) {
      scan_.heap.emplace_back(*st.candidate, c);
      std::push_heap(scan_.heap.begin(), scan_.heap.end(), std::greater<>());
    }
  }

  [[nodiscard]] Time next_wake(Time now) const {
    Time w = setup_.profiler ? profiler_.next_wake(now) : kNever;
    if (setup_.sharing == LucidSharing::Pas && setup_.forecast) {
      const bool waiting = queued_ > 0;
      const Time change = setup_.forecast->next_change(now);
      if (waiting && change != kNever) {
        const Time period = setup_.pas_period;
        w = std::min(w, (change + period - 1) / period * period);
      }
    }
    return w;
  }

  // Scratch of one allocate_sharing(): per request class, whether it can be placed and its
  // next job that can act; the heap of those; the scan's position; the placements made
  // (with the free GPUs after each), the notes.
  struct ClassState {
    bool placeable = false;
    std::optional<QueueKey> candidate;
  };
  struct Scan {
    std::optional<int> largest;
    std::vector<ClassState> cls;
    std::optional<QueueKey> at;
    std::vector<std::pair<QueueKey, std::uint32_t>> heap;
    std::vector<std::pair<QueueKey, int>> placed;
    RequestIndex<QueueKey>::Notes notes;
  };
  Scan scan_;

  LucidSetup setup_;
  LucidProfiler profiler_;
  bool per_tenant_ = true;
  std::vector<Vc> vcs_;
  std::vector<std::size_t> donor_vcs_;  // per elastic donor: its VC
  FreeMap free_;                        // kept across cycles (sync())
  std::vector<std::uint32_t> vc_of_node_;
  std::vector<std::uint32_t> dirty_;  // VCs marked dirty, unordered
  bool last_sharing_ = false;
  std::size_t queued_ = 0;  // jobs in VC queues
  std::vector<JobId> stopped_;
  std::vector<std::vector<NodeId>*> donor_lists_;
  std::vector<LucidProfiler::Move> moves_;
  PerJob<double> priority_;
  PerJob<int> share_score_;
  PerJob<JobId> partner_;
  PerJob<Time> vc_entry_, vc_start_;
  PerJob<Placement> placement_;
  PerJob<std::uint8_t> first_of_pair_;  // the running job another job was paired with
  PerJob<std::uint64_t> run_seq_;       // its place in its VC's start order
  std::uint64_t next_run_seq_ = 0;
  AccuracyTracker accuracy_;
  std::size_t shared_starts_ = 0, finished_ = 0;
  Time jct_sum_ = 0, queue_sum_ = 0, prof_queue_sum_ = 0;
};

// Unit u's donor in role `rank` (0, 1: base nodes; 2: elastic): the tenant named `name`
// (unit 0) or `name#u` (copy u of a tiled cluster, trace/tile.hpp), else the
// (3u + rank)-th largest by owned GPUs (ties: lower id).
TenantId pick_donor(std::span<const Tenant> tenants, const std::vector<int>& gpus,
                    const std::vector<TenantId>& by_size, const char* name, std::size_t rank,
                    std::size_t unit) {
  const std::string want = unit == 0 ? std::string(name) : name + ("#" + std::to_string(unit));
  for (const auto& t : tenants)
    if (t.name == want && gpus[t.id.index()] > 0) return t.id;
  const std::size_t k = 3 * unit + rank;
  return k < by_size.size() ? by_size[k] : TenantId();
}

}  // namespace

std::size_t lucid_profiler_units(const Cluster& cluster) {
  const auto units = static_cast<std::size_t>(
      std::llround(static_cast<double>(cluster.total_gpus()) / kLucidProfilerGpus));
  return std::max<std::size_t>(1, units);
}

ProfilerConfig lucid_profiler_nodes(const Cluster& cluster, std::span<const Tenant> tenants,
                                    std::size_t units) {
  ProfilerConfig c;
  std::vector<int> gpus(tenants.size(), 0);
  std::vector<std::optional<NodeId>> last(tenants.size());
  for (const auto& n : cluster.nodes)
    if (n.owner.valid() && n.owner.index() < tenants.size()) {
      gpus[n.owner.index()] += n.gpus;
      last[n.owner.index()] = n.id;
    }
  std::vector<TenantId> by_size;
  for (const auto& t : tenants)
    if (gpus[t.id.index()] > 0) by_size.push_back(t.id);
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](TenantId a, TenantId b) { return gpus[a.index()] > gpus[b.index()]; });
  std::vector<TenantId> used;
  auto fresh = [&](TenantId t) {
    return t.valid() && std::find(used.begin(), used.end(), t) == used.end();
  };
  for (std::size_t u = 0; u < std::max<std::size_t>(units, 1); ++u) {
    const TenantId a = pick_donor(tenants, gpus, by_size, "vc8Gr", 0, u);
    const TenantId b = pick_donor(tenants, gpus, by_size, "vcefl", 1, u);
    const TenantId e = pick_donor(tenants, gpus, by_size, "vcYVn", 2, u);
    if (!fresh(a) || !fresh(b) || a == b) break;  // too few tenants for another unit
    used.push_back(a);
    used.push_back(b);
    c.base_nodes.push_back(*last[a.index()]);
    c.base_nodes.push_back(*last[b.index()]);
    c.pool_gpus +=
        cluster.nodes[last[a.index()]->index()].gpus + cluster.nodes[last[b.index()]->index()].gpus;
    if (fresh(e) && e != a && e != b) {
      used.push_back(e);
      c.elastic_donors.push_back(e);
    }
    c.units = u + 1;
  }
  return c;
}

double lucid_colocated_speed(const ColocationTable& table, const Profile* job, const Profile* other,
                             double fallback) {
  if (!job || !other) return fallback;
  for (const char* m : {"NeuMF", "ResNet50", "BERT", "Transformer"})
    if (job->model == m || other->model == m) return 1.0;
  auto s = table.lookup(*job, *other);
  return s ? s->first : fallback;
}

const char* lucid_options() {
  return "fidelity=lucid|off, scope=isolated|pooled, estimates=ebm|lgb|predictor, "
         "predictor=KIND, forecast=file|online, sharing=pas|always|never, profiler=on|off, "
         "profiler_units=auto|N";
}

std::unique_ptr<Policy> make_lucid(const PolicyContext& ctx, LucidSetup setup) {
  return std::make_unique<Lucid>(ctx, std::move(setup));
}

std::unique_ptr<Policy> make_lucid(const PolicyContext& ctx) {
  return make_lucid(ctx, lucid_setup(ctx));
}

namespace {

// An aux file an option needs: an InputError naming it and the aux folder when absent.
void require_aux(const AuxData* aux, bool present, const char* name, const char* why) {
  if (!present)
    throw InputError(
        "lucid: " + std::string(why) + " needs " + name + " in the aux folder" +
        (aux && !aux->dir.empty() ? " '" + aux->dir + "'" : " (none given: --aux DIR)"));
}

// `estimates` (and `predictor`, read either way): the run-time estimates into `setup`.
void read_estimates(const PolicyOptions& o, const AuxData* aux, bool faithful, LucidSetup& setup) {
  // ebm (alias lucid): Lucid's own estimates, negatives -> 1000 s (CombinedEstimator);
  // lgb: the LightGBM file Lucid gives QSSF, as read there (no replacement).
  std::string estimates = o.get("estimates", faithful ? "ebm" : "predictor");
  if (estimates == "lucid") estimates = "ebm";
  const std::string predictor = o.get("predictor", "history");
  if (estimates == "ebm" || estimates == "lgb") {
    const bool ebm = estimates == "ebm";
    const EstimateFile* file =
        aux ? (ebm ? (aux->ebm ? &*aux->ebm : nullptr) : (aux->lgb ? &*aux->lgb : nullptr))
            : nullptr;
    require_aux(aux, file != nullptr, ebm ? kEbmFile : kLgbFile, "estimates=ebm|lgb");
    setup.estimate_source = file->path;
    for (const auto& [name, v] : file->seconds)
      setup.estimate_s.emplace(name, ebm && v < 0 ? kNegativeEstimate : v);
  } else if (estimates == "predictor") {
    PredictorConfig pc;
    pc.kind = predictor;
    setup.predictor = make_predictor(pc);
  } else {
    throw InputError("--set estimates: expected ebm, lgb or predictor, got '" + estimates + "'");
  }
}

// `forecast`: the throughput forecast PAS reads.
ThroughputForecast read_forecast(const PolicyOptions& o, const AuxData* aux, bool faithful) {
  const bool have_forecast = aux && aux->forecast;
  const std::string forecast = o.get("forecast", faithful || have_forecast ? "file" : "online");
  if (forecast == "file") {
    require_aux(aux, have_forecast, kForecastFile, "forecast=file");
    return ThroughputForecast::from_rows(*aux->forecast);
  }
  if (forecast == "online") return ThroughputForecast::online();
  throw InputError("--set forecast: expected file or online, got '" + forecast + "'");
}

LucidSharing read_sharing(const PolicyOptions& o) {
  const std::string sharing = o.get("sharing", "pas");
  if (sharing == "pas") return LucidSharing::Pas;
  if (sharing == "always") return LucidSharing::Always;
  if (sharing == "never") return LucidSharing::Never;
  throw InputError("--set sharing: expected pas, always or never, got '" + sharing + "'");
}

// `profiler_units`: how many profiler units (auto: lucid_profiler_units).
std::size_t read_profiler_units(const PolicyOptions& o, const Cluster& cluster) {
  const std::string units = o.get("profiler_units", "auto");
  if (units == "auto") return lucid_profiler_units(cluster);
  const auto v = parse_int(units);
  if (!v || *v < 1 || *v > 100000)
    throw InputError("--set profiler_units: expected auto or a count >= 1, got '" + units + "'");
  return static_cast<std::size_t>(*v);
}

}  // namespace

LucidSetup lucid_setup(const PolicyContext& ctx) {
  const PolicyOptions& o = ctx.options;
  const std::string fidelity = o.get("fidelity", "off");
  if (fidelity != "lucid" && fidelity != "off")
    throw InputError("--set fidelity: expected lucid or off, got '" + fidelity + "'");
  const bool faithful = fidelity == "lucid";
  const AuxData* aux = ctx.aux;

  LucidSetup setup;
  const std::string scope = o.get("scope", "isolated");
  if (scope != "isolated" && scope != "pooled")
    throw InputError("--set scope: expected isolated or pooled, got '" + scope + "'");
  setup.pooled = scope == "pooled";
  setup.profiler = o.get_bool("profiler", true);
  read_estimates(o, aux, faithful, setup);
  setup.forecast = read_forecast(o, aux, faithful);
  setup.sharing = read_sharing(o);

  if (aux && aux->colocation)
    setup.table = &*aux->colocation;
  else if (faithful)
    require_aux(aux, false, "single_data.csv", "fidelity=lucid (sharescore labels)");

  const std::size_t n_units = read_profiler_units(o, ctx.cluster);
  if (setup.profiler) {
    setup.profiler_config = lucid_profiler_nodes(ctx.cluster, ctx.tenants, n_units);
    if (setup.profiler_config.base_nodes.empty()) setup.profiler = false;  // too few VCs
  }
  setup.lucid_recover_quirk = faithful;
  setup.label = "lucid";
  return setup;
}

}  // namespace ds
