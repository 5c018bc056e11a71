#include "driver/reconciler.hpp"

#include <algorithm>
#include <unordered_set>

#include "driver/core.hpp"

namespace ds::driver {

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Waiting:
      return "waiting";
    case Phase::Running:
      return "running";
    case Phase::Stopping:
      return "stopping";
    case Phase::Ending:
      return "ending";
    case Phase::Ended:
      return "ended";
  }
  return "?";
}

const EngineJob* Reconciler::observed(JobId id) const {
  if (!obs_ || id.index() >= seen_.size() || seen_[id.index()] < 0) return nullptr;
  return &obs_->jobs[static_cast<std::size_t>(seen_[id.index()])];
}

void Reconciler::see(JobId id, std::size_t index) {
  if (seen_.size() <= id.index()) seen_.resize(std::size_t{id.index()} + 1, -1);
  seen_[id.index()] = static_cast<std::int32_t>(index);
  core_.book()[id].seen = true;
}

void Reconciler::fold(const Observation& obs, Time now, std::int64_t wall) {
  now_ = now;
  wall_ = wall;
  obs_ = &obs;
  JobBook& book = core_.book();
  book.begin_observation();
  seen_.assign(book.size(), -1);
  std::unordered_set<std::string> listed;  // the tombstones listed (end_observation)
  for (std::size_t k = 0; k < obs.jobs.size(); ++k) {
    const EngineJob& j = obs.jobs[k];
    if (book.tombstoned(j.key)) listed.insert(j.key);
    const std::optional<JobId> found = book.find(j.key);
    if (book.returns(found, j.key, !j.ended(), core_.state())) {
      // It left and the engine lists it unfinished again: a new arrival of its tenant.
      log_.warn("job_returned", {{"job", j.ref},
                                 {"state", j.state},
                                 {"detail", "a job that had ended is back: it arrives again"}});
      journal_.line("returned " + j.ref);
      book.reopen(j.key);
    } else if (found) {
      see(*found, k);
      observe_known(*found, j);
      continue;
    } else if (j.ended() || book.tombstoned(j.key)) {
      continue;
    }
    observe_new(j, k);
  }
  book.end_observation(listed);
  const ClusterState& state = core_.state();
  for (std::size_t i = 0; i < book.size(); ++i) {
    const JobId id(static_cast<std::uint32_t>(i));
    const JobStatus s = state.runtime(id).status;
    if (!book[id].seen && !book[id].free &&
        (s == JobStatus::Pending || s == JobStatus::Running || s == JobStatus::Future))
      vanish(id);
  }
}

void Reconciler::observe_new(const EngineJob& j, std::size_t index) {
  JobBook& book = core_.book();
  ClusterState& state = core_.state();
  const JobBook::Slot slot = book.add(j.key, j.ref);
  JobSpec spec = j.spec;
  spec.user = core_.user_id(j.user);
  const JobId id = slot.id;
  backoff_.clear(id);  // the slot's earlier job may have had start timeouts
  if (slot.fresh)
    state.add_job(spec);
  else
    state.reuse_job(id, spec);
  see(id, index);
  book[id].wake_wall = j.wake_wall_ms;
  engine_.admitted(id, j);
  journal_.line("arrive " + j.ref + " tenant=" + state.tenants()[spec.tenant.index()].name +
                " gpus=" + std::to_string(spec.gpus) +
                (spec.preemptible ? "" : " not-preemptible"));
  if (j.phase == Phase::Running) {
    adopt_running(id, j);
    return;
  }
  if (j.phase == Phase::Waiting && j.decision && j.handed_over) {
    // Handed over by an earlier controller run and not started yet: keep its decision.
    StartJob d{id, j.decision->placement, j.decision->borrowed, j.decision->shared};
    book.assume_start(id, wall_, d);
    book.handed_over(id, wall_);
    state.adopt(id, now_, d.placement, d.borrowed, d.shared,
                j.decision->decided != kNever ? j.decision->decided : now_);
    log_.info("adopt", {{"job", j.ref}, {"state", "released"}});
    return;
  }
  update_waiting(id, j);
}

