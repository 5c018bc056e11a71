// The reconciler: folds one observation of Slurm into the controller's model.
//
// Statuses of a job in the model: Future (known, not a candidate), Pending (a candidate
// the policy may place), Running, Done. Rules (model status + intent, Slurm's state):
//   unknown          + pending              -> Future, then a candidate when eligible
//   unknown          + running              -> adopted (restart: flags from the pin)
//   unknown          + pending, pin of this run, released -> a start in flight (adopted)
//   Future/Pending   + pending              -> candidate or not (controller.hpp); a job
//                                              that lost its parking is parked again
//   Running/Start    + RUNNING              -> confirm (placement from Slurm's allocation)
//   Running/Start    + PENDING              -> release once Slurm shows its GPUs free;
//                                              forget after KillWait + start_margin_s, or
//                                              at once when a node it needs is down
//   Running          + PENDING              -> requeued by someone else (node failure,
//                                              the user's `scontrol requeue`)
//   Running          + ending / gone        -> finished (an ending job is never a victim;
//                                              its GPUs count as busy until Slurm frees them)
//   Pending/Preempt  + PENDING              -> confirm
//   Pending/Preempt  + RUNNING              -> re-issue the requeue; after KillWait +
//                                              start_margin_s: a failed preemption
//   Pending/Future   + RUNNING              -> started by someone else (an operator): adopted
//   Pending/Future   + ended / gone         -> withdrawn
// Jobs of the partition that carry no gate record, a malformed record, or a pin in their
// user-writable Comment are reported once and counted; their GPUs count as busy.
#include <algorithm>
#include <bit>

#include "core/error.hpp"
#include "slurm/controller.hpp"

