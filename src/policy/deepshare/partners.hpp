// The running jobs a pending job may share GPUs with: those alone on their GPUs (with known
// memory), by GPU count, and every such job in the order it became one, so that a job whose
// sharing try failed looks again only at the partners added since (Colocation::try_share).
// Kept by the run transitions (Runs) while sharing is on.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "model/snapshot.hpp"
#include "policy/deepshare/book.hpp"

namespace ds::deepshare {

class Partners {
 public:
  // `j` holds its GPUs alone now (started, adopted, or its partner left).
  void alone(const JobSpec& j) {
    if (j.gpu_memory_mib <= 0) return;  // unknown memory: never shares
    alone_[j.gpus].insert(j.id);
    unlisted_.push_back(j.id);  // listed in added() once it runs (list_running)
  }
  // `id` (of `gpus` GPUs) stopped, or took a partner.
  void not_alone(int gpus, JobId id) { alone_[gpus].erase(id); }
  // Partners that run now are new to every job (a snapshot shows a start a cycle later).
  void list_running(const ClusterSnapshot& s, const Book& book) {
    std::erase_if(unlisted_, [&](JobId id) {
      if (s.runtime[id.index()].status != JobStatus::Running) return book.job(id).run == Run::None;
      added_[s.jobs[id.index()].gpus].push_back(id);
      return true;
    });
  }
  // Jobs of `gpus` GPUs alone on their GPUs (null or empty: none).
  [[nodiscard]] const std::set<JobId>* alone_with(int gpus) const {
    auto it = alone_.find(gpus);
    return it == alone_.end() ? nullptr : &it->second;
  }
  // Jobs of `gpus` GPUs in the order they were listed (repeats possible).
  const std::vector<JobId>& added(int gpus) { return added_[gpus]; }

 private:
  std::map<int, std::set<JobId>> alone_;
  std::map<int, std::vector<JobId>> added_;
  std::vector<JobId> unlisted_;  // partners not running yet
};

}  // namespace ds::deepshare
