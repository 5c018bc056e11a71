// The actuator: the Slurm side of the one apply() (model/apply.hpp: rejections, preemptions,
// starts, waiting reasons, each checked by the ClusterState first), idempotently.
//  - preempt: only a job Slurm shows RUNNING (a job its user cancelled, or one ending, is
//             never requeued: its cancel stands); the record gets p=<restart count> (the
//             coming hold is DeepShare's), then requeue-hold. A preemption Slurm refuses is a
//             failed decision: counted, logged, the job runs on in the model and a start of
//             this cycle that needs its GPUs is deferred.
//  - start:   the placement is written as Slurm can hold it (gres.hpp: a job's GRES request
//             is fixed once written, so a restart reuses its GPU indices, moving to another
//             node if needed); a decision Slurm cannot express is not applied and the job
//             goes back to the policy (counted as a deferral). The release - pin in the
//             AdminComment, node list, GRES (first start only), BeginTime=now, priority in
//             decision order - waits until Slurm shows the GPUs free (a victim has left them,
//             an ending job is gone), and is re-issued until Slurm runs the job.
//  - reject:  the reason goes into the AdminComment (x=...), then the job is cancelled.
// A job still completing after a requeue is released only once it is pending again, and
// onto a node it was requeued from only 1.2 s after it was seen pending again (slurmd's
// credential revocation: Controller::Rec).
#include <algorithm>
#include <bit>
#include <climits>

#include "slurm/controller.hpp"

namespace ds::slurm {
namespace {

constexpr std::uint32_t kInfinite = 0xffffffff;  // Slurm's INFINITE: release a hold

bool ended(const JobInfo& j) {
  return j.terminal() || (j.completing && j.state != JobState::Pending);
}

}  // namespace

// What one apply() call needs besides the ClusterState: the jobs started and the victims
// whose preemption failed in this cycle (a start on their GPUs is deferred, not a policy
// bug), and, between express() and started() of one start, how Slurm holds it.
class Controller::SlurmHooks final : public ApplyHooks {
 public:
  explicit SlurmHooks(Controller& c) : c_(c) {}
  void reject(const RejectJob& r) override { c_.reject(r); }
  Preempted preempt(JobId id) override {
    const Preempted p = c_.preempt(id);
    if (p == Preempted::NotApplied) failed_victims.push_back(id);
    return p;
  }
  void preempted(JobId id, const Placement&) override { c_.preempted(id); }
  std::optional<Placement> place(const StartJob& s) override { return c_.express(s, *this); }
  void started(const StartJob& s, Time queued_since, Time) override {
    started_jobs.push_back(s.job);
    c_.started(s, queued_since, *this);
  }
  void refused(DecisionKind kind, const Refused& r) override {
    c_.invalid_decision(to_string(kind), r.job, r.what);
  }

  std::vector<JobId> started_jobs, failed_victims;
  Expressed expressed;      // of the start being applied
  std::string partner_ref;  // the running job a colocated start joins
  bool moved = false;       // Slurm holds it elsewhere than the policy placed it