// A waiting job without an intent: kept from starting by itself, and a candidate or not.
void Reconciler::update_waiting(JobId id, const EngineJob& j) {
  if (j.phase != Phase::Waiting) return;
  ClusterState& state = core_.state();
  if (core_.book()[id].intent == Intent::None) engine_.hold_back(id, j);
  WaitReason outside = engine_.eligible(id, j);
  if (outside == WaitReason::None && backoff_.until(id) > wall_) outside = WaitReason::NoFit;
  const JobStatus s = state.runtime(id).status;
  if (s == JobStatus::Future && outside == WaitReason::None) {
    engine_.became_candidate(id);
    state.unpark(id, now_);
  }
  if (s == JobStatus::Pending && outside != WaitReason::None) {
    state.park(id, now_);
    journal_.line("wait " + j.ref);
  }
  if (outside != WaitReason::None) state.note_outside(id, outside);
}

void Reconciler::observe_known(JobId id, const EngineJob& j) {
  engine_.observed(id, j);
  BookEntry& e = core_.book()[id];
  e.ref = j.ref;
  // a cycle runs when the engine would let it run, and when a start backoff ends
  e.wake_wall = std::max(j.wake_wall_ms, backoff_.until(id));
  const ClusterState& state = core_.state();
  switch (state.runtime(id).status) {
    case JobStatus::Future:
      if (j.phase == Phase::Running)
        adopt_running(id, j);
      else if (j.ended())
        core_.state().drop(id, now_);
      else
        update_waiting(id, j);
      return;
    case JobStatus::Pending:
      if (e.intent == Intent::Preempt) {
        known_preempting(id, j);
      } else if (j.phase == Phase::Running) {
        log_.warn("started_outside", {{"job", j.ref}});
        adopt_running(id, j);
      } else if (j.ended()) {
        withdraw(id);
      } else {
        update_waiting(id, j);
      }
      return;
    case JobStatus::Running:
      break;
    default:
      return;
  }
  if (e.intent == Intent::Start) {
    known_starting(id, j);
  } else if (j.phase == Phase::Running) {
    if (!j.placement.empty()) core_.state().relocate(id, j.placement);
  } else if (j.ended()) {
    finish(id);
  } else {
    requeued_by_engine(id, j);  // waiting or stopping
  }
}

// A preemption in flight: confirmed once the job waits, re-issued while it runs.
void Reconciler::known_preempting(JobId id, const EngineJob& j) {
  BookEntry& e = core_.book()[id];
  if (j.phase == Phase::Waiting) {
    core_.book().confirm(id);
    engine_.preempt_confirmed(id, j);
    journal_.line("confirm_preempt " + j.ref);
    update_waiting(id, j);
  } else if (j.phase == Phase::Running) {
    if (timed_out(e.intent_wall)) {
      preempt_failed(id, "the job was still running after the preemption timeout");
    } else if (wall_ - e.retry_wall > timing_.retry_ms) {
      e.retry_wall = wall_;
      engine_.repeat_preempt(id);
    }
  } else if (j.phase == Phase::Ended) {
    withdraw(id);  // cancelled while being preempted
  }
}

// A start in flight: confirmed once the job runs; handed over once the engine can hold it.
void Reconciler::known_starting(JobId id, const EngineJob& j) {
  BookEntry& e = core_.book()[id];
  ClusterState& state = core_.state();
  if (j.phase == Phase::Running) {
    core_.book().confirm(id);
    backoff_.clear(id);
    state.confirm_start(id, now_);  // observed start (the model assumed it at the decision)
    if (!j.placement.empty() && j.placement != state.runtime(id).placement) {
      log_.warn("allocation_differs", {{"job", j.ref}});
      state.relocate(id, j.placement);
    }
    journal_.line("confirm_start " + j.ref);
  } else if (j.ended()) {
    finish(id);
  } else if (j.phase == Phase::Waiting) {
    bool node_down = false;
    for (const auto& a : e.run_placement) node_down = node_down || !state.node_usable(a.node);
    if (node_down) {
      rollback_start(id, "start_on_down_node");
    } else if (!e.handed_over) {
      if (timed_out(e.intent_wall))
        rollback_start(id, "gpus_not_freed");
      else
        try_hand_over(id);
    } else if (timed_out(e.handover_wall)) {
      start_timed_out(id, j);
    } else if (!j.handed_over && wall_ - e.retry_wall > timing_.retry_ms) {
      try_hand_over(id);  // the hand-over did not take: issue it again
    }
  }
}

