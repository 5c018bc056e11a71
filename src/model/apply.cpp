#include "model/apply.hpp"

namespace ds {
namespace {

void refuse(ApplyReport& r, ApplyHooks& hooks, DecisionKind kind, Refused why) {
  hooks.refused(kind, why);
  r.refused.push_back(std::move(why));
  r.refused_kind.push_back(kind);
}

void apply_rejects(ClusterState& state, const Decisions& d, Time now, ApplyHooks& hooks,
                   ApplyReport& r) {
  for (const RejectJob& rj : d.reject) {
    if (auto e = state.reject_error(rj)) {
      refuse(r, hooks, DecisionKind::Reject, std::move(*e));
      continue;
    }
    hooks.reject(rj);
    state.reject(rj.job, now);
    ++r.rejected;
  }
}

void apply_preempts(ClusterState& state, const Decisions& d, Time now, ApplyHooks& hooks,
                    ApplyReport& r) {
  for (const PreemptJob& p : d.preempt) {
    if (auto e = state.preempt_error(p.job)) {
      // A running job the policy may not preempt runs on: the policy is told so.
      if (e->kind == Refusal::NotPreemptible) state.preempt_not_applied(p.job);
      refuse(r, hooks, DecisionKind::Preempt, std::move(*e));
      continue;
    }
    switch (hooks.preempt(p.job)) {
      case ApplyHooks::Preempted::NotApplied:
        state.preempt_not_applied(p.job);
        ++r.not_preempted;
        continue;
      case ApplyHooks::Preempted::Ended:
        state.requeue(p.job, now);
        state.withdraw(p.job, now);
        ++r.ended_victims;
        continue;
      case ApplyHooks::Preempted::Requeued:
        break;
    }
    const Placement released = state.runtime(p.job).placement;
    state.requeue(p.job, now);
    hooks.preempted(p.job, released);
    ++r.preempted;
  }
}

// A start the state refuses: a pending job is told it waits again.
void refuse_start(ClusterState& state, const StartJob& s, Refused why, ApplyHooks& hooks,
                  ApplyReport& r) {
  if (why.kind != Refusal::UnknownJob && why.kind != Refusal::NotPending)
    state.start_not_applied(s.job);
  refuse(r, hooks, DecisionKind::Start, std::move(why));
}

void apply_starts(ClusterState& state, const Decisions& d, Time now, ApplyHooks& hooks,
                  ApplyReport& r) {
  for (const StartJob& s : d.start) {
    if (auto e = state.placement_error(s)) {
      refuse_start(state, s, std::move(*e), hooks, r);
      continue;
    }
    std::optional<Placement> where = hooks.place(s);
    if (!where) {
      state.start_not_applied(s.job);
      ++r.deferred;
      continue;
    }
    const bool moved = *where != s.placement;
    StartJob applied;
    if (moved) {
      applied = s;
      applied.placement = std::move(*where);
    }
    const StartJob& go = moved ? applied : s;
    if (auto e = moved ? state.start_error(go) : state.usage_error(go)) {
      refuse_start(state, go, std::move(*e), hooks, r);
      continue;
    }
    const Time running_at = hooks.running_at(go, now);
    const Time queued_since = state.runtime(go.job).queued_since;
    state.start_checked(go, now, running_at);
    hooks.started(go, queued_since, running_at);
    ++r.started;
  }
}

}  // namespace

const char* to_string(DecisionKind k) {
  switch (k) {
    case DecisionKind::Reject:
      return "reject";
    case DecisionKind::Preempt:
      return "preempt";
    case DecisionKind::Start:
      return "start";
  }
  return "?";
}

ApplyReport apply(ClusterState& state, const Decisions& d, Time now, ApplyHooks& hooks) {
  ApplyReport r;
  apply_rejects(state, d, now, hooks, r);
  apply_preempts(state, d, now, hooks, r);
  apply_starts(state, d, now, hooks, r);
  state.note_waits(d.waiting, now);
  return r;
}

ApplyReport apply(ClusterState& state, const Decisions& d, Time now) {
  ApplyHooks none;
  return apply(state, d, now, none);
}

}  // namespace ds