 private:
  Controller& c_;
};

void Controller::apply(const Decisions& d) {
  SlurmHooks hooks(*this);
  const ApplyReport r = ds::apply(*state_, d, now(), hooks);
  counters_.deferrals += r.deferred;  // the policy thinks they started: told they wait again
}

std::string Controller::record_text(const Rec& rec, const View* v, bool with_pin) const {
  RecordFields f = parse_fields(v ? v->j->admin_comment : std::string());
  if (with_pin)
    write_pin(f, rec.pin);
  else
    clear_pin(f);
  return format_fields(f);
}

std::optional<Placement> Controller::express(const StartJob& s, SlurmHooks& scratch) {
  const JobId id = s.job;
  const Rec& rec = recs_[id.index()];
  std::map<std::string, std::uint64_t> placement;
  bool shared_node = false;
  for (const auto& a : s.placement) {
    placement[cluster_.nodes[a.node.index()].name] = a.gpu_mask;
    shared_node = shared_node || state_->no_sharing(a.node);
  }
  auto node_of = [&](const std::string& node) {
    return NodeId(static_cast<std::uint32_t>(node_index_.at(node)));
  };
  // A restart that must keep its GPU indices moves only to GPUs idle in the model and in
  // Slurm (a victim preempted in this cycle is free in the model but holds its GPUs in
  // Slurm until its processes are gone).
  Occupancy occ;
  occ.idle = [&](const std::string& node, std::uint64_t mask) {
    auto it = slurm_use_.find(node);
    const std::uint64_t held = it == slurm_use_.end() ? 0 : it->second.gpus | it->second.slots;
    return state_->gpus_idle(node_of(node), mask) && (held & mask) == 0;
  };
  occ.may_share = [&](const std::string& node) {
    const NodeId n = node_of(node);
    return state_->node_usable(n) && !state_->no_sharing(n);
  };
  std::vector<std::string> candidates;
  for (const Node& n : cluster_.nodes)
    if (state_->node_usable(n.id)) candidates.push_back(n.name);
  // The partner of a colocated start: the running job that holds those GPUs, and the kind
  // of GRES it holds there (the colocated job takes the other kind).
  GresKind partner = GresKind::Whole;
  scratch.partner_ref.clear();
  if (s.shared) {
    JobId host;  // the lowest id among them
    state_->for_each_gpu(s.placement, [&](std::size_t g, NodeId) {
      for (JobId o : state_->jobs_on_gpu(g))
        if (o != id && !rt(o).shared && (!host.valid() || o < host)) host = o;
    });
    if (host.valid()) {
      const Rec& p = recs_[host.index()];
      const GresKind held = p.fixed.kind != GresKind::None ? p.fixed.kind : p.start_kind;
      partner = held == GresKind::Slot ? GresKind::Slot : GresKind::Whole;
      scratch.partner_ref = p.ref;
    }
  }
  std::optional<Expressed> e;
  if (!(s.shared && shared_node))
    e = express_start(placement, s.shared, rec.fixed, candidates, occ, partner);
  // GPUs this cycle's starts took (unless colocated) or a failed preemption's victim holds.
  auto holds = [&](const std::vector<JobId>& jobs, std::size_t g) {
    for (JobId o : state_->jobs_on_gpu(g))
      if (std::find(jobs.begin(), jobs.end(), o) != jobs.end()) return true;
    return false;
  };
  bool conflict = false;
  if (e)
    for (const auto& [node, mask] : e->gpus) {
      const Node& n = cluster_.nodes[node_index_.at(node)];
      for (std::uint64_t m = mask; m; m &= m - 1) {
        const auto g = static_cast<std::size_t>(n.first_gpu + std::countr_zero(m));
        conflict = conflict || holds(scratch.failed_victims, g) ||
                   (!s.shared && holds(scratch.started_jobs, g));
      }
    }
  if (!e || conflict) {
    log_.warn("start_deferred", who(id),
              {{"job", rec.ref},
               {"reason", !e ? "Slurm cannot hold this placement (its GRES request "
                               "is fixed, or its nodes differ)"
                             : "its GPUs are not free this cycle"}});
    journal("defer " + rec.ref);
    return std::nullopt;
  }
  Placement real;
  for (const auto& [node, mask] : e->gpus) real.push_back({node_of(node), mask});
  std::sort(real.begin(), real.end(),
            [](const NodeAlloc& a, const NodeAlloc& b) { return a.node < b.node; });
  scratch.moved = real != s.placement;
  scratch.expressed = std::move(*e);
  return real;
}

// The start is applied in the state: record it (the pin), then release it into Slurm.
void Controller::started(const StartJob& s, Time queued_since, const SlurmHooks& scratch) {
  const JobId id = s.job;
  Rec& rec = recs_[id.index()];
  const Expressed& e = scratch.expressed;
  Pin pin;
  pin.restart = rec.intent == Intent::Preempt ? rec.restarts + 1 : rec.restarts;
  pin.borrowed = s.borrowed;
  pin.shared = s.shared;
  pin.mps_percent = std::clamp(s.mps_thread_percent, 1, 100);
  pin.mem_limit_mib = s.shared ? std::max<std::int64_t>(0, s.mps_memory_limit_mib) : 0;
  pin.decided_ms = now();
  pin.gpus = e.gpus;
  rec.pin = pin;
  rec.intent = Intent::Start;
  rec.start_kind = e.kind;
  rec.write_request = e.write_request;
  rec.released = false;
  rec.intent_wall = wall_;
  rec.last_retry_wall = 0;
  ++counters_.starts;
  ++decision_seq_;
  std::string where;
  for (const auto& [n, m] : pin.gpus)
    where += (where.empty() ? "" : "/") + n + "@" + mask_to_list(m);
  log_.info("start", who(id),
            {{"job", rec.ref},
             {"gpus", where},
             {"gpu_count", state_->spec(id).gpus},
             {"borrowed", s.borrowed},
             {"shared", s.shared},
             {"partner", scratch.partner_ref},
             {"kind", e.kind == GresKind::Slot ? "slots" : "gpus"},
             {"moved", scratch.moved},
             {"queued_s", static_cast<double>(now() - queued_since) / 1000.0}});
  journal("start " + rec.ref + " " + where + (s.borrowed ? " borrowed" : "") +
          (s.shared ? " shared" : ""));
  try_start(id);
}

// Whether Slurm shows the start's GPUs ready: no other job holds them (a preempted job
// holds its GPUs until its processes are gone); for a colocated start, the GRES it takes is
// free and the partner runs on them (the partner's own start may still wait for a victim).
bool Controller::gpus_free_in_slurm(const Rec& rec) const {
  for (const auto& [node, mask] : rec.pin.gpus) {
    auto it = slurm_use_.find(node);
    const NodeUse use = it == slurm_use_.end() ? NodeUse{} : it->second;
    if (rec.pin.shared) {
      const bool slot = rec.start_kind == GresKind::Slot;
      const std::uint64_t mine = slot ? use.slots : use.gpus, partner = slot ? use.gpus : use.slots;
      if ((mine & mask) || (partner & mask) != mask) return false;
    } else if ((use.gpus | use.slots) & mask) {
      return false;
    }
  }
  return true;
}

bool Controller::try_start(JobId id) {
  Rec& rec = recs_[id.index()];
  rec.last_retry_wall = wall_;
  auto v = views_.find(rec.key);
  if (v == views_.end()) return false;
  const JobInfo& j = *v->second.j;
  // Not yet pending again (still completing after our requeue): retried next cycle.
  if (j.state != JobState::Pending || j.completing) return false;
  if (must_wait_for_revocation(rec)) {
    if (!rec.start_deferred) journal("defer_start " + rec.ref);
    rec.start_deferred = true;
    return false;  // retried next cycle
  }
  if (!gpus_free_in_slurm(rec)) return false;  // a victim or an ending job still holds them
  rec.requeued_from.clear();
  rec.start_deferred = false;
  rec.pin.restart = j.restarts;
  Update u;
  u.job = rec.ref;
  u.admin_comment = record_text(rec, &v->second, true);
  std::string nodes;
  for (const auto& [n, m] : rec.pin.gpus) nodes += (nodes.empty() ? "" : ",") + n;
  u.req_nodes = nodes;
  if (rec.write_request && parse_gres_request(j.tres_per_node).kind == GresKind::None)
    u.tres_per_node = format_gres_request(rec.start_kind, rec.pin.gpus.begin()->second);
  u.begin_s = wall_ / 1000;
  // Slurm orders released jobs by priority: keep DeepShare's decision order. A job held
  // by DeepShare's requeue is released first (Slurm ignores a priority on a held job).
  const auto order =
      static_cast<std::uint32_t>(std::max<std::int64_t>(1, 2000000000 - decision_seq_));
  u.priority = j.held ? kInfinite : order;
  if (!act_update(u)) {
    ++counters_.failed;
    log_.warn("start_failed", {{"job", rec.ref}, {"error", act_error()}});
    return false;
  }
  if (j.held) {
    Update prio;
    prio.job = rec.ref;
    prio.priority = order;
    act_update(prio);
  }
  rec.released = true;
  rec.release_wall = wall_;
  if (u.tres_per_node) rec.fixed = {rec.start_kind, rec.pin.gpus.begin()->second, 0};
  rec.write_request = false;
  ++counters_.applied;
  journal("release " + rec.ref);
  return true;
}

// A released start taken back: parked again (BeginTime in 2100), its record re-written.
void Controller::park_again(const Rec& rec) {
  auto v = views_.find(rec.key);
  Update u;
  u.job = rec.ref;
  u.admin_comment = record_text(rec, v == views_.end() ? nullptr : &v->second, false);
  u.begin_s = kParkedBegin;
  if (!act_update(u)) log_.warn("park_failed", {{"job", rec.ref}, {"error", act_error()}});
}

void Controller::rollback_start(JobId id, const char* why) {
  Rec& rec = recs_[id.index()];
  ++counters_.rollbacks;
  std::string held;
  for (const auto& [node, mask] : rec.pin.gpus) {
    auto it = slurm_use_.find(node);
    const NodeUse u = it == slurm_use_.end() ? NodeUse{} : it->second;
    held += (held.empty() ? "" : " ") + node + ": gpus " + mask_to_list(u.gpus) + ", slots " +
            mask_to_list(u.slots);
  }
  log_.warn(why, who(id),
            {{"job", rec.ref},
             {"kind", rec.start_kind == GresKind::Slot ? "slots" : "gpus"},
             {"slurm_holds", held},
             {"detail", "start rolled back: the job waits again"}});
  journal(std::string("forget_start ") + rec.ref + " " + why);
  if (rec.released) park_again(rec);
  rec.intent = Intent::None;
  rec.released = false;
  state_->unstart(id, now());
}

void Controller::note_requeue(Rec& rec) {
  rec.requeued_from.clear();
  for (const auto& [node, mask] : rec.pin.gpus) rec.requeued_from.push_back(node);
  rec.pending_again_wall = 0;
}

bool Controller::must_wait_for_revocation(const Rec& rec) const {
  // Seen pending again => slurmd has revoked the old credential. A credential created a
  // full second later is from a later second whatever the sub-second phase; the 200 ms
  // margin covers clock offsets between the controller's and the node's machine.
  constexpr std::int64_t kRevocationWaitMs = 1200;
  if (rec.requeued_from.empty()) return false;
  bool same_node = false;
  for (const auto& [node, mask] : rec.pin.gpus)
    same_node = same_node || std::find(rec.requeued_from.begin(), rec.requeued_from.end(), node) !=
                                 rec.requeued_from.end();
  return same_node &&
         (rec.pending_again_wall == 0 || wall_ - rec.pending_again_wall < kRevocationWaitMs);
}

// A preemption the state accepts (the job runs and may be requeued): what Slurm does.
ApplyHooks::Preempted Controller::preempt(JobId id) {
  Rec& rec = recs_[id.index()];
  auto v = views_.find(rec.key);
  const JobInfo* j = v == views_.end() ? nullptr : v->second.j;
  if (rec.intent == Intent::Start && (!j || !j->running()) && !(j && ended(*j))) {
    // Decided but not running yet: take the start back (park it again). Should Slurm start
    // it meanwhile, the next observation adopts it as running.
    if (rec.released) park_again(rec);
    rec.intent = Intent::None;
    return ApplyHooks::Preempted::Requeued;
  }
  if (!j || !j->running()) {
    // Ending (cancelled by its user, completing) or gone: never requeued, its end stands.
    // Its GPUs stay busy in Slurm until it is gone; starts wait for that. The policy sees
    // its preemption confirmed and the job withdrawn.
    log_.info("victim_ending", who(id), {{"job", rec.ref}});
    journal("victim_ending " + rec.ref);
    rec.intent = Intent::None;
    return ApplyHooks::Preempted::Ended;
  }
  RecordFields f = parse_fields(j->admin_comment);
  f["p"] = std::to_string(j->restarts);
  Update mark;
  mark.job = rec.ref;
  mark.admin_comment = format_fields(f);
  if (!act_update(mark) || !act_requeue(rec.ref)) {
    ++counters_.failed;
    ++counters_.preemptions_failed;
    log_.error("preempt_failed", who(id), {{"job", rec.ref}, {"detail", act_error()}});
    journal("preempt_failed " + rec.ref);
    return ApplyHooks::Preempted::NotApplied;
  }
  note_requeue(rec);
  rec.intent = Intent::Preempt;
  return ApplyHooks::Preempted::Requeued;
}

// The state requeued the victim.
void Controller::preempted(JobId id) {
  Rec& rec = recs_[id.index()];
  rec.intent_wall = rec.last_retry_wall = wall_;
  rec.released = false;
  // Its GRES request is fixed now: it cannot be colocated (gres.hpp).
  if (rec.fixed.kind != GresKind::None) state_->set_colocatable(id, false);
  ++counters_.preemptions;
  ++counters_.applied;
  const JobSpec& j = state_->spec(id);
  const std::size_t t = j.tenant.index();
  if (counters_.tenant_preemptions.size() <= t) counters_.tenant_preemptions.resize(t + 1, 0);
  ++counters_.tenant_preemptions[t];
  log_.info("preempt", who(id),
            {{"job", rec.ref}, {"gpu_count", j.gpus}, {"restarts", rt(id).preemptions}});
  journal("preempt " + rec.ref);
}

// A rejection the state accepts: the reason into the record, then the job is cancelled.
void Controller::reject(const RejectJob& rj) {
  Rec& rec = recs_[rj.job.index()];
  log_.warn("reject", who(rj.job), {{"job", rec.ref}, {"reason", rj.reason}});
  journal("reject " + rec.ref + " " + rj.reason);
  auto v = views_.find(rec.key);
  RecordFields f = parse_fields(v == views_.end() ? std::string() : v->second.j->admin_comment);
  std::string text = rj.reason;
  std::replace(text.begin(), text.end(), ';', ',');
  f["x"] = text;
  Update u;
  u.job = rec.ref;
  u.admin_comment = format_fields(f);
  if (!act_update(u) || !act_cancel(rec.ref))
    ++counters_.failed;
  else
    ++counters_.applied;
  ++counters_.refused;
}

}  // namespace ds::slurm