// A handed-over start the engine did not begin: rolled back; from the second in a row on, the
// job waits outside the policy for its backoff (StartBackoff), so that a start the engine
// refuses for a reason the driver cannot see does not hold GPUs idle in every cycle. Only a
// start the engine shows as handed over counts: one whose hand-over did not take (a lost
// release) is the driver's to repeat, not the engine's refusal.
void Reconciler::start_timed_out(JobId id, const EngineJob& j) {
  rollback_start(id, "start_timeout");
  if (!j.handed_over) return;
  const int in_a_row = backoff_.timed_out(id, wall_);
  const std::int64_t until = backoff_.until(id);
  if (until <= wall_) return;
  BookEntry& e = core_.book()[id];
  Log::Fields fields{{"job", e.ref},
                     {"timeouts_in_a_row", in_a_row},
                     {"wait_s", (until - wall_) / 1000},
                     {"detail",
                      "the engine did not start it where it was placed, again: it waits "
                      "before it is placed again"}};
  for (auto& f : core_.who(id)) fields.push_back(f);
  log_.warn("start_backoff", fields, {});
  journal_.line("backoff " + e.ref + " " + std::to_string(until - wall_));
  ClusterState& state = core_.state();
  state.park(id, now_);
  state.note_outside(id, WaitReason::NoFit);
  e.wake_wall = until;  // the book's next wake-up is computed before the next observation
}

void Reconciler::try_hand_over(JobId id) {
  BookEntry& e = core_.book()[id];
  e.retry_wall = wall_;
  switch (engine_.hand_over(id)) {
    case Actuator::Handover::Sent:
      core_.book().handed_over(id, wall_);
      ++core_.counters_mut().applied;
      journal_.line("release " + e.ref);
      break;
    case Actuator::Handover::Failed:
      ++core_.counters_mut().failed;
      break;
    case Actuator::Handover::NotYet:
      break;
    case Actuator::Handover::Refused:
      rollback_start(id, "held_by_user");
      break;
  }
}

void Reconciler::rollback_start(JobId id, const char* why) {
  BookEntry& e = core_.book()[id];
  ++core_.counters_mut().rollbacks;
  Log::Fields fields{{"job", e.ref}};
  for (auto& f : engine_.start_details(id)) fields.push_back(f);
  fields.emplace_back("detail", "start rolled back: the job waits again");
  for (auto& f : core_.who(id)) fields.push_back(f);
  log_.warn(why, fields, {});
  journal_.line(std::string("forget_start ") + e.ref + " " + why);
  if (e.handed_over) engine_.take_back(id);
  core_.book().forget(id);
  core_.state().unstart(id, now_);
}

// A preemption the engine did not carry out: the job runs on in the model (its GPUs are never
// handed out), and the starts waiting for its GPUs go back to the policy.
void Reconciler::preempt_failed(JobId id, const std::string& why) {
  BookEntry& e = core_.book()[id];
  ++core_.counters_mut().preemptions_failed;
  ++core_.counters_mut().failed;
  log_.error("preempt_failed", core_.who(id), {{"job", e.ref}, {"reason", why}});
  journal_.line("preempt_failed " + e.ref);
  core_.book().confirm(id);
  ClusterState& state = core_.state();
  const EngineJob* j = observed(id);
  state.adopt(id, now_, j ? j->placement : Placement{}, e.run_borrowed, e.run_shared, now_);
  const Placement mine = state.runtime(id).placement;
  const JobBook& book = core_.book();
  for (std::size_t i = 0; i < book.size(); ++i) {
    const JobId other(static_cast<std::uint32_t>(i));
    if (book[other].intent != Intent::Start || book[other].handed_over || other == id) continue;
    bool overlap = false;
    for (const auto& a : state.runtime(other).placement)
      for (const auto& b : mine)
        overlap = overlap || (a.node == b.node && (a.gpu_mask & b.gpu_mask));
    if (overlap) rollback_start(other, "victim_still_running");
  }
}

