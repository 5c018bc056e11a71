#include "baselines/lucid.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

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
  int capacity = 0;                          // GPUs it may ever have (with the elastic node)
  std::set<std::pair<double, JobId>> queue;  // (priority, arrival order)
  std::vector<JobId> run;
};

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
    const TenantId donor = setup_.profiler_config.elastic_donor;
    if (setup_.profiler && donor.valid()) donor_vc_ = per_tenant_ ? donor.index() : 0;
  }

  Decisions decide(const ClusterSnapshot& s) override {
    Decisions out;
    for (const auto& f : s.finished) finish(s, f);
    for (JobId id : s.withdrawn) withdraw(s, id);
    for (JobId id : s.adopted) adopt(s, id);
    for (JobId id : s.arrived) arrive(s, id, out);
    for (JobId id : s.requeued)  // only profiler stops preempt; they entered their VC already
      if (s.runtime[id.index()].status == JobStatus::Pending && vc_entry_[id] < 0) {
        enter_vc(s, id);
        note_wait(out, id, WaitReason::Priority);
      }

    FreeMap free(s);
    if (setup_.profiler) {
      std::vector<JobId> stopped;
      profiler_.run(s, free, out, stopped);
      for (JobId id : stopped) {
        enter_vc(s, id);
        note_wait(out, id, WaitReason::Priority);
      }
    }
    const bool sharing = sharing_on(s.now);
    for (Vc& vc : vcs_) allocate(s, vc, free, sharing, out);
    if (setup_.profiler && donor_vc_) {
      Vc& donor = vcs_[*donor_vc_];
      const std::size_t before = donor.nodes.size();
      profiler_.scale(s, free, setup_.forecast ? &*setup_.forecast : nullptr, &donor.nodes, out);
      if (donor.nodes.size() > before) allocate(s, donor, free, sharing, out);
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
    if (auto it = std::find(vc.run.begin(), vc.run.end(), f.job); it != vc.run.end())
      vc.run.erase(it);
    const JobId mate = partner_[f.job];
    if (mate.valid() && mate != f.job) {
      // speed_recover. Lucid quirk (cluster.py Node.check_colocate_jobs compares a job id
      // with the job dict, so the first entry on the GPUs wins): when the job that ran
      // first ends first, Lucid "recovers" the ending job itself and its partner stays
      // marked as sharing until it ends: it is never paired again.
      const bool stuck = setup_.lucid_recover_quirk && first_of_pair_[f.job];
      partner_[mate] = stuck ? mate : JobId();
    }
    partner_[f.job] = JobId();
    first_of_pair_[f.job] = 0;
    placement_[f.job].clear();
  }

  // A job that left while waiting, in the profiler's queue or its VC's.
  void withdraw(const ClusterSnapshot& s, JobId id) {
    const JobSpec& j = s.jobs[id.index()];
    if (setup_.profiler && profiler_.withdraw(j)) return;
    if (vc_entry_[id] >= 0) vcs_[vc_of(j)].queue.erase({priority_[id], id});
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
    if (std::find(vc.run.begin(), vc.run.end(), id) == vc.run.end()) vc.run.push_back(id);
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
    if (j.gpus > vc.capacity) {
      out.reject.push_back({id, "needs " + std::to_string(j.gpus) + " GPUs; its " +
                                    (per_tenant_ ? "virtual cluster" : "pool") + " has " +
                                    std::to_string(vc.capacity)});
      return;
    }
    if (setup_.profiler && profiler_.takes(j)) {
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
    vcs_[vc_of(j)].queue.emplace(priority_[id], id);
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
    for (JobId t : vc.run) {
      if (partner_[t].valid()) continue;
      const Placement& p = placement_[t];
      const double mem =
          static_cast<double>(s.cluster->nodes[p.front().node.index()].gpu_memory_mib);
      if (lucid_can_pair(me, view(s.jobs[t.index()]), mem)) return t;
    }
    return std::nullopt;
  }

  void start(const ClusterSnapshot& s, Vc& vc, JobId id, Placement p, bool shared, Decisions& out) {
    vc_start_[id] = s.now;
    placement_[id] = p;
    vc.run.push_back(id);
    out.start.push_back(StartJob{id, std::move(p), false, shared});
  }

  void allocate(const ClusterSnapshot& s, Vc& vc, FreeMap& free, bool sharing, Decisions& out) {
    for (auto it = vc.queue.begin(); it != vc.queue.end();) {
      const JobId id = it->second;
      const JobSpec& j = s.jobs[id.index()];
      if (sharing) {
        if (auto t = partner_for(s, vc, j)) {
          partner_[id] = *t;
          partner_[*t] = id;
          first_of_pair_[*t] = 1;
          ++shared_starts_;
          start(s, vc, id, placement_[*t], true, out);
          it = vc.queue.erase(it);
          continue;
        }
      }
      auto p = place_job(free, vc.nodes, j);
      if (!p) {
        note_wait(out, id, room_reason(free.total_free_gpus(vc.nodes), j));
        if (!sharing) break;  // head-of-line while sharing is off
        ++it;
        continue;
      }
      free.take(*p, j.gpu_milli);
      start(s, vc, id, std::move(*p), false, out);
      it = vc.queue.erase(it);
    }
  }

  [[nodiscard]] Time next_wake(Time now) const {
    Time w = setup_.profiler ? profiler_.next_wake(now) : kNever;
    if (setup_.sharing == LucidSharing::Pas && setup_.forecast) {
      bool waiting = false;
      for (const Vc& vc : vcs_) waiting = waiting || !vc.queue.empty();
      const Time change = setup_.forecast->next_change(now);
      if (waiting && change != kNever) {
        const Time period = setup_.pas_period;
        w = std::min(w, (change + period - 1) / period * period);
      }
    }
    return w;
  }

  LucidSetup setup_;
  LucidProfiler profiler_;
  bool per_tenant_ = true;
  std::vector<Vc> vcs_;
  std::optional<std::size_t> donor_vc_;
  PerJob<double> priority_;
  PerJob<int> share_score_;
  PerJob<JobId> partner_;
  PerJob<Time> vc_entry_, vc_start_;
  PerJob<Placement> placement_;
  PerJob<std::uint8_t> first_of_pair_;  // the running job another job was paired with
  AccuracyTracker accuracy_;
  std::size_t shared_starts_ = 0, finished_ = 0;
  Time jct_sum_ = 0, queue_sum_ = 0, prof_queue_sum_ = 0;
};

// The tenant named `name`, or the `rank`-th largest by owned GPUs (ties: lower id).
TenantId pick_donor(std::span<const Tenant> tenants, const std::vector<int>& gpus, const char* name,
                    std::size_t rank) {
  for (const auto& t : tenants)
    if (t.name == name && gpus[t.id.index()] > 0) return t.id;
  std::vector<TenantId> order;
  for (const auto& t : tenants)
    if (gpus[t.id.index()] > 0) order.push_back(t.id);
  std::stable_sort(order.begin(), order.end(),
                   [&](TenantId a, TenantId b) { return gpus[a.index()] > gpus[b.index()]; });
  return rank < order.size() ? order[rank] : TenantId();
}

}  // namespace

