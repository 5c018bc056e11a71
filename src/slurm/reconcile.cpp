// The reconciler: folds one observation of Slurm into the controller's model.
//
// Rules per managed job (assumed state on the left, Slurm's on the right):
//   unknown          + pending              -> arrived (held if it was not)
//   unknown          + running/pinned       -> adopted (restart: rebuilt from the pin)
//   Running/Start    + RUNNING              -> confirm (intent cleared)
//   Running/Start    + PENDING              -> (re)issue pin + release; forget after
//                                              start_timeout, or at once when a pinned node
//                                              is down: hold again, hand back as requeued
//   Running          + PENDING              -> requeued by someone else (node failure,
//                                              admin): requeued, held again
//   Running          + ended / gone         -> finished
//   Pending/Preempt  + PENDING              -> confirm
//   Pending/Preempt  + RUNNING              -> re-issue the requeue after a while
//   Pending          + RUNNING              -> started by someone else: adopted
//   Pending          + ended / gone         -> withdrawn (cancelled while waiting)
#include <algorithm>

#include "slurm/controller.hpp"

namespace ds::slurm {
namespace {

constexpr std::int64_t kStartTimeoutMs = 30000;  // wall ms a release may take to start
constexpr std::int64_t kRetryMs = 3000;          // wall ms between re-issued actions

bool runs(const JobInfo& j) {
  return j.state == JobState::Running || j.state == JobState::Suspended;
}

bool in_partition(const JobInfo& j, const std::string& part) {
  const std::string& p = j.partition;
  if (p == part) return true;
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

Placement Controller::placement_of(const JobInfo& j, const std::optional<Pin>& pin) const {
  Placement p;
  if (pin && pin->restart == j.restarts) {
    for (const auto& [name, mask] : pin->gpus) {
      auto it = node_index_.find(name);
      if (it != node_index_.end())
        p.push_back({NodeId(static_cast<std::uint32_t>(it->second)), mask});
    }
    return p;
  }
  for (const auto& [name, mask] : j.gpu_idx) {
    auto it = node_index_.find(name);
    if (it != node_index_.end() && mask)
      p.push_back({NodeId(static_cast<std::uint32_t>(it->second)), mask});
  }
  return p;
}

void Controller::observe(const std::vector<JobInfo>& jobs, const std::vector<NodeInfo>& nodes) {
  for (const auto& n : nodes) {
    auto it = node_index_.find(n.name);
    if (it == node_index_.end()) continue;
    if (node_usable_[it->second] != n.usable)
      log_.warn(n.usable ? "node_up" : "node_down", {{"node", n.name}, {"state", n.state}});
    node_usable_[it->second] = n.usable;
  }
  for (auto& r : recs_) r.seen = false;
  std::vector<const JobInfo*> mine;
  for (const auto& j : jobs) {
    if (!in_partition(j, cfg_.partition) || !tenant_of(j.account)) continue;
    if (!by_slurm_.count(j.id) && parse_tres_gpus(j.tres_per_node) <= 0 &&
        !parse_comment(j.comment).count("gpus"))
      continue;  // not a GPU job: left to Slurm
    mine.push_back(&j);
  }
  std::sort(mine.begin(), mine.end(),
            [](const JobInfo* a, const JobInfo* b) { return a->id < b->id; });
  for (const JobInfo* j : mine) {
    auto it = by_slurm_.find(j->id);
    if (it == by_slurm_.end()) {
      if (!j->terminal()) observe_new(*j);
      continue;
    }
    recs_[it->second.index()].seen = true;
    observe_known(it->second, *j);
  }
  for (std::size_t i = 0; i < recs_.size(); ++i) {
    const JobStatus s = rt_[i].status;
    if (!recs_[i].seen && (s == JobStatus::Pending || s == JobStatus::Running))
      vanish(JobId(static_cast<std::uint32_t>(i)));
  }
}

void Controller::observe_new(const JobInfo& j) {
  const TenantConfig* t = tenant_of(j.account);
  const JobId id(static_cast<std::uint32_t>(jobs_.size()));
  const CommentFields fields = parse_comment(j.comment);
  JobSpec spec;
  spec.id = id;
  auto trace = fields.find("trace");
  spec.name = trace != fields.end() ? trace->second : std::to_string(j.id);
  spec.tenant = t->tenant.id;
  auto [u, added] = user_ids_.try_emplace(j.user, static_cast<std::uint32_t>(users_.size()));
  if (added) users_.push_back(j.user);
  spec.user = UserId(u->second);
  // GPUs: `--comment=ds:gpus=N` (no Slurm GRES: DeepShare binds the GPUs, and may share
  // them), or `--gres=gpu:N` per node (Slurm 22.05 cannot drop a GRES request once set, so
  // such a job runs exclusive only: it declares the GPU's whole memory and never fits a share).
  const int slurm_gpus = parse_tres_gpus(j.tres_per_node);
  if (auto f = fields.find("gpus"); f != fields.end())
    spec.gpus = std::max(1, std::atoi(f->second.c_str()));
  else
    spec.gpus = std::max(1, slurm_gpus) * static_cast<int>(std::max<std::uint32_t>(1, j.num_nodes));
  if (auto f = fields.find("u"); f != fields.end()) spec.gpu_util = std::atof(f->second.c_str());
  if (auto f = fields.find("mem"); f != fields.end())
    spec.gpu_memory_mib = std::atof(f->second.c_str());
  if (slurm_gpus > 0) spec.gpu_memory_mib = static_cast<double>(cfg_.gpu_memory_mib);
  // Slurm keeps whole seconds; the first sighting refines it within that second.
  const std::int64_t sub_ms = j.submit_s * 1000;
  spec.submit = clock_.at(std::clamp(wall_, sub_ms, sub_ms + 999));
  jobs_.push_back(spec);
  JobRuntime r;
  r.queued_since = spec.submit;
  rt_.push_back(r);
  Rec rec;
  rec.slurm_id = j.id;
  rec.restarts = j.restarts;
  rec.seen = true;
  recs_.push_back(rec);
  by_slurm_[j.id] = id;

  const auto pin = read_pin(fields);
  const bool pin_valid = pin && pin->restart == j.restarts;
  if (runs(j) || j.state == JobState::Completing) {
    adopt_running(id, j, pin);
    return;
  }
  if (j.state == JobState::Pending && pin_valid) {
    // Placed by an earlier controller run: keep its decision (never place it twice).
    Rec& rc = recs_.back();
    rc.intent = Intent::Start;
    rc.pin = *pin;
    rc.released = !j.held;
    rc.intent_wall = wall_;
    adopt_running(id, j, pin);
    rt_[id.index()].last_start = pin->decided_ms ? pin->decided_ms : now();
    if (j.held) try_start(id, &j);
    return;
  }
  rt_[id.index()].status = JobStatus::Pending;
  arrived_.push_back(id);
  ensure_held(j);
  journal("arrive " + std::to_string(j.id) + " tenant=" + t->tenant.name +
          " gpus=" + std::to_string(spec.gpus));
}

void Controller::adopt_running(JobId id, const JobInfo& j, const std::optional<Pin>& pin) {
  JobRuntime& r = rt_[id.index()];
  r.status = JobStatus::Running;
  const bool valid = pin && pin->restart == j.restarts;
  r.borrowed = valid && pin->borrowed;
  r.shared = valid && pin->shared;
  r.placement = placement_of(j, pin);
  r.last_start = j.start_s > 0 ? clock_.at(j.start_s * 1000) : now();
  r.first_start = r.last_start;
  r.preemptions = static_cast<std::uint16_t>(j.restarts);
  adopted_.push_back(id);
  log_.info("adopt", {{"job", std::to_string(j.id)},
                      {"borrowed", r.borrowed ? "1" : "0"},
                      {"shared", r.shared ? "1" : "0"}});
  journal("adopt " + std::to_string(j.id));
}

void Controller::observe_known(JobId id, const JobInfo& j) {
  Rec& rec = recs_[id.index()];
  JobRuntime& r = rt_[id.index()];
  const bool running = runs(j);
  if (!rec.requeued_from.empty() && rec.pending_again_wall == 0 && j.state == JobState::Pending)
    rec.pending_again_wall = wall_;
  if (r.status == JobStatus::Running) {
    if (rec.intent == Intent::Start) {
      if (running) {
        rec.intent = Intent::None;
        r.last_start = now();  // observed start (the model assumed it at the decision)
        if (r.first_start == kNever || r.first_start > r.last_start) r.first_start = r.last_start;
        journal("confirm_start " + std::to_string(j.id));
      } else if (j.terminal()) {
        finish(id);
      } else if (j.state == JobState::Pending) {
        bool node_down = false;
        for (const auto& [name, mask] : rec.pin.gpus) {
          auto n = node_index_.find(name);
          node_down = node_down || (n != node_index_.end() && !node_usable_[n->second]);
        }
        if (wall_ - rec.intent_wall > kStartTimeoutMs || node_down) {
          // forget: Slurm did not start it (or cannot: its node is down); hand it back
          ++counters_.rollbacks;
          log_.warn(node_down ? "start_on_down_node" : "start_timeout",
                    {{"job", std::to_string(j.id)}, {"reason", j.reason}});
          journal("forget_start " + std::to_string(j.id));
          api_->hold(j.id);
          rec.intent = Intent::None;
          r.status = JobStatus::Pending;
          r.placement.clear();
          r.queued_since = now();
          requeued_.push_back(id);
        } else if (!rec.released || (j.held && wall_ - rec.last_retry_wall > kRetryMs)) {
          try_start(id, &j);
        }
      }
      return;
    }
    if (running || j.state == JobState::Completing) return;
    if (j.terminal()) {
      finish(id);
      return;
    }
    if (j.state == JobState::Pending) requeued_by_others(id, j);
    return;
  }
  if (r.status == JobStatus::Pending) {
    if (rec.intent == Intent::Preempt) {
      if (j.state == JobState::Pending) {
        rec.intent = Intent::None;
        rec.restarts = j.restarts;
        journal("confirm_preempt " + std::to_string(j.id));
      } else if (running && wall_ - rec.last_retry_wall > kRetryMs) {
        rec.last_retry_wall = wall_;
        if (!api_->requeue_hold(j.id))
          log_.warn("requeue_retry_failed",
                    {{"job", std::to_string(j.id)}, {"error", api_->last_error()}});
      } else if (j.terminal()) {
        withdraw(id);
      }
      return;
    }
    if (j.state == JobState::Pending) {
      ensure_held(j);
    } else if (running) {
      // started by someone else (a user's `scontrol release`): account it as running
      log_.warn("started_outside", {{"job", std::to_string(j.id)}});
      adopt_running(id, j, read_pin(parse_comment(j.comment)));
    } else if (j.terminal()) {
      withdraw(id);
    }
  }
}

void Controller::requeued_by_others(JobId id, const JobInfo& j) {
  JobRuntime& r = rt_[id.index()];
  r.attained += std::max<Time>(0, now() - r.last_start);
  r.status = JobStatus::Pending;
  r.placement.clear();
  r.borrowed = r.shared = false;
  r.queued_since = now();
  ++r.preemptions;
  recs_[id.index()].restarts = j.restarts;
  note_requeue(recs_[id.index()]);
  recs_[id.index()].pending_again_wall = wall_;  // pending now
  requeued_.push_back(id);
  log_.warn("requeued_by_slurm", {{"job", std::to_string(j.id)}, {"reason", j.reason}});
  journal("requeued " + std::to_string(j.id));
  ensure_held(j);
}

void Controller::ensure_held(const JobInfo& j) {
  if (!j.held && j.state == JobState::Pending) {
    if (api_->hold(j.id))
      journal("hold " + std::to_string(j.id));
    else
      log_.warn("hold_failed", {{"job", std::to_string(j.id)}, {"error", api_->last_error()}});
  }
}

void Controller::finish(JobId id) {
  JobRuntime& r = rt_[id.index()];
  r.attained += std::max<Time>(0, now() - r.last_start);
  r.status = JobStatus::Done;
  r.end = now();
  r.placement.clear();
  recs_[id.index()].intent = Intent::None;
  finished_.push_back({id, r.attained});
  journal("finish " + std::to_string(recs_[id.index()].slurm_id));
}

void Controller::withdraw(JobId id) {
  rt_[id.index()].status = JobStatus::Done;
  rt_[id.index()].end = now();
  recs_[id.index()].intent = Intent::None;
  withdrawn_.push_back(id);
  journal("withdraw " + std::to_string(recs_[id.index()].slurm_id));
}

void Controller::vanish(JobId id) {
  if (rt_[id.index()].status == JobStatus::Running)
    finish(id);
  else
    withdraw(id);
}

}  // namespace ds::slurm
