// The Slurm adapter's actions (adapter.hpp), each idempotent and behind the leader fence:
//  - preempt: the record gets p=<restart count> (the coming hold is DeepShare's), then
//             requeue-hold of the RUNNING job (the core never asks for a job that is ending:
//             its end stands). A refusal is a failed decision: the job runs on in the model.
//  - start:   the placement is expressed as Slurm can hold it (gres.hpp: a job's GRES request
//             is fixed once written, so a restart reuses its GPU indices, moving to another
//             node if needed); a decision Slurm cannot express is deferred (the core tells the
//             policy the job waits again). The release - pin in the AdminComment, node list,
//             GRES (first start only), BeginTime=now, priority in decision order - waits until
//             Slurm shows the GPUs free (a victim has left them, an ending job is gone) and
//             slurmd's credential revocation has passed, and is re-issued until Slurm runs it.
//  - reject:  the reason goes into the AdminComment (x=...), then the job is cancelled.
#include <algorithm>
#include <bit>

#include "slurm/adapter.hpp"

namespace ds::slurm {
namespace {

constexpr std::uint32_t kInfinite = 0xffffffff;  // Slurm's INFINITE: release a hold

}  // namespace

// --- the fenced Actuator ----------------------------------------------------------------

bool SlurmAdapter::act_update(Update u) {
  if (!fence_.may_send()) return false;
  if (fence_.lease() && u.admin_comment) {
    RecordFields f = parse_fields(*u.admin_comment);
    if (!f.empty()) {
      f["e"] = std::to_string(fence_.epoch());
      u.admin_comment = format_fields(f);
    }
  }
  return act_.update(u);
}

bool SlurmAdapter::act_requeue(const std::string& ref) {
  return fence_.may_send() && act_.requeue_hold(ref);
}

bool SlurmAdapter::act_cancel(const std::string& ref) {
  return fence_.may_send() && act_.cancel(ref);
}

const std::string& SlurmAdapter::act_error() const {
  return fence_.error().empty() ? act_.last_error() : fence_.error();
}

std::string SlurmAdapter::record_text(const SlurmJob& sj, const View* v, bool with_pin) const {
  RecordFields f = parse_fields(v ? v->j->admin_comment : std::string());
  if (with_pin)
    write_pin(f, sj.pin);
  else
    clear_pin(f);
  return format_fields(f);
}

// --- starts -----------------------------------------------------------------------------

// How Slurm can hold a start the state accepts, and the partner of a colocated one.
std::optional<Expressed> SlurmAdapter::express(const StartJob& s, SlurmJob& sj) {
  std::map<std::string, std::uint64_t> placement;
  bool shared_node = false;
  for (const auto& a : s.placement) {
    placement[cluster_.nodes[a.node.index()].name] = a.gpu_mask;
    shared_node = shared_node || state().no_sharing(a.node);
  }
  auto node_of = [&](const std::string& node) {
    return NodeId(static_cast<std::uint32_t>(node_index_.at(node)));
  };
  // A restart that must keep its GPU indices moves only to GPUs idle in the model and in
  // Slurm (a victim preempted in this cycle is free in the model but holds its GPUs in Slurm
  // until its processes are gone).
  Occupancy occ;
  occ.idle = [&](const std::string& node, std::uint64_t mask) {
    auto it = slurm_use_.find(node);
    const std::uint64_t held = it == slurm_use_.end() ? 0 : it->second.gpus | it->second.slots;
    return state().gpus_idle(node_of(node), mask) && (held & mask) == 0;
  };
  occ.may_share = [&](const std::string& node) {
    const NodeId n = node_of(node);
    return state().node_usable(n) && !state().no_sharing(n);
  };
  std::vector<std::string> candidates;
  for (const Node& n : cluster_.nodes)
    if (state().node_usable(n.id)) candidates.push_back(n.name);
  // The partner of a colocated start: the running job that holds those GPUs, and the kind of
  // GRES it holds there (the colocated job takes the other kind).
  GresKind partner = GresKind::Whole;
  sj.partner_ref.clear();
  if (s.shared) {
    JobId host;  // the lowest id among them
    state().for_each_gpu(s.placement, [&](std::size_t g, NodeId) {
      for (JobId o : state().jobs_on_gpu(g))
        if (o != s.job && !state().runtime(o).shared && (!host.valid() || o < host)) host = o;
    });
    if (host.valid()) {
      const SlurmJob& p = jobs_[host.index()];
      const GresKind held = p.fixed.kind != GresKind::None ? p.fixed.kind : p.start_kind;
      partner = held == GresKind::Slot ? GresKind::Slot : GresKind::Whole;
      sj.partner_ref = p.ref;
    }
  }
  if (s.shared && shared_node) return std::nullopt;
  return express_start(placement, s.shared, sj.fixed, candidates, occ, partner);
}

std::optional<Placement> SlurmAdapter::place(const StartJob& s) {
  SlurmJob& sj = jobs_[s.job.index()];
  std::optional<Expressed> e = express(s, sj);
  if (!e) {
    log_.warn("start_deferred", who(s.job),
              {{"job", sj.ref},
               {"reason",
                "Slurm cannot hold this placement (its GRES request is fixed, or its nodes "
                "differ)"}});
    journal_.line("defer " + sj.ref);
    return std::nullopt;
  }
  Placement real = placement_of(e->gpus);
  std::sort(real.begin(), real.end(),
            [](const NodeAlloc& a, const NodeAlloc& b) { return a.node < b.node; });
  // What the jobs already on its nodes hold there (headroom.hpp), and nodes where Slurm did
  // not start the job's last starts: moved to another node; deferred when the first has no
  // other node (a learned refusal alone keeps its node then).
  const std::string why = held_refusal_of(s.job, real);
  const auto refused = [&](const Node& n) {
    return std::find(sj.refused_nodes.begin(), sj.refused_nodes.end(), n.name) !=
           sj.refused_nodes.end();
  };
  const bool learned = real.size() == 1 && refused(cluster_.nodes[real.front().node.index()]);
  if (!why.empty() || learned) {
    std::optional<Placement> other;
    std::optional<Expressed> moved_e;
    if (!s.shared && real.size() == 1 && sj.fixed.kind != GresKind::Slot) {
      const NodeId from = real.front().node;
      other = another_node(
          state(), s.job, state().spec(s.job).gpus,
          sj.fixed.kind == GresKind::Whole ? sj.fixed.mask : std::uint64_t{0},
          [&](const Node& n) { return n.id == from || refused(n); }, share(s.job), limits_,
          consumable_, [this](const Node& n) { return held_at(n); });
      if (other) {
        StartJob moved = s;
        moved.placement = *other;
        moved_e = express(moved, sj);
      }
    }
    if (other && moved_e) {
      const std::string& from = cluster_.nodes[real.front().node.index()].name;
      log_.info("start_moved", who(s.job),
                {{"job", sj.ref},
                 {"from", from},
                 {"to", cluster_.nodes[other->front().node.index()].name},
                 {"reason", !why.empty() ? why : "Slurm did not start its last start on " + from}});
      e = std::move(moved_e);
      real = placement_of(e->gpus);
    } else if (!why.empty()) {
      if (!sj.held_deferred) {  // logged once per wait
        log_.warn("start_deferred", who(s.job), {{"job", sj.ref}, {"reason", why}});
        journal_.line("defer " + sj.ref);
      }
      sj.held_deferred = true;
      return std::nullopt;
    }
  }
  sj.held_deferred = false;
  sj.proposal = std::move(*e);
  return real;
}

// What a job asks per node (its --mem and CPUs), as Slurm counts it on the nodes it runs on.
NodeShare SlurmAdapter::share(JobId id) const {
  const View* v = id.index() < jobs_.size() ? view(jobs_[id.index()].ref) : nullptr;
  return v ? share_of(*v->j) : NodeShare{};
}

NodeShare SlurmAdapter::held_at(const Node& n) const {
  const NodeShare outside = n.id.index() < outside_.size() ? outside_[n.id.index()] : NodeShare{};
  return held_on(state(), n, [this](JobId o) { return share(o); }) + outside;
}

// Why the jobs already on a node of `placement` leave too little of its CPUs or memory for
// job `id` ("" when every node has room).
std::string SlurmAdapter::held_refusal_of(JobId id, const Placement& placement) const {
  if (!consumable_.memory && !consumable_.cpus) return "";
  const NodeShare need = share(id);
  for (const NodeAlloc& a : placement) {
    const Node& n = cluster_.nodes[a.node.index()];
    static const NodeLimits kUnknown;
    const NodeLimits& l = a.node.index() < limits_.size() ? limits_[a.node.index()] : kUnknown;
    const std::string why = held_refusal(need, l, held_at(n), consumable_);
    if (!why.empty()) return n.name + ": " + why;
  }
  return "";
}

// The start is applied in the model: the pin, written at the release.
void SlurmAdapter::decided(const StartJob& s, Time queued_since, bool moved) {
  const JobId id = s.job;
  SlurmJob& sj = jobs_[id.index()];
  const Expressed& e = sj.proposal;
  const bool preempting = core_->book()[id].intent == driver::Intent::Preempt;
  Pin pin;
  pin.restart = preempting ? sj.restarts + 1 : sj.restarts;
  pin.borrowed = s.borrowed;
  pin.shared = s.shared;
  pin.mps_percent = std::clamp(s.mps_thread_percent, 1, 100);
  pin.mem_limit_mib = s.shared ? std::max<std::int64_t>(0, s.mps_memory_limit_mib) : 0;
  pin.decided_ms = now_;
  pin.gpus = e.gpus;
  sj.pin = pin;
  sj.start_kind = e.kind;
  sj.write_request = e.write_request;
  ++decision_seq_;
  std::string where;
  for (const auto& [n, m] : pin.gpus)
    where += (where.empty() ? "" : "/") + n + "@" + mask_to_list(m);
  log_.info("start", who(id),
            {{"job", sj.ref},
             {"gpus", where},
             {"gpu_count", state().spec(id).gpus},
             {"borrowed", s.borrowed},
             {"shared", s.shared},
             {"partner", sj.partner_ref},
             {"kind", e.kind == GresKind::Slot ? "slots" : "gpus"},
             {"moved", moved},
             {"queued_s", static_cast<double>(now_ - queued_since) / 1000.0}});
  journal_.line("start " + sj.ref + " " + where + (s.borrowed ? " borrowed" : "") +
                (s.shared ? " shared" : ""));
}

// Whether Slurm shows the start's GPUs ready: no other job holds them (a preempted job holds
// its GPUs until its processes are gone); for a colocated start, the GRES it takes is free and
// the partner runs on them (the partner's own start may still wait for a victim).
bool SlurmAdapter::gpus_free_in_slurm(const SlurmJob& sj) const {
  for (const auto& [node, mask] : sj.pin.gpus) {
    auto it = slurm_use_.find(node);
    const NodeUse use = it == slurm_use_.end() ? NodeUse{} : it->second;
    if (sj.pin.shared) {
      const bool slot = sj.start_kind == GresKind::Slot;
      const std::uint64_t mine = slot ? use.slots : use.gpus, partner = slot ? use.gpus : use.slots;
      if ((mine & mask) || (partner & mask) != mask) return false;
    } else if ((use.gpus | use.slots) & mask) {
      return false;
    }
  }
  return true;
}

bool SlurmAdapter::must_wait_for_revocation(const SlurmJob& sj) const {
  // Seen pending again => slurmd has revoked the old credential. A credential created a full
  // second later is from a later second whatever the sub-second phase; the 200 ms margin
  // covers clock offsets between the controller's and the node's machine.
  constexpr std::int64_t kRevocationWaitMs = 1200;
  if (sj.requeued_from.empty()) return false;
  bool same_node = false;
  for (const auto& [node, mask] : sj.pin.gpus)
    same_node = same_node || std::find(sj.requeued_from.begin(), sj.requeued_from.end(), node) !=
                                 sj.requeued_from.end();
  return same_node &&
         (sj.pending_again_wall == 0 || wall_ - sj.pending_again_wall < kRevocationWaitMs);
}

driver::Actuator::Handover SlurmAdapter::hand_over(JobId id) {
  SlurmJob& sj = jobs_[id.index()];
  const View* v = view(sj.ref);
  if (!v) return Handover::NotYet;
  const JobInfo& j = *v->j;
  // Not yet pending again (still completing after our requeue): retried next cycle.
  if (j.state != JobState::Pending || j.completing) return Handover::NotYet;
  // Its user held it after the decision: the start is rolled back, the hold stays theirs.
  if (j.held && !our_hold(j, v->record)) return Handover::Refused;
  if (must_wait_for_revocation(sj)) {
    if (!sj.start_deferred) journal_.line("defer_start " + sj.ref);
    sj.start_deferred = true;
    return Handover::NotYet;  // retried next cycle
  }
  if (!gpus_free_in_slurm(sj)) return Handover::NotYet;  // a victim or an ending job holds them
  sj.requeued_from.clear();
  sj.start_deferred = false;
  sj.pin.restart = j.restarts;
  Update u;
  u.job = sj.ref;
  u.admin_comment = record_text(sj, v, true);
  std::string nodes;
  for (const auto& [n, m] : sj.pin.gpus) nodes += (nodes.empty() ? "" : ",") + n;
  u.req_nodes = nodes;
  if (sj.write_request && parse_gres_request(j.tres_per_node).kind == GresKind::None)
    u.tres_per_node = format_gres_request(sj.start_kind, sj.pin.gpus.begin()->second);
  u.begin_s = wall_ / 1000;
  // Slurm orders released jobs by priority: keep DeepShare's decision order. A job held by
  // DeepShare's requeue is released first (Slurm ignores a priority on a held job).
  const auto order =
      static_cast<std::uint32_t>(std::max<std::int64_t>(1, 2000000000 - decision_seq_));
  u.priority = j.held ? kInfinite : order;
  if (!act_update(u)) {
    log_.warn("start_failed", {{"job", sj.ref}, {"error", act_error()}});
    return Handover::Failed;
  }
  if (j.held) {
    Update prio;
    prio.job = sj.ref;
    prio.priority = order;
    act_update(prio);
  }
  if (u.tres_per_node) sj.fixed = {sj.start_kind, sj.pin.gpus.begin()->second, 0};
  sj.write_request = false;
  return Handover::Sent;
}

// A released start taken back: parked again (BeginTime in 2100), its record re-written.
void SlurmAdapter::park_again(const SlurmJob& sj) {
  Update u;
  u.job = sj.ref;
  u.admin_comment = record_text(sj, view(sj.ref), false);
  u.begin_s = kParkedBegin;
  if (!act_update(u)) log_.warn("park_failed", {{"job", sj.ref}, {"error", act_error()}});
}

void SlurmAdapter::take_back(JobId id) {
  SlurmJob& sj = jobs_[id.index()];
  // Handed over (released: its GPUs were free in Slurm) and not started: Slurm refuses its
  // nodes for a reason DeepShare does not read. A user's hold is no refusal.
  if (const View* v = view(sj.ref);
      v && v->j->state == JobState::Pending && !v->j->held && !parked(*v->j))
    for (const auto& [node, mask] : sj.pin.gpus)
      if (std::find(sj.refused_nodes.begin(), sj.refused_nodes.end(), node) ==
          sj.refused_nodes.end())
        sj.refused_nodes.push_back(node);
  park_again(sj);
}

driver::Log::Fields SlurmAdapter::start_details(JobId id) const {
  const SlurmJob& sj = jobs_[id.index()];
  std::string held;
  for (const auto& [node, mask] : sj.pin.gpus) {
    auto it = slurm_use_.find(node);
    const NodeUse u = it == slurm_use_.end() ? NodeUse{} : it->second;
    held += (held.empty() ? "" : " ") + node + ": gpus " + mask_to_list(u.gpus) + ", slots " +
            mask_to_list(u.slots);
  }
  // Slurm's word for why it has not started the job (Resources, BadConstraints, ...).
  const View* v = view(sj.ref);
  return {{"kind", sj.start_kind == GresKind::Slot ? "slots" : "gpus"},
          {"slurm_holds", held},
          {"slurm_reason", v ? v->j->reason : std::string("?")}};
}

// --- preemptions and rejections -----------------------------------------------------------

void SlurmAdapter::note_requeue(SlurmJob& sj) {
  sj.requeued_from.clear();
  for (const auto& [node, mask] : sj.pin.gpus) sj.requeued_from.push_back(node);
  sj.pending_again_wall = 0;
}

driver::Actuator::Preemption SlurmAdapter::preempt(JobId id, const driver::EngineJob& e) {
  SlurmJob& sj = jobs_[id.index()];
  const JobInfo& j = *view(e.key)->j;
  RecordFields f = parse_fields(j.admin_comment);
  f["p"] = std::to_string(j.restarts);
  Update mark;
  mark.job = sj.ref;
  mark.admin_comment = format_fields(f);
  if (!act_update(mark) || !act_requeue(sj.ref)) {
    // Its own end raced the preemption (Slurm: "Job has already finished"): no error.
    if (fence_.error().empty() && act_.last_failure_done()) return Preemption::Ended;
    log_.error("preempt_failed", who(id), {{"job", sj.ref}, {"detail", act_error()}});
    journal_.line("preempt_failed " + sj.ref);
    return Preemption::Refused;
  }
  note_requeue(sj);
  return Preemption::Sent;
}

void SlurmAdapter::repeat_preempt(JobId id) {
  const SlurmJob& sj = jobs_[id.index()];
  if (!act_requeue(sj.ref))
    log_.warn("requeue_retry_failed", {{"job", sj.ref}, {"error", act_error()}});
}

void SlurmAdapter::preempted(JobId id) {
  // Its GRES request is fixed now: it cannot be colocated (gres.hpp).
  if (jobs_[id.index()].fixed.kind != GresKind::None) state().set_colocatable(id, false);
}

bool SlurmAdapter::reject(JobId id, const std::string& reason) {
  const SlurmJob& sj = jobs_[id.index()];
  const View* v = view(sj.ref);
  RecordFields f = parse_fields(v ? v->j->admin_comment : std::string());
  std::string text = reason;
  std::replace(text.begin(), text.end(), ';', ',');
  f["x"] = text;
  Update u;
  u.job = sj.ref;
  u.admin_comment = format_fields(f);
  return act_update(u) && act_cancel(sj.ref);
}

}  // namespace ds::slurm
