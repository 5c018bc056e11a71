#include "policy/deepshare/deepshare.hpp"

#include <cmath>
#include <string>

#include "model/aux_data.hpp"
#include "model/execution.hpp"
#include "policy/deepshare/policy_impl.hpp"

namespace ds {
namespace deepshare {

DeepSharePolicy::DeepSharePolicy(const PolicyContext& ctx)
    : c_(Config::from(ctx.options)),
      book_(c_, ctx.tenants.size()),
      layout_(ctx),
      prediction_(c_),
      checkpoints_(c_, book_),
      partners_(c_.sharing ? std::optional<Partners>(std::in_place) : std::nullopt),
      runs_(c_, book_, layout_, checkpoints_, partners_ ? &*partners_ : nullptr, tally_),
      lender_(c_, book_, layout_.unowned()),
      assurance_(c_, book_, lender_),
      drains_(c_.time_slicing
                  ? std::optional<Drains>(std::in_place, handle(), ctx.cluster.nodes.size())
                  : std::nullopt),
      colocation_(make_colocation(ctx)),
      reclaimer_(c_.reclaim ? std::optional<Reclaimer>(std::in_place, handle(), lender_)
                            : std::nullopt),
      slicer_(c_.time_slicing ? std::optional<Slicer>(std::in_place, handle()) : std::nullopt),
      twins_(c_.twins && c_.prediction ? std::optional<Twins>(std::in_place) : std::nullopt),
      admission_(handle(), colocation_ ? &*colocation_ : nullptr,
                 reclaimer_ ? &*reclaimer_ : nullptr) {
  book_.set_tree(TenantTree(ctx.tenants));
}

// The interference model learns from measured pairs when the driver has them.
std::optional<Colocation> DeepSharePolicy::make_colocation(const PolicyContext& ctx) {
  if (!c_.sharing) return std::nullopt;
  const ColocationTable* table = ctx.aux && ctx.aux->colocation ? &*ctx.aux->colocation : nullptr;
  auto fit = fit_interference(table);
  if (!fit.model) return std::nullopt;
  return std::optional<Colocation>(std::in_place, handle(), std::move(fit.model), fit.cv_mae,
                                   *partners_, drains_ ? &*drains_ : nullptr);
}

// The cycle: each step in order over one Cycle (deepshare.hpp says what each does).
Decisions DeepSharePolicy::decide(const ClusterSnapshot& s) {
  const bool grew = layout_.sync(s);  // GPUs freed that no job delta explains
  Cycle cy(s, layout_.free(), ++cycles_);
  if (grew) book_.capacity_freed();
  book_.grow(s.jobs.size());
  if (colocation_) colocation_->observe(cy);      // 1. observed speeds of new pairs
  ingest(cy);                                     // 2. the snapshot's deltas
  checkpoints_.collect(cy);                       // 3. the window of cheap victims
  assurance_.update(cy);                          // 4. A_t (cy.assurance)
  admission_.entitled(cy);                        // 5. entitled jobs
  if (colocation_) colocation_->split_pairs(cy);  // 6. pairs beyond their bound
  if (drains_) drains_->run(cy);                  // 7. drains (cy.held)
  admission_.within_quota(cy);                    // 8. other jobs within quota
  lender_.compute(cy);                            // 9. lendable capacity (cy.lent)
  if (c_.borrowing) admission_.borrowed(cy);      // 10. borrowers (cy.borrow_room)
  if (drains_) drains_->start(cy);                // 11. drains begin
  if (slicer_) slicer_->make_room(cy);            // 12. time slicing
  admission_.entitled_freed(cy);                  // 13. freed GPUs to entitled jobs
  if (colocation_) colocation_->share(cy);        // 14. sharing
  if (cy.wake != kNever && cy.wake > s.now) cy.out.wake_at = cy.wake;  // 15. emit
  return std::move(cy.out);
}

void DeepSharePolicy::ingest(Cycle& cy) {
  const ClusterSnapshot& s = cy.s;
  for (JobId id : s.withdrawn) {
    JobState& js = book_.job(id);
    if (js.queued) book_.dequeue(s.jobs[id.index()]);
    js.lost_guarantee = js.run == Run::Guaranteed;
    if (js.run != Run::None) runs_.stopped(s, id);
  }
  for (JobId id : s.adopted) runs_.adopt(s, id, prediction_);
  std::vector<JobId> again;
  for (const auto& f : s.finished) {
    runs_.stopped(s, f.job);
    prediction_.finished(f.job, s.jobs[f.job.index()], f.runtime, again);
  }
  for (JobId id : again)  // predicted blind: again, now that the user's history exists
    if (book_.job(id).queued)
      book_.repredict(s.jobs[id.index()], prediction_.predict(s.jobs[id.index()]));
  for (JobId id : s.requeued) requeued(cy, id);
  for (JobId id : s.arrived) arrived(cy, id);
}

void DeepSharePolicy::requeued(Cycle& cy, JobId id) {
  const ClusterSnapshot& s = cy.s;
  JobState& js = book_.job(id);
  if (js.preempted) {  // our own reclaim: already accounted (and maybe restarted)
    js.preempted = false;
    // Restarted by a decision that was not ours (a driver's policy wrapper): it runs, so it
    // leaves the queue it waits in here.
    if (js.run == Run::None && s.runtime[id.index()].status == JobStatus::Running)
      runs_.adopt(s, id, prediction_);
    return;
  }
  // A run within its tenant's quota that the cluster took away (a node failure, a start the
  // engine did not carry out; an online driver may withdraw the job while it parks it, and
  // present it again) keeps its guarantee: it waits as an entitled job again, by its
  // submission, so it reclaims when due instead of at a borrower's checkpoint (issue #24).
  // DeepShare's own preemptions never get here (returned above), nor does the simulator,
  // whose requeues are all the policy's own: its results are unchanged.
  bool guaranteed = js.lost_guarantee;
  js.lost_guarantee = false;
  if (js.run != Run::None) {  // preempted by someone else (e.g. a node failure)
    guaranteed = js.run == Run::Guaranteed;
    const JobRuntime& r = s.runtime[id.index()];
    const Time ended = r.last_start + (r.attained - js.attained0);
    const double done = js.prog + static_cast<double>(ended - js.prog_at) * js.prog_speed;
    const Time interval = s.tenants[s.jobs[id.index()].tenant.index()].checkpoint_interval;
    runs_.stopped(s, id);
    js.prog = checkpoint_kept(done, interval) -
              static_cast<double>(restart_overhead(s.jobs[id.index()].gpus));
  }
  if (!js.queued) {
    if (guaranteed) js.entitled = book_.entitled_at_submit(s, s.jobs[id.index()]);
    book_.enqueue(s.jobs[id.index()], s.now, s.runtime[id.index()].attained);
  }
  note_wait(cy.out, id, WaitReason::Priority);
}

void DeepSharePolicy::arrived(Cycle& cy, JobId id) {
  const ClusterSnapshot& s = cy.s;
  const JobSpec& j = s.jobs[id.index()];
  const int capacity = model_capacity(*s.cluster, j, layout_.total_gpus());
  if (j.gpus > capacity) {
    cy.out.reject.push_back({id, "needs " + std::to_string(j.gpus) + " GPUs" + model_text(j) +
                                     "; the cluster has " + std::to_string(capacity)});
    return;
  }
  // A driver may reuse the id of a job that left: every part forgets it.
  book_.reset(id);
  checkpoints_.forget(id);
  if (colocation_) colocation_->forget(id);
  if (slicer_) slicer_->forget(id);
  JobState& js = book_.job(id);
  js.predicted = prediction_.predict(j);
  prediction_.predicted_at_submit(id, js.predicted);
  prediction_.arrived(j);
  js.entitled = book_.entitled_at_submit(s, j);  // ClusterState's rule (model/execution.hpp)
  js.submit_entitled = js.entitled;
  book_.enqueue(j, s.now, 0);
  if (twins_ && !js.entitled) {  // its queued twins take its (newer) prediction
    twins_->arrived(j);
    auto waiting = [&](JobId t) { return book_.job(t).queued && !book_.job(t).entitled; };
    auto submit_of = [&](JobId t) { return s.jobs[t.index()].submit; };
    for (JobId t : twins_->earlier(j, waiting, submit_of))
      if (book_.job(t).predicted != js.predicted) book_.repredict(s.jobs[t.index()], js.predicted);
  }
  note_wait(cy.out, id, WaitReason::Priority);
}

void DeepSharePolicy::telemetry(std::span<TenantTelemetry> out) const {
  for (std::size_t t = 0; t < out.size() && t < book_.tenants(); ++t) {
    out[t].assurance = assurance_.value(t);
    out[t].lent_gpus = static_cast<int>(std::lround(lender_.lent(t) / kMilliPerGpu));
    out[t].reserve_gpus = (lender_.of(t).reserve + kMilliPerGpu / 2) / kMilliPerGpu;
  }
}

void DeepSharePolicy::summarize(std::map<std::string, double>& out) const {
  prediction_.summarize(out);
  (colocation_ ? colocation_->summary() : SharingSummary{}).write(out);
  tally_.summarize(out);
  out["cycles"] = static_cast<double>(cycles_);
}

}  // namespace deepshare

std::unique_ptr<Policy> make_deepshare(const PolicyContext& ctx) {
  return std::make_unique<deepshare::DeepSharePolicy>(ctx);
}

const char* deepshare_options() {
  return deepshare::option_keys();
}

}  // namespace ds
