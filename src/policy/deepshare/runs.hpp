// Starting, stopping and preempting DeepShare's jobs: the transitions that change several
// parts at once (the book's queues and accounting, the checkpoint heap, the sharing partners,
// the cycle's free capacity and decisions), written once so that every step that starts or
// preempts a job does it the same way; and what a running job is worth as a victim.
//
// A preempted job goes back to its queue with the progress its last checkpoint kept minus the
// restart overhead (the simulator's and a real job's rule); a sharing pair's GPUs free only
// when both leave, the joiner (which holds none of its own) first.
#pragma once

#include <optional>

#include "policy/deepshare/book.hpp"
#include "policy/deepshare/checkpoints.hpp"
#include "policy/deepshare/cycle.hpp"
#include "policy/deepshare/layout.hpp"
#include "policy/deepshare/partners.hpp"
#include "policy/deepshare/prediction.hpp"
#include "policy/deepshare/reclaim.hpp"
#include "policy/deepshare/sharing.hpp"
#include "policy/deepshare/tally.hpp"

namespace ds::deepshare {

class Runs {
 public:
  // `partners`: null while sharing is off.
  Runs(const Config& c, Book& book, const Layout& layout, Checkpoints& checkpoints,
       Partners* partners, Tally& tally)
      : c_(c),
        book_(book),
        layout_(layout),
        checkpoints_(checkpoints),
        partners_(partners),
        tally_(tally) {}

  // `j` starts on `p`, guaranteed or borrowed.
  void start(Cycle& cy, const JobSpec& j, Placement p, Run run);
  // `j` joins the running job `c.partner` on its GPUs (MPS); its speed and its partner's
  // are the model's divided by `scale` until observed.
  void join(Cycle& cy, const JobSpec& j, const ShareChoice& c, double scale, bool quota_counted);
  // `id` stopped running (finished, withdrawn or requeued): its accounting is released; its
  // partner runs alone again (and is accounted like any job that holds its GPUs).
  void stopped(const ClusterSnapshot& s, JobId id);
  // This policy preempts `id`: its GPUs return to the cycle's free map, its accounting and
  // progress estimate follow, and it goes back to its queue.
  void preempt(Cycle& cy, JobId id);
  void preempt_with_partner(Cycle& cy, JobId id);  // a pair's joiner first
  // A running job this policy object did not start (a restarted controller), accounted as
  // its runtime flags say; a shared one holds no GPUs of its own. Jobs found on the same
  // GPUs are partners (so that neither is a victim whose GPUs would not free).
  void adopt(const ClusterSnapshot& s, JobId id, const Prediction& prediction);

  // A running job as a reclaim victim, with its sharing partner if any (their GPUs free only
  // together); none when it or its partner cannot go in this cycle.
  [[nodiscard]] std::optional<Victim> as_victim(const ClusterSnapshot& s, JobId id) const;
  // pair_victims: may the host `id` of a sharing pair be preempted with its joiner now (the
  // joiner is running, preemptible, not preempted already, and would lose at most
  // `lost_share` of its checkpoint interval)? False when pair_victims is off.
  [[nodiscard]] bool pair_victim(const ClusterSnapshot& s, JobId id, double lost_share) const;

 private:
  void alone(const JobSpec& j) {
    if (partners_) partners_->alone(j);
  }
  void not_alone(int gpus, JobId id) {
    if (partners_) partners_->not_alone(gpus, id);
  }

  const Config& c_;
  Book& book_;
  const Layout& layout_;
  Checkpoints& checkpoints_;
  Partners* partners_;
  Tally& tally_;
};

}  // namespace ds::deepshare
