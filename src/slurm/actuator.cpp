// The actuator: applies the policy's decisions through Slurm, idempotently.
//  - start:   write the pin (nodes, GPUs, flags, restart count) into the Comment, pin the
//             node list (and the per-node GPU count for jobs submitted with --gres),
//             BeginTime=now (skips the post-requeue wait), then release; re-issued until
//             Slurm shows it running. DeepShare, not Slurm, keeps shared and whole-GPU jobs
//             apart: the TaskProlog sets CUDA_VISIBLE_DEVICES from the pin.
//  - preempt: requeue in held state (the job waits for DeepShare again).
//  - reject:  cancel (the job can never run under this policy), with the reason logged.
// A job still completing after a requeue is released only once it is pending again, and
// onto a node it was requeued from only 1.2 s after it was seen pending again (slurmd's
// credential revocation: Controller::Rec).
#include <algorithm>
#include <bit>
#include <climits>

#include "slurm/controller.hpp"

namespace ds::slurm {

void Controller::apply(Decisions& d,
                       const std::unordered_map<std::uint32_t, const JobInfo*>& by_id) {
  auto info = [&](JobId id) -> const JobInfo* {
    auto it = by_id.find(recs_[id.index()].slurm_id);
    return it == by_id.end() ? nullptr : it->second;
  };
  for (const auto& r : d.reject) reject(r);
  for (const auto& p : d.preempt) preempt(p.job);
  for (auto& s : d.start) start(s, info(s.job));
}

void Controller::start(StartJob& s, const JobInfo* j) {
  const JobId id = s.job;
  JobRuntime& r = rt_[id.index()];
  Rec& rec = recs_[id.index()];
  if (r.status != JobStatus::Pending) {
    ++counters_.failed;
    log_.error("start_not_pending", {{"job", std::to_string(rec.slurm_id)}});
    return;
  }
  Pin pin;
  pin.restart = j ? j->restarts : rec.restarts;
  if (rec.intent == Intent::Preempt) pin.restart = rec.restarts + 1;  // requeue not seen yet
  pin.borrowed = s.borrowed;
  pin.shared = s.shared;
  pin.mps_percent = s.mps_thread_percent;
  pin.decided_ms = now();
  for (const auto& a : s.placement) pin.gpus[cluster_.nodes[a.node.index()].name] = a.gpu_mask;
  rec.pin = pin;
  rec.intent = Intent::Start;
  rec.released = false;
  rec.intent_wall = wall_;
  rec.last_retry_wall = 0;
  r.status = JobStatus::Running;
  r.borrowed = s.borrowed;
  r.shared = s.shared;
  r.placement = s.placement;
  r.last_start = now();
  r.speed = 1.0;
  ++counters_.starts;
  ++decision_seq_;
  std::string where;
  for (const auto& [n, m] : pin.gpus)
    where += (where.empty() ? "" : "/") + n + "@" + mask_to_list(m);
  log_.info("start", {{"job", std::to_string(rec.slurm_id)},
                      {"gpus", where},
                      {"borrowed", s.borrowed ? "1" : "0"},
                      {"shared", s.shared ? "1" : "0"}});
  journal("start " + std::to_string(rec.slurm_id) + " " + where + (s.borrowed ? " borrowed" : "") +
          (s.shared ? " shared" : ""));
  try_start(id, j);
}

bool Controller::try_start(JobId id, const JobInfo* j) {
  Rec& rec = recs_[id.index()];
  rec.last_retry_wall = wall_;
  // Not yet pending again (still completing after our requeue): retried next cycle.
  if (!j || j->state != JobState::Pending) return false;
  if (must_wait_for_revocation(rec)) {
    if (!rec.start_deferred) journal("defer_start " + std::to_string(rec.slurm_id));
    rec.start_deferred = true;
    return false;  // retried next cycle
  }
  rec.requeued_from.clear();
  rec.start_deferred = false;
  if (rec.pin.restart != j->restarts) rec.pin.restart = j->restarts;
  CommentFields fields = parse_comment(j->comment);
  write_pin(fields, rec.pin);
  std::string nodes;
  int per_node = 0;
  for (const auto& [n, m] : rec.pin.gpus) {
    nodes += (nodes.empty() ? "" : ",") + n;
    per_node = std::max(per_node, std::popcount(m));
  }
  Update u;
  u.job = rec.slurm_id;
  u.req_nodes = nodes;
  // Jobs that asked Slurm for GPUs keep that request (pinned per node); jobs that declared
  // them in the comment get none from Slurm: the TaskProlog binds DeepShare's GPUs.
  if (parse_tres_gpus(j->tres_per_node) > 0)
    u.tres_per_node = "gres:gpu:" + std::to_string(per_node);
  u.comment = format_comment(fields);
  u.start_now = true;
  if (!api_->update(u) || !api_->release(rec.slurm_id)) {
    ++counters_.failed;
    log_.warn("start_failed",
              {{"job", std::to_string(rec.slurm_id)}, {"error", api_->last_error()}});
    return false;
  }
  // Slurm orders released jobs by priority: keep DeepShare's decision order.
  Update prio;
  prio.job = rec.slurm_id;
  prio.priority = static_cast<std::uint32_t>(std::max<std::int64_t>(1, 2000000000 - decision_seq_));
  api_->update(prio);
  rec.released = true;
  ++counters_.applied;
  return true;
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

void Controller::preempt(JobId id) {
  JobRuntime& r = rt_[id.index()];
  Rec& rec = recs_[id.index()];
  if (r.status != JobStatus::Running) {
    ++counters_.failed;
    log_.error("preempt_not_running", {{"job", std::to_string(rec.slurm_id)}});
    return;
  }
  const bool was_started = rec.intent != Intent::Start || rec.released;
  if (was_started && !api_->requeue_hold(rec.slurm_id)) {
    // e.g. a release that Slurm has not started yet: hold it instead
    if (!api_->hold(rec.slurm_id)) {
      ++counters_.failed;
      log_.warn("preempt_failed",
                {{"job", std::to_string(rec.slurm_id)}, {"error", api_->last_error()}});
    }
  }
  if (was_started) note_requeue(rec);
  r.attained += std::max<Time>(0, now() - r.last_start);
  r.status = JobStatus::Pending;
  r.placement.clear();
  r.borrowed = r.shared = false;
  r.queued_since = now();
  ++r.preemptions;
  rec.intent = Intent::Preempt;
  rec.intent_wall = rec.last_retry_wall = wall_;
  requeued_.push_back(id);
  ++counters_.preemptions;
  ++counters_.applied;
  log_.info("preempt", {{"job", std::to_string(rec.slurm_id)}});
  journal("preempt " + std::to_string(rec.slurm_id));
}

void Controller::reject(const RejectJob& rj) {
  Rec& rec = recs_[rj.job.index()];
  log_.warn("reject", {{"job", std::to_string(rec.slurm_id)}, {"reason", rj.reason}});
  journal("reject " + std::to_string(rec.slurm_id) + " " + rj.reason);
  if (!api_->cancel(rec.slurm_id))
    ++counters_.failed;
  else
    ++counters_.applied;
  rt_[rj.job.index()].status = JobStatus::Rejected;
}

}  // namespace ds::slurm