namespace ds::slurm {
namespace {

constexpr std::int64_t kRetryMs = 3000;  // wall ms between re-issued actions

const char* slurm_state_name(const JobInfo& j) {
  switch (j.state) {
    case JobState::Completed:
      return "completed";
    case JobState::Failed:
      return "failed";
    case JobState::Cancelled:
      return "cancelled";
    case JobState::Running:
    case JobState::Suspended:
      return j.completing ? "completing" : "running";
    case JobState::Pending:
      return "pending";
    case JobState::Other:
      break;
  }
  return "other";
}
constexpr std::int64_t kParkedSince = kParkedBegin - 86400;

bool in_partition(const JobInfo& j, const std::string& part) {
  const std::string& p = j.partition;
  std::size_t pos = 0;
  while (pos <= p.size()) {
    std::size_t e = p.find(',', pos);
    if (p.substr(pos, e == std::string::npos ? std::string::npos : e - pos) == part) return true;
    if (e == std::string::npos) break;
    pos = e + 1;
  }
  return false;
}

bool parked(const JobInfo& j) {
  return j.eligible_s >= kParkedSince;
}

// Held by DeepShare's own preemption (requeue-hold at restart count p), not by its user.
bool our_hold(const JobInfo& j, const Record& r) {
  return j.held && r.preempted_at && *r.preempted_at + 1 == j.restarts;
}

bool ended(const JobInfo& j) {
  return j.terminal() || (j.completing && j.state != JobState::Pending);
}

}  // namespace

Placement Controller::placement_of(const JobInfo& j) const {
  Placement p;
  for (const auto& [name, a] : j.alloc) {
    auto it = node_index_.find(name);
    if (it != node_index_.end() && (a.gpus | a.slots))
      p.push_back({NodeId(static_cast<std::uint32_t>(it->second)), a.gpus | a.slots});
  }
  std::sort(p.begin(), p.end(),
            [](const NodeAlloc& a, const NodeAlloc& b) { return a.node < b.node; });
  return p;
}

std::vector<Controller::View> Controller::views_of(const std::vector<JobInfo>& jobs) {
  RecordLimits limits;
  limits.max_gpus = cluster_.total_gpus();
  limits.max_mem_mib = static_cast<double>(cfg_.gpu_memory_mib);
  std::vector<View> out;
  for (const auto& j : jobs) {
    if (!in_partition(j, cfg_.partition)) continue;
    const Key key = key_of(j);
    if (has_pin_keys(j.comment) && untrusted_.insert(key).second) {
      ++counters_.untrusted_pins;
      log_.warn("untrusted_pin", {{"job", j.ref()},
                                  {"user", j.user},
                                  {"detail", "pin keys in the job's Comment are ignored"}});
      journal("untrusted_pin " + j.ref());
    }
    std::optional<Record> record;
    try {
      record = parse_record(j.admin_comment, limits);
    } catch (const InputError& e) {
      if (reported_.count(key)) continue;
      ++counters_.bad_records;
      log_.warn("bad_record", {{"job", j.ref()}, {"error", e.what()}});
      if (j.state == JobState::Pending && !j.completing) {
        View v;  // a waiting job DeepShare cannot read would wait forever: refuse it
        v.j = &j;
        v.key = key;
        v.ref = j.ref();
        refuse(v, std::string("DeepShare cannot read the job's record: ") + e.what());
      }
      reported_.insert(key);
      continue;
    }
    if (record && record->epoch && *record->epoch > (lease_ ? lease_->epoch() : 0))
      depose("job " + j.ref() + " carries a record of epoch " + std::to_string(*record->epoch) +
             ": another controller acts on this cluster");
    if (!record) {
      if (!j.terminal() && reported_.insert(key).second) {
        ++counters_.ungated;
        log_.warn("ungated_job", {{"job", j.ref()},
                                  {"detail",
                                   "no DeepShare record in its AdminComment (submitted without "
                                   "the gate?): left to Slurm, its GPUs count as busy"}});
      }
      continue;
    }
    if (!record->refused.empty()) continue;
    if (j.array_job != 0 && j.array_task == kNoTask && !j.array_tasks.empty()) {
      for (std::uint32_t t : expand_tasks(j.array_tasks)) {
        View v;
        v.j = &j;
        v.key = Key{j.array_job} << 32 | t;
        v.ref = std::to_string(j.array_job) + "_" + std::to_string(t);
        v.array_job = j.array_job;
        v.record = *record;
        out.push_back(std::move(v));
      }
      continue;
    }
    View v;
    v.j = &j;
    v.key = key;
    v.ref = j.ref();
    v.array_job = j.array_task != kNoTask ? j.array_job : 0;
    v.record = *record;
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(), [](const View& a, const View& b) { return a.key < b.key; });
  return out;
}

void Controller::observe(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes) {
  for (const auto& n : nodes) {
    auto it = node_index_.find(n.name);
    if (it == node_index_.end()) continue;
    if (node_usable_[it->second] != n.usable) {
      // A node coming back is routine (info); one going away needs an operator (warn).
      if (n.usable)
        log_.info("node_up", {{"node", n.name}, {"state", n.state}});
      else
        log_.warn("node_down", {{"node", n.name}, {"state", n.state}});
    }
    node_usable_[it->second] = n.usable;
    node_shared_[it->second] = n.partitions.size() > 1;
  }
  for (auto& r : recs_) r.seen = false;
  views_.clear();
  const std::vector<View> list = views_of(jobs);
  array_room_.clear();
  for (const auto& v : list)
    if (v.array_job && v.j->array_max_running > 0)
      array_room_[v.array_job] = static_cast<int>(v.j->array_max_running);
  for (std::size_t i = 0; i < recs_.size(); ++i) {
    auto it = array_room_.find(recs_[i].array_job);
    const JobStatus st = rt(JobId(static_cast<std::uint32_t>(i))).status;
    if (recs_[i].array_job && it != array_room_.end() &&
        (st == JobStatus::Running || st == JobStatus::Pending))
      --it->second;
  }
  bool refreshed = false;
  for (const View& v : list) {
    views_[v.key] = v;
    auto it = by_key_.find(v.key);
    if (it != by_key_.end()) {
      recs_[it->second.index()].seen = true;
      observe_known(it->second, v);
      continue;
    }
    if (ended(*v.j) || left_.count(v.key)) continue;
    if (!tenant_of(v.j->account).valid() && cfg_.tenant_source == TenantSource::Slurm &&
        !refreshed) {
      load_tenants(false);  // an account created since the last read
      refreshed = true;
    }
    const TenantId t = tenant_of(v.j->account);
    if (!t.valid()) {
      if (v.j->state == JobState::Pending)
        refuse(v, "account '" + v.j->account +
                      "' is not a DeepShare tenant (tenants are Slurm accounts with a GPU quota); "
                      "submit with -A YOUR_TEAM");
      continue;
    }
    const Request& req = v.record.request;
    const bool preemptible = !req.no_requeue && v.j->requeue && v.j->batch;
    if (!preemptible && v.j->state == JobState::Pending && v.j->restarts == 0 &&
        req.gpus > tenants_[t.index()].quota_gpus) {
      refuse(v,
             "a job that cannot be requeued (--no-requeue or interactive) runs only within its "
             "account's guaranteed GPUs: account '" +
                 v.j->account + "' has " + std::to_string(tenants_[t.index()].quota_gpus) +
                 ", the job asks for " + std::to_string(req.gpus) +
                 "; submit it requeueable (it may then run on borrowed GPUs)");
      continue;
    }
    observe_new(v);
  }
  for (auto it = left_.begin(); it != left_.end();)  // Slurm no longer lists them
    it = views_.count(*it) ? std::next(it) : left_.erase(it);
  for (std::size_t i = 0; i < recs_.size(); ++i) {
    const JobStatus s = rt(JobId(static_cast<std::uint32_t>(i))).status;
    if (!recs_[i].seen && !recs_[i].free &&
        (s == JobStatus::Pending || s == JobStatus::Running || s == JobStatus::Future))
      vanish(JobId(static_cast<std::uint32_t>(i)));
  }
}

void Controller::refuse(const View& v, const std::string& why) {
  if (!reported_.insert(v.key).second) return;
  ++counters_.refused;
  log_.warn("refuse",
            {{"job", v.ref}, {"reason", why}, {"user", v.j->user}, {"account", v.j->account}});
  journal("refuse " + v.ref + " " + why);
  RecordFields f = parse_fields(v.j->admin_comment);
  std::string text = why;
  std::replace(text.begin(), text.end(), ';', ',');
  f["x"] = text;
  Update u;
  u.job = v.ref;
  u.admin_comment = format_fields(f);
  if (!act_update(u) || !act_cancel(v.ref)) {
    ++counters_.failed;
    log_.warn("refuse_failed", {{"job", v.ref}, {"error", act_error()}});
  }
}

void Controller::park(const View& v) {
  Update u;
  u.job = v.ref;
  u.begin_s = kParkedBegin;
  if (act_update(u))
    journal("park " + v.ref);
  else
    log_.warn("park_failed", {{"job", v.ref}, {"error", act_error()}});
}

void Controller::observe_new(const View& v) {
  const JobInfo& j = *v.j;
  const GresRequest fixed = parse_gres_request(j.tres_per_node);
  if (fixed.kind == GresKind::Other) {
    if (reported_.insert(v.key).second) {
      ++counters_.bad_records;
      log_.warn("foreign_gres",
                {{"job", v.ref},
                 {"tres_per_node", j.tres_per_node},
                 {"detail", "a GRES request DeepShare did not write: left to Slurm"}});
    }
    return;
  }
  JobId id(static_cast<std::uint32_t>(jobs_.size()));
  const bool reuse = !free_ids_.empty() && jobs_.size() >= reuse_ids_after_;
  if (reuse) {
    id = free_ids_.back();  // a compacted slot
    free_ids_.pop_back();
  } else {
    jobs_.emplace_back();
    recs_.emplace_back();
  }
  const Request& req = v.record.request;
  JobSpec spec;
  spec.id = id;
  spec.name = !req.trace.empty() ? req.trace : v.ref;
  spec.tenant = tenant_of(j.account);
  auto [u, added] = user_ids_.try_emplace(j.user, static_cast<std::uint32_t>(users_.size()));
  if (added) users_.push_back(j.user);
  spec.user = UserId(u->second);
  spec.gpus = req.gpus;
  spec.gpu_util = req.util;
  spec.gpu_memory_mib = req.mem_mib;
  spec.preemptible = !req.no_requeue && j.requeue && j.batch;
  // A job whose GRES request is already written keeps its GPU indices and kind for good
  // (gres.hpp): it cannot be colocated.
  spec.colocatable = fixed.kind == GresKind::None;
  // Slurm keeps whole seconds; the first sighting refines it within that second.
  const std::int64_t sub_ms = j.submit_s * 1000;
  spec.submit = clock_.at(std::clamp(wall_, sub_ms, sub_ms + 999));
  jobs_[id.index()] = spec;
  state_->set_jobs(jobs_);  // the table may have moved
  if (reuse) state_->recycle(id);
  Rec rec;
  rec.key = v.key;
  rec.ref = v.ref;
  rec.array_job = v.array_job;
  rec.restarts = j.restarts;
  rec.request = req;
  rec.fixed = fixed;
  rec.seen = true;
  recs_[id.index()] = rec;
  by_key_[v.key] = id;
  journal("arrive " + v.ref + " tenant=" + tenants_[spec.tenant.index()].name +
          " gpus=" + std::to_string(spec.gpus) + (spec.preemptible ? "" : " not-preemptible"));
  if (j.running()) {
    adopt_running(id, v);
    return;
  }
  const auto& pin = v.record.pin;
  if (pin && pin->restart == j.restarts && !j.held && !parked(j)) {
    // Released by an earlier controller run and not started yet: keep its decision.
    Rec& rc = recs_[id.index()];
    rc.intent = Intent::Start;
    rc.pin = *pin;
    rc.released = true;
    rc.intent_wall = rc.release_wall = wall_;
    Placement placement;
    for (const auto& [name, mask] : pin->gpus)
      if (auto n = node_index_.find(name); n != node_index_.end())
        placement.push_back({NodeId(static_cast<std::uint32_t>(n->second)), mask});
    state_->adopt(id, now(), std::move(placement), pin->borrowed, pin->shared,
                  pin->decided_ms ? pin->decided_ms : now());
    log_.info("adopt", {{"job", v.ref}, {"state", "released"}});
    return;
  }
  update_waiting(id, v);
}

// A job whose GRES request is fixed (it ran before) waits out of the policy's sight only
// while the policy could place it but Slurm could not hold that placement: some node has
// enough idle GPUs, none has the job's own indices idle. Otherwise it stays a candidate
// like any other (its demand counts, as in the simulator).
bool Controller::fixed_gpus_free(const Rec& rec) const {
  int exact = 0, fits = 0;
  const int want = std::popcount(rec.fixed.mask);
  for (std::size_t n = 0; n < cluster_.nodes.size(); ++n) {
    if (!node_usable_[n]) continue;
    const Node& node = cluster_.nodes[n];
    int idle_gpus = 0;
    for (int k = 0; k < node.gpus; ++k)
      idle_gpus += state_->gpu(static_cast<std::size_t>(node.first_gpu + k)).jobs == 0;
    fits += idle_gpus >= want;
    if (rec.fixed.kind == GresKind::Slot && node_shared_[n]) continue;
    bool idle = node.gpus >= 64 || (rec.fixed.mask >> node.gpus) == 0;
    for (std::uint64_t m = rec.fixed.mask; m && idle; m &= m - 1)
      idle = state_->gpu(static_cast<std::size_t>(node.first_gpu + std::countr_zero(m))).jobs == 0;
    exact += idle;
  }
  return exact >= rec.request.nodes || fits < rec.request.nodes;
}

bool Controller::candidate(const Rec& rec, const View& v) const {
  const JobInfo& j = *v.j;
  if (j.state != JobState::Pending || j.completing) return false;
  const bool ours = our_hold(j, v.record);
  if (j.held && !ours) return false;  // its user holds it
  if (!j.held && !parked(j)) return false;
  if (!ours && (!j.dependency.empty() || j.reason == "DependencyNeverSatisfied")) return false;
  // The user's own StartTime= update lands in the Comment (the gate writes it there) and
  // stands over the record's begin: it only ever delays or frees the user's own job.
  if (comment_begin(j.comment).value_or(rec.request.begin_s) * 1000 > wall_) return false;
  if (rec.fixed.kind != GresKind::None && !fixed_gpus_free(rec)) return false;
  const JobId id = by_key_.at(v.key);
  if (v.array_job && rt(id).status != JobStatus::Pending) {
    auto it = array_room_.find(v.array_job);
    if (it != array_room_.end() && it->second <= 0) return false;
  }
  return true;
}

// A pending job without an intent: park it if it lost its parking, and make it a
// candidate or not.
void Controller::update_waiting(JobId id, const View& v) {
  const JobInfo& j = *v.j;
  Rec& rec = recs_[id.index()];
  if (j.state != JobState::Pending || j.completing) return;
  if (!j.held && !parked(j) && rec.intent == Intent::None) park(v);
  const bool cand = candidate(rec, v);
  const JobStatus s = rt(id).status;
  if (s == JobStatus::Future && cand) {
    if (rec.array_job)
      if (auto it = array_room_.find(rec.array_job); it != array_room_.end()) --it->second;
    state_->unpark(id, now());
  }
  if (s == JobStatus::Pending && !cand) {
    state_->park(id, now());
    journal("wait " + rec.ref);
  }
}

void Controller::observe_known(JobId id, const View& v) {
  const JobInfo& j = *v.j;
  Rec& rec = recs_[id.index()];
  const JobRuntime& r = rt(id);
  const GresRequest fixed = parse_gres_request(j.tres_per_node);
  if (fixed.kind == GresKind::Whole || fixed.kind == GresKind::Slot) rec.fixed = fixed;
  rec.ref = v.ref;
  if (!rec.requeued_from.empty() && rec.pending_again_wall == 0 && j.state == JobState::Pending &&
      !j.completing)
    rec.pending_again_wall = wall_;
  switch (r.status) {
    case JobStatus::Future:
      if (j.running()) {
        adopt_running(id, v);
      } else if (ended(j)) {
        state_->drop(id, now());
      } else {
        update_waiting(id, v);
      }
      return;
    case JobStatus::Pending:
      if (rec.intent == Intent::Preempt) {
        if (j.state == JobState::Pending && !j.completing) {
          rec.intent = Intent::None;
          rec.restarts = j.restarts;
          journal("confirm_preempt " + v.ref);
          update_waiting(id, v);
        } else if (j.running()) {
          if (wall_ - rec.intent_wall > timeout_ms()) {
            preempt_failed(id, "the job was still running after KillWait + start_margin_s");
          } else if (wall_ - rec.last_retry_wall > kRetryMs) {
            rec.last_retry_wall = wall_;
            if (!act_requeue(v.ref))
              log_.warn("requeue_retry_failed", {{"job", v.ref}, {"error", act_error()}});
          }
        } else if (j.terminal() && !j.completing) {
          withdraw(id);  // cancelled while being preempted
        }
        return;
      }
      if (j.running()) {
        log_.warn("started_outside", {{"job", v.ref}});
        adopt_running(id, v);
      } else if (ended(j)) {
        withdraw(id);
      } else {
        update_waiting(id, v);
      }
      return;
    case JobStatus::Running:
      break;
    default:
      return;
  }
  if (rec.intent == Intent::Start) {
    if (j.running()) {
      rec.intent = Intent::None;
      state_->confirm_start(id, now());  // observed start (the model assumed it at the decision)
      const Placement real = placement_of(j);
      if (!real.empty() && real != r.placement) {
        log_.warn("allocation_differs", {{"job", v.ref}});
        state_->relocate(id, real);
      }
      journal("confirm_start " + v.ref);
    } else if (ended(j)) {
      finish(id);
    } else if (j.state == JobState::Pending && !j.completing) {
      bool node_down = false;
      for (const auto& [name, mask] : rec.pin.gpus) {
        auto n = node_index_.find(name);
        node_down = node_down || (n != node_index_.end() && !node_usable_[n->second]);
      }
      if (node_down) {
        rollback_start(id, "start_on_down_node");
      } else if (!rec.released) {
        if (wall_ - rec.intent_wall > timeout_ms())
          rollback_start(id, "gpus_not_freed");
        else
          try_start(id);
      } else if (wall_ - rec.release_wall > timeout_ms()) {
        rollback_start(id, "start_timeout");
      } else if ((j.held || parked(j)) && wall_ - rec.last_retry_wall > kRetryMs) {
        try_start(id);  // the release did not take: issue it again
      }
    }
    return;
  }
  if (j.running()) {
    const Placement real = placement_of(j);
    if (!real.empty()) state_->relocate(id, real);
    return;
  }
  if (ended(j)) {
    finish(id);
    return;
  }
  if (j.state == JobState::Pending) requeued_by_others(id, v);
}

void Controller::requeued_by_others(JobId id, const View& v) {
  Rec& rec = recs_[id.index()];
  state_->requeue(id, now(), false);
  rec.restarts = v.j->restarts;
  note_requeue(rec);
  rec.pending_again_wall = wall_;
  jobs_[id.index()].colocatable = false;  // its GRES request is fixed
  log_.warn("requeued_by_slurm", who(id), {{"job", v.ref}, {"reason", v.j->reason}});
  journal("requeued " + v.ref);
  if (v.j->completing) {
    state_->park(id, now());  // still ending: a candidate once it is pending for good
    return;
  }
  if (!v.j->held && !parked(*v.j)) park(v);
  if (!candidate(rec, v)) state_->park(id, now());
}

void Controller::adopt_running(JobId id, const View& v) {
  const JobInfo& j = *v.j;
  Rec& rec = recs_[id.index()];
  const auto& pin = v.record.pin;
  const bool valid = pin && pin->restart == j.restarts;
  bool slots = false;
  for (const auto& [name, a] : j.alloc) slots = slots || a.slots;
  // No pin of this run (it was not started by DeepShare): preemptible unless it cannot be.
  const bool borrowed = valid ? pin->borrowed : jobs_[id.index()].preemptible;
  const bool shared = valid ? pin->shared : slots;
  state_->adopt(id, now(), placement_of(j), borrowed, shared,
                j.start_s > 0 ? clock_.at(j.start_s * 1000) : now(),
                static_cast<int>(std::min<std::uint32_t>(j.restarts, 0xffff)));
  rec.intent = Intent::None;
  if (valid) rec.pin = *pin;
  log_.info("adopt", who(id),
            {{"job", v.ref},
             {"borrowed", borrowed},
             {"shared", shared},
             {"pin", valid ? "valid" : "none"}});
  journal("adopt " + v.ref);
}

// A preemption Slurm did not carry out: the job runs on in the model (its GPUs are never
// handed out), and the starts waiting for its GPUs go back to the policy.
void Controller::preempt_failed(JobId id, const std::string& why) {
  Rec& rec = recs_[id.index()];
  ++counters_.preemptions_failed;
  ++counters_.failed;
  log_.error("preempt_failed", who(id), {{"job", rec.ref}, {"reason", why}});
  journal("preempt_failed " + rec.ref);
  rec.intent = Intent::None;
  auto v = views_.find(rec.key);
  state_->adopt(id, now(), v != views_.end() ? placement_of(*v->second.j) : Placement{},
                rec.pin.borrowed, rec.pin.shared, now());
  const Placement& mine = rt(id).placement;
  for (std::size_t i = 0; i < recs_.size(); ++i) {
    const JobId other(static_cast<std::uint32_t>(i));
    if (recs_[i].intent != Intent::Start || recs_[i].released || i == id.index()) continue;
    bool overlap = false;
    for (const auto& a : rt(other).placement)
      for (const auto& b : mine)
        overlap = overlap || (a.node == b.node && (a.gpu_mask & b.gpu_mask));
    if (overlap) rollback_start(other, "victim_still_running");
  }
}

void Controller::finish(JobId id) {
  state_->finish(id, now());
  recs_[id.index()].intent = Intent::None;
  ++counters_.completions;
  auto v = views_.find(recs_[id.index()].key);
  const JobInfo* j = v == views_.end() ? nullptr : v->second.j;
  log_.info("job_end", who(id),
            {{"job", recs_[id.index()].ref},
             {"state", j ? slurm_state_name(*j) : "gone"},
             {"run_s", static_cast<double>(rt(id).attained) / 1000.0},
             {"restarts", rt(id).preemptions}});
  journal("finish " + recs_[id.index()].ref);
}

void Controller::withdraw(JobId id) {
  ++counters_.cancellations;
  log_.info("job_cancelled", who(id),
            {{"job", recs_[id.index()].ref}, {"detail", "ended while pending"}});
  state_->withdraw(id, now());
  recs_[id.index()].intent = Intent::None;
  journal("withdraw " + recs_[id.index()].ref);
}

void Controller::vanish(JobId id) {
  recs_[id.index()].vanished = true;  // not listed: no tombstone when compacted
  switch (rt(id).status) {
    case JobStatus::Running:
      finish(id);
      break;
    case JobStatus::Pending:
      withdraw(id);
      break;
    default:
      state_->drop(id, now());
  }
}

}  // namespace ds::slurm
