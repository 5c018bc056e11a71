// The Slurm adapter's observation side: the job table as the driver core sees it, and
// Slurm's rules for when a pending job may run (adapter.hpp). The actions are in
// adapter_act.cpp.
//
// Slurm's states as phases (driver/ports.hpp):
//   PENDING                      -> waiting      PENDING + COMPLETING (requeued) -> stopping
//   RUNNING, SUSPENDED           -> running      RUNNING + COMPLETING (ending)   -> ending
//   COMPLETED, FAILED, CANCELLED, others -> ended (ending while still COMPLETING)
// Parked: the gate gives every job BeginTime 2100 (kParkedBegin), so Slurm starts none by
// itself; a job DeepShare requeued is held instead (requeue-hold, its record's p= says the
// hold is DeepShare's). A released start has neither.
#include <algorithm>
#include <bit>

#include "core/error.hpp"
#include "slurm/adapter.hpp"
#include "slurm/models.hpp"

namespace ds::slurm {
namespace {

// The job's begin: the user's own StartTime= update lands in the Comment (the gate writes it
// there) and stands over the record's; it only ever delays or frees the user's own job.
std::int64_t begin_of(const JobInfo& j, const Record& r) {
  return comment_begin(j.comment).value_or(r.request.begin_s);
}

constexpr std::int64_t kParkedSince = kParkedBegin - 86400;

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

driver::Phase phase_of(const JobInfo& j) {
  if (j.state == JobState::Pending)
    return j.completing ? driver::Phase::Stopping : driver::Phase::Waiting;
  if (j.running()) return driver::Phase::Running;
  if (j.completing) return driver::Phase::Ending;
  return j.terminal() ? driver::Phase::Ended : driver::Phase::Ending;
}

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

}  // namespace

bool parked(const JobInfo& j) {
  return j.eligible_s >= kParkedSince;
}

// Held by DeepShare's own preemption (requeue-hold at restart count p), not by its user: the
// gate parks a job its user holds (or releases), and DeepShare's requeue-hold leaves the job's
// BeginTime at Slurm's requeue time, so a parked hold is never DeepShare's own.
bool our_hold(const JobInfo& j, const Record& r) {
  return j.held && !parked(j) && r.preempted_at && *r.preempted_at + 1 == j.restarts;
}

SlurmAdapter::SlurmAdapter(const ControllerConfig& cfg, driver::Log& log, driver::Journal& journal,
                           driver::Fence& fence, slurm::Actuator& act, Tenants& tenants)
    : cfg_(cfg), log_(log), journal_(journal), fence_(fence), act_(act), tenants_(tenants) {}

void SlurmAdapter::load_nodes(const std::vector<NodeInfo>& nodes) {
  for (const auto& n : nodes) {
    if (std::find(n.partitions.begin(), n.partitions.end(), cfg_.partition) == n.partitions.end())
      continue;
    if (n.gpus <= 0) continue;
    if (n.gpus > kMaxGpusPerNode) throw InputError("node " + n.name + " has more than 64 GPUs");
    Node node;
    node.id = NodeId(static_cast<std::uint32_t>(cluster_.nodes.size()));
    node.name = n.name;
    node.gpus = n.gpus;
    node.first_gpu = cluster_.total_gpus();
    node.gpu_type = node_model(n, cfg_);
    node.gpu_memory_mib = model_memory_mib(node.gpu_type, cfg_);
    node_index_[n.name] = cluster_.nodes.size();
    cluster_.nodes.push_back(node);
    limits_.push_back({n.cpus, n.memory_mib, n.tmp_disk_mib, n.features});
  }
  if (cluster_.nodes.empty())
    throw InputError("partition '" + cfg_.partition + "' has no nodes with GPUs (gres gpu)");
}

std::vector<driver::EngineNode> SlurmAdapter::engine_nodes(
    const std::vector<NodeInfo>& nodes) const {
  std::vector<driver::EngineNode> out;
  for (const auto& n : nodes) {
    if (!node_index_.count(n.name)) continue;
    // A reservation DeepShare's next start could reach holds the node as a drain would.
    if (const ReservedWindow* r = blocking_reservation(n, wall_ / 1000, lead_s_))
      out.push_back({n.name, false, n.partitions.size() > 1, "RESERVED(" + r->name + ")"});
    else
      out.push_back({n.name, n.usable, n.partitions.size() > 1, n.state});
  }
  return out;
}

Placement SlurmAdapter::placement_of(const JobInfo& j) const {
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

Placement SlurmAdapter::placement_of(const std::map<std::string, std::uint64_t>& gpus) const {
  Placement p;
  for (const auto& [name, mask] : gpus)
    if (auto n = node_index_.find(name); n != node_index_.end())
      p.push_back({NodeId(static_cast<std::uint32_t>(n->second)), mask});
  return p;
}

const SlurmAdapter::View* SlurmAdapter::view(const std::string& ref) const {
  auto it = views_.find(ref);
  return it == views_.end() ? nullptr : &it->second;
}

// The record of one job of the partition (nullopt: not DeepShare's to schedule, reported).
std::optional<SlurmAdapter::View> SlurmAdapter::view_of(const JobInfo& j, const std::string& ref,
                                                        std::uint32_t array_job) {
  if (has_pin_keys(j.comment) && untrusted_.insert(ref).second) {
    ++counters_.untrusted_pins;
    log_.warn("untrusted_pin", {{"job", j.ref()},
                                {"user", j.user},
                                {"detail", "pin keys in the job's Comment are ignored"}});
    journal_.line("untrusted_pin " + j.ref());
  }
  RecordLimits limits;
  limits.max_gpus = cluster_.total_gpus();
  limits.max_mem_mib = static_cast<double>(max_memory_mib(cfg_));
  View v;
  v.j = &j;
  v.ref = ref;
  v.array_job = array_job;
  // Jobs in the order of (job or array id, task), as Slurm numbers them.
  v.order = j.array_job != 0 && j.array_task != kNoTask
                ? std::uint64_t{j.array_job} << 32 | j.array_task
                : std::uint64_t{j.id} << 32 | kNoTask;
  std::optional<Record> record;
  try {
    record = parse_record(j.admin_comment, limits);
  } catch (const InputError& e) {
    if (reported_.count(ref)) return std::nullopt;
    ++counters_.bad_records;
    log_.warn("bad_record", {{"job", j.ref()}, {"error", e.what()}});
    // A waiting job DeepShare cannot read would wait forever: refuse it.
    if (j.state == JobState::Pending && !j.completing)
      refuse(v, std::string("DeepShare cannot read the job's record: ") + e.what());
    reported_.insert(ref);
    return std::nullopt;
  }
  if (record && record->epoch && *record->epoch > fence_.epoch())
    fence_.depose("job " + j.ref() + " carries a record of epoch " +
                  std::to_string(*record->epoch) + ": another controller acts on this cluster");
  if (!record) {
    if (!j.terminal() && reported_.insert(ref).second) {
      ++counters_.ungated;
      log_.warn("ungated_job", {{"job", j.ref()},
                                {"detail",
                                 "no DeepShare record in its AdminComment (submitted without "
                                 "the gate?): left to Slurm, its GPUs count as busy"}});
    }
    return std::nullopt;
  }
  if (!record->refused.empty()) return std::nullopt;
  v.record = *record;
  return v;
}

std::vector<SlurmAdapter::View> SlurmAdapter::views_of(const std::vector<JobInfo>& jobs) {
  std::vector<View> out;
  for (const auto& j : jobs) {
    if (!in_partition(j, cfg_.partition)) continue;
    if (j.array_job != 0 && j.array_task == kNoTask && !j.array_tasks.empty()) {
      // A meta record stands for its pending tasks: one view each.
      std::optional<View> meta = view_of(j, j.ref(), j.array_job);
      if (!meta) continue;
      for (std::uint32_t t : expand_tasks(j.array_tasks)) {
        View v = *meta;
        v.ref = std::to_string(j.array_job) + "_" + std::to_string(t);
        v.order = std::uint64_t{j.array_job} << 32 | t;
        out.push_back(std::move(v));
      }
      continue;
    }
    if (auto v = view_of(j, j.ref(), j.array_task != kNoTask ? j.array_job : 0))
      out.push_back(std::move(*v));
  }
  std::sort(out.begin(), out.end(), [](const View& a, const View& b) { return a.order < b.order; });
  return out;
}

// %N throttle: tasks of an array that may still become candidates this cycle.
void SlurmAdapter::count_array_room() {
  array_room_.clear();
  for (const auto& [ref, v] : views_)
    if (v.array_job && v.j->array_max_running > 0)
      array_room_[v.array_job] = static_cast<int>(v.j->array_max_running);
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    auto it = array_room_.find(jobs_[i].array_job);
    const JobStatus st = state().runtime(JobId(static_cast<std::uint32_t>(i))).status;
    if (jobs_[i].array_job && it != array_room_.end() &&
        (st == JobStatus::Running || st == JobStatus::Pending))
      --it->second;
  }
}

driver::Observation SlurmAdapter::observe(const std::vector<JobInfo>& jobs) {
  // What Slurm has allocated now, per node (every partition): a start is released only onto
  // GPUs Slurm shows free.
  slurm_use_.clear();
  for (const auto& j : jobs) {
    if (!j.running() && !j.completing) continue;
    for (const auto& [name, a] : j.alloc) {
      NodeUse& u = slurm_use_[name];
      u.gpus |= a.gpus;
      u.slots |= a.slots;
    }
  }
  lead_s_ = start_lead_s(jobs, cfg_.partition);
  views_.clear();
  tenants_refreshed_ = false;
  const std::vector<View> list = views_of(jobs);
  for (const auto& v : list) views_[v.ref] = v;
  count_array_room();
  driver::Observation obs;
  const driver::JobBook& book = core_->book();
  for (const View& v : list) {
    const driver::Phase phase = phase_of(*v.j);
    const bool unfinished = phase != driver::Phase::Ended && phase != driver::Phase::Ending;
    // New, or back after it ended (its user requeued the finished job; the reconciler takes
    // it as a new arrival): what it asks for is read again.
    const bool back = book.returns(v.ref, unfinished, state());
    const bool fresh =
        back || (unfinished && !book.find(v.ref).has_value() && !book.tombstoned(v.ref));
    if (back) reported_.erase(v.ref);
    std::vector<std::uint8_t> allowed;
    if (fresh && !admit(v, allowed)) continue;
    obs.jobs.push_back(engine_job(v, fresh, std::move(allowed)));
  }
  return obs;
}

// A job seen for the first time: DeepShare schedules it, or refuses it with a reason.
bool SlurmAdapter::admit(const View& v, std::vector<std::uint8_t>& allowed) {
  const JobInfo& j = *v.j;
  if (parse_gres_request(j.tres_per_node).kind == GresKind::Other) {
    if (reported_.insert(v.ref).second) {
      ++counters_.bad_records;
      log_.warn("foreign_gres",
                {{"job", v.ref},
                 {"tres_per_node", j.tres_per_node},
                 {"detail", "a GRES request DeepShare did not write: left to Slurm"}});
    }
    return false;
  }
  TenantId t = tenants_.of(j.account);
  if (!t.valid() && refresh_tenants && !tenants_refreshed_) {
    tenants_refreshed_ = true;
    refresh_tenants();  // an account created since the last read
    t = tenants_.of(j.account);
  }
  if (!t.valid()) {
    if (j.state == JobState::Pending)
      refuse(v, "account '" + j.account +
                    "' is not a DeepShare tenant (tenants are Slurm accounts with a GPU quota); "
                    "submit with -A YOUR_TEAM");
    return false;
  }
  const Request& req = v.record.request;
  if (!admit_model(v) || !admit_feasible(v, allowed)) return false;
  const bool preemptible = !req.no_requeue && j.requeue && j.batch;
  const int quota = tenants_.list()[t.index()].quota_gpus;
  if (!preemptible && j.state == JobState::Pending && j.restarts == 0 && req.gpus > quota) {
    refuse(v,
           "a job that cannot be requeued (--no-requeue or interactive) runs only within its "
           "account's guaranteed GPUs: account '" +
               j.account + "' has " + std::to_string(quota) + ", the job asks for " +
               std::to_string(req.gpus) +
               "; submit it requeueable (it may then run on borrowed GPUs)");
    return false;
  }
  return true;
}

// A job's GPU model (gm=): refused when no node of the partition can ever run it; not
// enforced (reported once) when the controller lists no gpu_models.
bool SlurmAdapter::admit_model(const View& v) {
  const Request& req = v.record.request;
  if (req.gpu_model.empty()) return true;
  if (cfg_.gpu_models.empty()) {
    if (!model_ignored_) {
      model_ignored_ = true;
      log_.warn("gpu_model_ignored",
                {{"job", v.ref},
                 {"gpu_model", req.gpu_model},
                 {"detail",
                  "jobs ask for GPU models but gpu_models is not configured: nodes are "
                  "untyped and models are not enforced"}});
    }
    return true;
  }
  const std::string why =
      model_refusal(req.gpu_model, req.gpus, req.nodes, cluster_, cfg_.partition);
  if (why.empty()) return true;
  if (v.j->state == JobState::Pending) refuse(v, why);
  return false;
}

// A job no set of nodes Slurm can start it on may hold (excluded nodes, too little memory or
// too few CPUs, feasible.hpp): refused with the reason, never placed and rolled back.
bool SlurmAdapter::admit_feasible(const View& v, std::vector<std::uint8_t>& allowed) {
  const Request& req = v.record.request;
  Feasibility f = feasible_nodes(*v.j, req.gpus, req.nodes, cluster_, limits_);
  allowed = std::move(f.allowed);
  // A job Slurm already runs (adopted after a restart) is where Slurm could start it.
  if (f.refusal.empty() || v.j->state != JobState::Pending) return true;
  refuse(v, f.refusal);
  return false;
}

JobSpec SlurmAdapter::spec_of(const View& v, std::vector<std::uint8_t> allowed) const {
  const JobInfo& j = *v.j;
  const Request& req = v.record.request;
  JobSpec spec;
  spec.name = !req.trace.empty() ? req.trace : v.ref;
  spec.tenant = tenants_.of(j.account);
  spec.gpus = req.gpus;
  spec.gpu_util = req.util;
  spec.gpu_memory_mib = req.mem_mib;
  // Node models exist only with gpu_models configured (models.hpp): without them a model
  // constraint could never be met, so it is left out, as the gate's single-model sites need.
  if (!cfg_.gpu_models.empty()) spec.gpu_type = req.gpu_model;
  // Only nodes where Slurm can start it (issue #24): its exclusions, CPUs, memory, features.
  spec.allowed_nodes = std::move(allowed);
  spec.preemptible = !req.no_requeue && j.requeue && j.batch;
  // A job whose GRES request is already written keeps its GPU indices and kind for good
  // (gres.hpp): it cannot be colocated.
  spec.colocatable = parse_gres_request(j.tres_per_node).kind == GresKind::None;
  // Slurm keeps whole seconds; the first sighting refines it within that second.
  const std::int64_t sub_ms = j.submit_s * 1000;
  spec.submit = clock_.at(std::clamp(wall_, sub_ms, sub_ms + 999));
  return spec;
}

driver::EngineJob SlurmAdapter::engine_job(const View& v, bool fresh,
                                           std::vector<std::uint8_t> allowed) const {
  const JobInfo& j = *v.j;
  driver::EngineJob e;
  e.key = e.ref = v.ref;
  e.phase = phase_of(j);
  e.state = slurm_state_name(j);
  e.placement = placement_of(j);
  for (const auto& [name, a] : j.alloc) e.holds_shares = e.holds_shares || a.slots;
  e.run_start = j.start_s > 0 ? clock_.at(j.start_s * 1000) : kNever;
  e.restarts = j.restarts;
  const auto& pin = v.record.pin;
  if (pin && pin->restart == j.restarts)  // a pin of an earlier run is stale
    e.decision = driver::EngineDecision{pin->borrowed, pin->shared, placement_of(pin->gpus),
                                        pin->decided_ms ? pin->decided_ms : kNever};
  e.handed_over = !j.held && !parked(j);
  e.wake_wall_ms = begin_of(j, v.record) * 1000;
  e.user = j.user;
  if (fresh) e.spec = spec_of(v, std::move(allowed));
  return e;
}

void SlurmAdapter::refuse(const View& v, const std::string& why) {
  if (!reported_.insert(v.ref).second) return;
  ++counters_.refused;
  log_.warn("refuse",
            {{"job", v.ref}, {"reason", why}, {"user", v.j->user}, {"account", v.j->account}});
  journal_.line("refuse " + v.ref + " " + why);
  RecordFields f = parse_fields(v.j->admin_comment);
  std::string text = why;
  std::replace(text.begin(), text.end(), ';', ',');
  f["x"] = text;
  Update u;
  u.job = v.ref;
  u.admin_comment = format_fields(f);
  if (!act_update(u) || !act_cancel(v.ref)) {
    ++core_->counters_mut().failed;
    log_.warn("refuse_failed", {{"job", v.ref}, {"error", act_error()}});
  }
}

void SlurmAdapter::park(const View& v) {
  Update u;
  u.job = v.ref;
  u.begin_s = kParkedBegin;
  if (act_update(u))
    journal_.line("park " + v.ref);
  else
    log_.warn("park_failed", {{"job", v.ref}, {"error", act_error()}});
}

// GPUs Slurm has allocated to jobs the model does not run: other partitions, ungated jobs,
// and DeepShare's own jobs that are ending or being requeued (they hold their GPUs until
// their processes are gone); and what all of them hold of each node's CPUs and memory
// (outside_, headroom.hpp), CPU-only jobs included.
void SlurmAdapter::sync_held(const std::vector<JobInfo>& jobs) {
  std::vector<std::size_t> held;
  outside_.assign(cluster_.nodes.size(), NodeShare{});
  for (const auto& j : jobs) {
    if (!j.running() && !j.completing) continue;
    auto id = core_->book().find(j.ref());
    if (id && state().runtime(*id).status == JobStatus::Running) continue;
    // Its CPUs and memory on each of its nodes (with or without GPUs): Slurm counts them.
    for (const std::string& name : j.nodes)
      if (auto n = node_index_.find(name); n != node_index_.end())
        outside_[n->second] = outside_[n->second] + share_of(j);
    for (const auto& [name, a] : j.alloc) {
      auto n = node_index_.find(name);
      if (n == node_index_.end()) continue;
      const Node& node = cluster_.nodes[n->second];
      for (std::uint64_t m = a.gpus | a.slots; m; m &= m - 1)
        if (std::countr_zero(m) < node.gpus)
          held.push_back(static_cast<std::size_t>(node.first_gpu + std::countr_zero(m)));
    }
  }
  state().set_held_outside(std::move(held));
}

// --- the book -------------------------------------------------------------------------

void SlurmAdapter::admitted(JobId id, const driver::EngineJob& e) {
  if (jobs_.size() <= id.index()) jobs_.resize(std::size_t{id.index()} + 1);
  const View& v = *view(e.key);
  SlurmJob sj;
  sj.ref = v.ref;
  sj.array_job = v.array_job;
  sj.request = v.record.request;
  sj.fixed = parse_gres_request(v.j->tres_per_node);
  sj.restarts = v.j->restarts;
  if (e.decision && e.handed_over && e.phase != driver::Phase::Running) sj.pin = *v.record.pin;
  // Pending after a run (a finished job its user requeued, a start the PrologSlurmctld
  // refused): its credential may be revoked on any node.
  if (v.j->restarts > 0 && v.j->state == JobState::Pending) revoked_everywhere(sj);
  jobs_[id.index()] = sj;
}

// slurmd kills a launch whose credential is from the second its job was requeued in
// ("Job credential revoked"): a job requeued where the controller did not see it run waits
// out the revocation on every node (must_wait_for_revocation).
void SlurmAdapter::revoked_everywhere(SlurmJob& sj) const {
  sj.requeued_from.clear();
  for (const Node& n : cluster_.nodes) sj.requeued_from.push_back(n.name);
  sj.pending_again_wall = wall_;
}

void SlurmAdapter::observed(JobId id, const driver::EngineJob& e) {
  SlurmJob& sj = jobs_[id.index()];
  const JobInfo& j = *view(e.key)->j;
  const GresRequest fixed = parse_gres_request(j.tres_per_node);
  if (fixed.kind == GresKind::Whole || fixed.kind == GresKind::Slot) sj.fixed = fixed;
  sj.ref = e.ref;
  if (j.state == JobState::Running) sj.refused_nodes.clear();  // it ran: nothing learned stands
  if (!sj.requeued_from.empty() && sj.pending_again_wall == 0 && j.state == JobState::Pending &&
      !j.completing)
    sj.pending_again_wall = wall_;
  // Requeued while pending in the controller's sight (Slurm's own start, refused by the
  // PrologSlurmctld): Slurm counted a run. (A requeue the controller knows of has its nodes.)
  if (j.restarts > sj.restarts && j.state == JobState::Pending && !j.completing &&
      sj.requeued_from.empty()) {
    sj.restarts = j.restarts;
    revoked_everywhere(sj);
  }
}

void SlurmAdapter::forgotten(JobId id) {
  reported_.erase(jobs_[id.index()].ref);
  untrusted_.erase(jobs_[id.index()].ref);
  jobs_[id.index()] = SlurmJob{};
}

// --- reconciling ----------------------------------------------------------------------

// A job whose GRES request is fixed (it ran before) waits out of the policy's sight only
// while the policy could place it but Slurm could not hold that placement: some node has
// enough idle GPUs, none has the job's own indices idle. Otherwise it stays a candidate
// like any other (its demand counts, as in the simulator).
bool SlurmAdapter::fixed_gpus_free(const SlurmJob& sj) const {
  int exact = 0, fits = 0;
  const int want = std::popcount(sj.fixed.mask);
  for (const Node& node : cluster_.nodes) {
    if (!state().node_usable(node.id)) continue;
    fits += state().idle_gpus(node.id) >= want;
    if (sj.fixed.kind == GresKind::Slot && state().no_sharing(node.id)) continue;
    exact += state().gpus_idle(node.id, sj.fixed.mask);
  }
  return exact >= sj.request.nodes || fits < sj.request.nodes;
}

WaitReason SlurmAdapter::eligible(JobId id, const driver::EngineJob& e) {
  const View& v = *view(e.key);
  const JobInfo& j = *v.j;
  const SlurmJob& sj = jobs_[id.index()];
  if (j.state != JobState::Pending || j.completing) return WaitReason::Held;
  const bool ours = our_hold(j, v.record);
  if (j.held && !ours) return WaitReason::Held;        // its user (or an administrator) holds it
  if (!j.held && !parked(j)) return WaitReason::Held;  // lost its parking: parked again
  if (!ours && (!j.dependency.empty() || j.reason == "DependencyNeverSatisfied"))
    return WaitReason::Dependency;
  if (begin_of(j, v.record) * 1000 > wall_) return WaitReason::Dependency;  // its --begin
  if (sj.fixed.kind != GresKind::None && !fixed_gpus_free(sj)) return WaitReason::NoFit;
  if (v.array_job && state().runtime(id).status != JobStatus::Pending) {
    auto it = array_room_.find(v.array_job);
    if (it != array_room_.end() && it->second <= 0) return WaitReason::Quota;  // %N
  }
  return WaitReason::None;
}

void SlurmAdapter::hold_back(JobId, const driver::EngineJob& e) {
  const View& v = *view(e.key);
  if (!v.j->held && !parked(*v.j)) park(v);
}

void SlurmAdapter::became_candidate(JobId id) {
  const SlurmJob& sj = jobs_[id.index()];
  if (sj.array_job)
    if (auto it = array_room_.find(sj.array_job); it != array_room_.end()) --it->second;
}

void SlurmAdapter::preempt_confirmed(JobId id, const driver::EngineJob& e) {
  jobs_[id.index()].restarts = e.restarts;
}

void SlurmAdapter::requeued_by_engine(JobId id, const driver::EngineJob& e) {
  SlurmJob& sj = jobs_[id.index()];
  sj.restarts = e.restarts;
  note_requeue(sj);
  sj.pending_again_wall = wall_;
  state().set_colocatable(id, false);  // its GRES request is fixed
  log_.warn("requeued_by_slurm", who(id), {{"job", e.ref}, {"reason", view(e.key)->j->reason}});
}

void SlurmAdapter::adopted(JobId id, const driver::EngineJob& e) {
  if (e.decision) jobs_[id.index()].pin = *view(e.key)->record.pin;
}

// A quota cut made the run borrowed: its pin says so (b=1), so that a restarted controller
// adopts it as a borrower. A run without a pin of its own is adopted as borrowed anyway.
void SlurmAdapter::lent_out(JobId id) {
  SlurmJob& sj = jobs_[id.index()];
  sj.pin.borrowed = true;
  const View* v = view(sj.ref);
  if (!v || !v->record.pin || v->record.pin->restart != v->j->restarts) return;
  RecordFields f = parse_fields(v->j->admin_comment);
  f["b"] = "1";
  Update u;
  u.job = sj.ref;
  u.admin_comment = format_fields(f);
  if (!act_update(u)) log_.warn("pin_update_failed", {{"job", sj.ref}, {"error", act_error()}});
}

}  // namespace ds::slurm
