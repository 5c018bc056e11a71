#include "driver/core.hpp"

#include <algorithm>

namespace ds::driver {

// apply()'s hooks for an online driver: the book's intents, the counters and the logs around
// the engine's own actions (Actuator). One object per apply() call: it also holds what this
// cycle's decisions did so far (starts made, preemptions the engine refused), so that a start
// needing those GPUs is deferred - not a policy bug - instead of refused.
class Core::Hooks final : public ApplyHooks {
 public:
  explicit Hooks(Core& c) : c_(c) {}

  void reject(const RejectJob& r) override {
    const std::string& ref = c_.book_[r.job].ref;
    c_.log_.warn("reject", c_.who(r.job), {{"job", ref}, {"reason", r.reason}});
    c_.journal_.line("reject " + ref + " " + r.reason);
    if (c_.engine_.reject(r.job, r.reason))
      ++c_.counters_.applied;
    else
      ++c_.counters_.failed;
    ++c_.counters_.rejections;
  }

  Preempted preempt(JobId id) override {
    BookEntry& e = c_.book_[id];
    const EngineJob* j = c_.observed(id);
    if (e.intent == Intent::Start && (!j || j->phase != Phase::Running) && !(j && j->ended())) {
      // Decided but not running yet: take the start back. Should the engine start it
      // meanwhile, the next observation adopts it as running.
      if (e.handed_over) c_.engine_.take_back(id);
      c_.book_.forget(id);
      return Preempted::Requeued;
    }
    if (!j || j->phase != Phase::Running) {
      // Ending (cancelled by its user, completing) or gone: never requeued, its end stands.
      // Its GPUs stay held in the engine until it is gone; starts wait for that. The policy
      // sees its preemption confirmed and the job withdrawn.
      c_.log_.info("victim_ending", c_.who(id), {{"job", e.ref}});
      c_.journal_.line("victim_ending " + e.ref);
      c_.book_.confirm(id);
      return Preempted::Ended;
    }
    switch (c_.engine_.preempt(id, *j)) {
      case Actuator::Preemption::Refused:
        ++c_.counters_.failed;
        ++c_.counters_.preemptions_failed;
        failed_victims_.push_back(id);
        return Preempted::NotApplied;
      case Actuator::Preemption::Ended:
        // Observed running, ended before the request arrived: as a victim seen ending.
        c_.log_.info("victim_ended", c_.who(id),
                     {{"job", e.ref}, {"detail", "it ended on its own before the preemption"}});
        c_.journal_.line("victim_ended " + e.ref);
        c_.book_.confirm(id);
        return Preempted::Ended;
      case Actuator::Preemption::Sent:
        break;
    }
    c_.book_.assume_preempt(id, c_.wall_);
    return Preempted::Requeued;
  }

  void preempted(JobId id, const Placement& released) override {
    released_.push_back(released);
    BookEntry& e = c_.book_[id];
    e.intent_wall = e.retry_wall = c_.wall_;
    e.handed_over = false;
    c_.engine_.preempted(id);
    ++c_.counters_.preemptions;
    ++c_.counters_.applied;
    const JobSpec& j = c_.state_.spec(id);
    auto& per_tenant = c_.counters_.tenant_preemptions;
    if (per_tenant.size() <= j.tenant.index()) per_tenant.resize(j.tenant.index() + 1, 0);
    ++per_tenant[j.tenant.index()];
    c_.log_.info(
        "preempt", c_.who(id),
        {{"job", e.ref}, {"gpu_count", j.gpus}, {"restarts", c_.state_.runtime(id).preemptions}});
    c_.journal_.line("preempt " + e.ref);
  }

  std::optional<Placement> place(const StartJob& s) override {
    std::optional<Placement> where = c_.engine_.place(s);
    if (!where) return std::nullopt;  // the adapter logged why
    // GPUs an earlier start of this cycle took (unless colocated), a victim whose
    // preemption the engine refused still holds, or that a victim of this cycle released but
    // work outside the policy's jobs holds too (the engine gave them to it meanwhile).
    bool conflict = false;
    c_.state_.for_each_gpu(*where, [&](std::size_t g, NodeId) {
      for (JobId o : c_.state_.jobs_on_gpu(g))
        conflict = conflict || holds(failed_victims_, o) || (!s.shared && holds(started_, o));
      if (!c_.state_.gpu_available(g))
        for (const Placement& p : released_)
          c_.state_.for_each_gpu(p, [&](std::size_t r, NodeId) { conflict = conflict || r == g; });
    });
    if (conflict) {
      c_.log_.warn("start_deferred", c_.who(s.job),
                   {{"job", c_.book_[s.job].ref}, {"reason", "its GPUs are not free this cycle"}});
      c_.journal_.line("defer " + c_.book_[s.job].ref);
      return std::nullopt;
    }
    moved_ = *where != s.placement;
    return where;
  }

  void started(const StartJob& s, Time queued_since, Time) override {
    started_.push_back(s.job);
    c_.book_.assume_start(s.job, c_.wall_, s);
    ++c_.counters_.starts;
    c_.engine_.decided(s, queued_since, moved_);
    c_.reconciler_.try_hand_over(s.job);
  }

  void refused(DecisionKind kind, const Refused& r) override { c_.invalid_decision(kind, r); }

 private:
  static bool holds(const std::vector<JobId>& jobs, JobId o) {
    return std::find(jobs.begin(), jobs.end(), o) != jobs.end();
  }

