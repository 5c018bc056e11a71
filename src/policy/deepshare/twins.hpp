// Twins (`twins=on`): jobs alike in every input of the run-time predictor (tenant, user,
// GPUs, GPU share, workload profile) get the same prediction from it at any one time, so they
// should wait in submit order among themselves. A job's queue key is its predicted GPU time
// when it queued (book.hpp), and the predictor's estimate moves as jobs finish: without this
// a later twin, predicted a little shorter, passes an earlier one, again and again (found on
// the Kubernetes testbed, where a pod's user is its namespace: two of a tenant's 4-GPU jobs
// waited 4,200-6,200 s behind its later ones; docs/results.md, "Why Kueue is ahead").
// So when a job arrives, its prediction becomes that of its queued twins too (they move to
// their new place; with equal keys the queue's order among them is submit order). Cost: one
// re-key per queued twin whose prediction differs, at each arrival, so O(twins) per arrival:
// small where twins are few (the deep-queue sweep's 200k jobs of many users and sizes: 11.3 s
// against 10.9 s without, one run each), quadratic for one user submitting one size in bulk.
// Re-keying only the earliest twins (64 per arrival) cost more than it saved: the twins beyond the
// bound kept their old keys, and the inversions at the bound lengthened Venus x2.0's queue by 61 %
// (docs/deepshare.md, "Switches off by default"). Entries of jobs that left (started, or ids
// reused) are dropped when met.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "model/job.hpp"

namespace ds::deepshare {

class Twins {
 public:
  // `j` arrived and waits as a job that is not entitled.
  void arrived(const JobSpec& j) { classes_[key(j)].insert({j.submit, j.id}); }

  // `j`'s twins that arrived before it, oldest first, for which
  // `waiting(id)` holds (queued, not entitled); entries of jobs that no longer wait, or
  // whose id another job took (`submit_of(id)` differs), are dropped.
  template <class Waiting, class SubmitOf>
  std::vector<JobId> earlier(const JobSpec& j, Waiting waiting, SubmitOf submit_of) {
    std::vector<JobId> out;
    auto it = classes_.find(key(j));
    if (it == classes_.end()) return out;
    auto& set = it->second;
    for (auto e = set.begin(); e != set.end();) {
      const auto [submit, id] = *e;
      if (id == j.id && submit == j.submit) break;  // the twins after it are later
      if (submit_of(id) != submit || !waiting(id)) {
        e = set.erase(e);
        continue;
      }
      out.push_back(id);
      ++e;
    }
    return out;
  }

 private:
  using Key = std::tuple<std::uint32_t, std::uint32_t, int, int, int>;
  static Key key(const JobSpec& j) {
    return {j.tenant.value, j.user.value, j.gpus, j.gpu_milli, j.profile};
  }
  std::map<Key, std::set<std::pair<Time, JobId>>> classes_;
};

}  // namespace ds::deepshare