void Reconciler::adopt_running(JobId id, const EngineJob& j) {
  ClusterState& state = core_.state();
  const bool recorded = j.decision.has_value();
  // No record of this run (the driver did not start it): preemptible unless it cannot be.
  const bool borrowed = recorded ? j.decision->borrowed : state.spec(id).preemptible;
  const bool shared = recorded ? j.decision->shared : j.holds_shares;
  state.adopt(id, now_, j.placement, borrowed, shared, j.run_start != kNever ? j.run_start : now_,
              static_cast<int>(std::min<std::uint32_t>(j.restarts, 0xffff)));
  core_.book().confirm(id);
  core_.book().set_run(id, j.placement, borrowed, shared);
  engine_.adopted(id, j);
  log_.info("adopt", core_.who(id),
            {{"job", j.ref},
             {"borrowed", borrowed},
             {"shared", shared},
             {"pin", recorded ? "valid" : "none"}});
  journal_.line("adopt " + j.ref);
}

void Reconciler::requeued_by_engine(JobId id, const EngineJob& j) {
  ClusterState& state = core_.state();
  state.requeue(id, now_, false);
  engine_.requeued_by_engine(id, j);
  journal_.line("requeued " + j.ref);
  if (j.phase == Phase::Stopping) {
    state.park(id, now_);  // still ending: a candidate once it waits for good
    return;
  }
  engine_.hold_back(id, j);
  const WaitReason outside = engine_.eligible(id, j);
  if (outside == WaitReason::None) return;
  state.park(id, now_);
  state.note_outside(id, outside);
}

void Reconciler::finish(JobId id) {
  ClusterState& state = core_.state();
  state.finish(id, now_);
  core_.book().confirm(id);
  ++core_.counters_mut().completions;
  const EngineJob* j = observed(id);
  const JobRuntime& r = state.runtime(id);
  log_.info("job_end", core_.who(id),
            {{"job", core_.book()[id].ref},
             {"state", j ? j->state : std::string("gone")},
             {"run_s", static_cast<double>(r.attained) / 1000.0},
             {"restarts", r.preemptions}});
  journal_.line("finish " + core_.book()[id].ref);
}

void Reconciler::withdraw(JobId id) {
  ++core_.counters_mut().cancellations;
  log_.info("job_cancelled", core_.who(id),
            {{"job", core_.book()[id].ref}, {"detail", "ended while pending"}});
  core_.state().withdraw(id, now_);
  core_.book().confirm(id);
  journal_.line("withdraw " + core_.book()[id].ref);
}

void Reconciler::vanish(JobId id) {
  core_.book()[id].vanished = true;  // not listed: no tombstone when compacted
  switch (core_.state().runtime(id).status) {
    case JobStatus::Running:
      finish(id);
      break;
    case JobStatus::Pending:
      withdraw(id);
      break;
    default:
      core_.state().drop(id, now_);
  }
}

std::vector<std::string> Reconciler::drift() const {
  std::vector<std::string> out;
  const ClusterState& state = core_.state();
  const JobBook& book = core_.book();
  for (std::size_t i = 0; i < book.size(); ++i) {
    const JobId id(static_cast<std::uint32_t>(i));
    if (book[id].free || book[id].intent != Intent::None) continue;
    const JobStatus s = state.runtime(id).status;
    const EngineJob* j = observed(id);
    const std::string& ref = book[id].ref;
    if (s == JobStatus::Running) {
      if (!j || j->phase != Phase::Running)
        out.push_back(ref + ": the model runs it, the engine shows it " +
                      (j ? to_string(j->phase) : "gone"));
      else if (!j->placement.empty() && j->placement != state.runtime(id).placement)
        out.push_back(ref + ": runs elsewhere than the model says");
    } else if ((s == JobStatus::Pending || s == JobStatus::Future) && j &&
               j->phase == Phase::Running) {
      out.push_back(ref + ": the engine runs it, the model does not");
    }
  }
  return out;
}

}  // namespace ds::driver