  Core& c_;
  std::vector<JobId> started_, failed_victims_;
  std::vector<Placement> released_;  // by this cycle's victims
  bool moved_ = false;               // the start being applied: the engine holds it elsewhere
};

Core::Core(const Cluster& cluster, std::span<const Tenant> tenants, Actuator& engine, Log& log,
           Journal& journal, Timing timing)
    : engine_(engine),
      log_(log),
      journal_(journal),
      state_(cluster, tenants),
      reconciler_(*this, engine, log, journal) {
  reconciler_.set_timing(timing);
  for (const Node& n : cluster.nodes) node_ids_[n.name] = n.id;
}

void Core::set_policy(std::unique_ptr<Policy> p, bool fresh_view) {
  policy_ = std::move(p);
  if (fresh_view) state_.present_all();
}

void Core::set_time(Time now, std::int64_t wall_ms) {
  now_ = now;
  wall_ = wall_ms;
  // A start handed over in a quiet cycle (no fold) counts its timeout from this cycle, not
  // from the last fold: with the fold's time it was rolled back as timed out at the next one.
  reconciler_.set_time(now, wall_ms);
  journal_.set_time(wall_ms, now);
}

void Core::observe_nodes(const std::vector<EngineNode>& nodes) {
  auto set = [&](NodeId id, const std::string& name, bool usable, const std::string& state) {
    if (state_.node_usable(id) != usable) {
      // A node coming back is routine (info); one going away needs an operator (warn).
      if (usable)
        log_.info("node_up", {{"node", name}, {"state", state}});
      else
        log_.warn("node_down", {{"node", name}, {"state", state}});
    }
    state_.set_node_usable(id, usable);
  };
  std::vector<char> listed(state_.cluster().nodes.size(), 0);
  for (const auto& n : nodes) {
    auto it = node_ids_.find(n.name);
    if (it == node_ids_.end()) continue;
    const NodeId id = it->second;
    listed[id.index()] = 1;
    set(id, n.name, n.usable, n.state);
    state_.set_no_sharing(id, n.shared);
  }
  for (const Node& n : state_.cluster().nodes)
    if (!listed[n.id.index()]) set(n.id, n.name, false, "gone");
}

Decisions Core::decide() {
  state_.order_arrivals();  // the policy expects arrivals in submission order
  Decisions d = policy_->decide(state_.snapshot(now_));
  if (d.wake_at != kNever && d.wake_at > now_ && (wake_at_ == kNever || d.wake_at < wake_at_))
    wake_at_ = d.wake_at;
  state_.clear_deltas();
  return d;
}

ApplyReport Core::apply(const Decisions& d) {
  Hooks hooks(*this);
  ApplyReport r = ds::apply(state_, d, now_, hooks);
  counters_.deferrals += r.deferred;  // the policy thinks they started: told they wait again
  return r;
}

void Core::invalid_decision(DecisionKind kind, const Refused& r) {
  ++counters_.invalid_decisions;
  const bool known = book_.known(r.job);
  const std::string ref =
      known ? book_[r.job].ref : std::string("id ") + std::to_string(r.job.index());
  log_.error("decision_invalid", known ? who(r.job) : Log::Fields{},
             {{"decision", to_string(kind)},
              {"job", ref},
              {"error", r.what},
              {"detail", "a decision the policy should not have made: skipped"}});
  journal_.line(std::string("invalid ") + to_string(kind) + " " + (known ? ref : "?"));
}

int Core::borrow_beyond_quota() {
  int changed = 0;
  for (std::size_t t = 0; t < state_.tenants().size(); ++t) {
    const std::int64_t quota = std::int64_t{state_.tenants()[t].quota_gpus} * kMilliPerGpu;
    std::int64_t guaranteed = state_.usage(TenantId(static_cast<std::uint32_t>(t))).guaranteed;
    if (guaranteed <= quota) continue;
    std::vector<JobId> runs;
    for (JobId id : state_.running())
      if (state_.spec(id).tenant.index() == t && !state_.runtime(id).borrowed &&
          state_.spec(id).preemptible && book_[id].intent == Intent::None)
        runs.push_back(id);
    // The newest runs first: a reclaim then costs the least work.
    std::sort(runs.begin(), runs.end(), [&](JobId a, JobId b) {
      return state_.runtime(a).last_start > state_.runtime(b).last_start;
    });
    for (JobId id : runs) {
      if (guaranteed <= quota) break;
      guaranteed -= std::int64_t{state_.spec(id).gpus} * state_.spec(id).gpu_milli;
      state_.set_borrowed(id);
      book_.set_run(id, state_.runtime(id).placement, true, state_.runtime(id).shared);
      engine_.lent_out(id);
      log_.info("quota_cut_borrowed", who(id),
                {{"job", book_[id].ref},
                 {"gpu_count", state_.spec(id).gpus},
                 {"quota_gpus", state_.tenants()[t].quota_gpus},
                 {"detail", "its tenant's guarantee was cut: the run is borrowed (preemptible)"}});
      journal_.line("borrowed " + book_[id].ref);
      ++changed;
    }
  }
  return changed;
}

void Core::compact() {
  for (JobId id : book_.compact(state_, state_.listed(), wall_)) {
    state_.clear_job(id);
    engine_.forgotten(id);
    ++counters_.compacted;
  }
}

Log::Fields Core::who(JobId id) const {
  const JobSpec& j = state_.spec(id);
  const std::size_t t = j.tenant.index();
  std::string account = t < tenant_labels_.size()     ? tenant_labels_[t]
                        : t < state_.tenants().size() ? state_.tenants()[t].name
                                                      : std::string();
  return {{"user", user_name(j.user)}, {"account", account}};
}

UserId Core::user_id(const std::string& name) {
  auto [it, added] = user_ids_.try_emplace(name, static_cast<std::uint32_t>(users_.size()));
  if (added) users_.push_back(name);
  return UserId(it->second);
}

const std::string& Core::user_name(UserId u) const {
  static const std::string none;
  return u.valid() && u.index() < users_.size() ? users_[u.index()] : none;
}

}  // namespace ds::driver