ProfilerConfig lucid_profiler_nodes(const Cluster& cluster, std::span<const Tenant> tenants) {
  ProfilerConfig c;
  std::vector<int> gpus(tenants.size(), 0);
  std::vector<std::optional<NodeId>> last(tenants.size());
  for (const auto& n : cluster.nodes)
    if (n.owner.valid() && n.owner.index() < tenants.size()) {
      gpus[n.owner.index()] += n.gpus;
      last[n.owner.index()] = n.id;
    }
  const TenantId a = pick_donor(tenants, gpus, "vc8Gr", 0);
  const TenantId b = pick_donor(tenants, gpus, "vcefl", 1);
  const TenantId e = pick_donor(tenants, gpus, "vcYVn", 2);
  if (!a.valid() || !b.valid() || a == b) return c;
  c.base_nodes = {*last[a.index()], *last[b.index()]};
  if (e.valid() && e != a && e != b) c.elastic_donor = e;
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
         "predictor=KIND, forecast=file|online, sharing=pas|always|never, profiler=on|off";
}

std::unique_ptr<Policy> make_lucid(const PolicyContext& ctx, LucidSetup setup) {
  return std::make_unique<Lucid>(ctx, std::move(setup));
}

std::unique_ptr<Policy> make_lucid(const PolicyContext& ctx) {
  return make_lucid(ctx, lucid_setup(ctx));
}

LucidSetup lucid_setup(const PolicyContext& ctx) {
  const PolicyOptions& o = ctx.options;
  const std::string fidelity = o.get("fidelity", "off");
  if (fidelity != "lucid" && fidelity != "off")
    throw InputError("--set fidelity: expected lucid or off, got '" + fidelity + "'");
  const bool faithful = fidelity == "lucid";
  const AuxData* aux = ctx.aux;
  auto require = [&](bool present, const char* name, const char* why) {
    if (!present)
      throw InputError(
          "lucid: " + std::string(why) + " needs " + name + " in the aux folder" +
          (aux && !aux->dir.empty() ? " '" + aux->dir + "'" : " (none given: --aux DIR)"));
  };

  LucidSetup setup;
  const std::string scope = o.get("scope", "isolated");
  if (scope != "isolated" && scope != "pooled")
    throw InputError("--set scope: expected isolated or pooled, got '" + scope + "'");
  setup.pooled = scope == "pooled";
  setup.profiler = o.get_bool("profiler", true);

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
    require(file != nullptr, ebm ? kEbmFile : kLgbFile, "estimates=ebm|lgb");
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

  const bool have_forecast = aux && aux->forecast;
  const std::string forecast = o.get("forecast", faithful || have_forecast ? "file" : "online");
  if (forecast == "file") {
    require(have_forecast, kForecastFile, "forecast=file");
    setup.forecast = ThroughputForecast::from_rows(*aux->forecast);
  } else if (forecast == "online") {
    setup.forecast = ThroughputForecast::online();
  } else {
    throw InputError("--set forecast: expected file or online, got '" + forecast + "'");
  }

  const std::string sharing = o.get("sharing", "pas");
  if (sharing == "pas")
    setup.sharing = LucidSharing::Pas;
  else if (sharing == "always")
    setup.sharing = LucidSharing::Always;
  else if (sharing == "never")
    setup.sharing = LucidSharing::Never;
  else
    throw InputError("--set sharing: expected pas, always or never, got '" + sharing + "'");

  if (aux && aux->colocation)
    setup.table = &*aux->colocation;
  else if (faithful)
    require(false, "single_data.csv", "fidelity=lucid (sharescore labels)");

  if (setup.profiler) {
    setup.profiler_config = lucid_profiler_nodes(ctx.cluster, ctx.tenants);
    if (setup.profiler_config.base_nodes.empty()) setup.profiler = false;  // too few VCs
  }
  setup.lucid_recover_quirk = faithful;
  setup.label = "lucid";
  return setup;
}

}  // namespace ds
