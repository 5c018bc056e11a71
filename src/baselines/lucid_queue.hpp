// One Lucid VC's queue (lucid.cpp): jobs in (priority, arrival) order with their request
// inline, and the indexes that let the sharing scan look at what can act instead of every
// queued job (issue #27):
//  - by request class and reason last stated (request_index.hpp);
//  - per class of jobs that may share (<= 8 whole GPUs) and per sharescore, the jobs' GPU
//    memory in queue order (min_treap.hpp): the first job after a position that a given
//    running job could take as partner (its memory leaves room, the scores add up to <= 2,
//    its estimated GPU time is at most twice the partner's) is found in O(log n).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "baselines/min_treap.hpp"
#include "baselines/queue.hpp"
#include "baselines/request_index.hpp"

namespace ds {

class LucidQueue {
 public:
  static constexpr int kMaxShareGpus = 8;  // Lucid pairs only jobs of <= 8 GPUs
  struct Queued {
    int gpus = 0;
    int milli = kMilliPerGpu;
  };
  using Map = std::map<QueueKey, Queued>;

  static QueueKey key(double priority, JobId id) { return {priority, 0, id}; }

  [[nodiscard]] const Map& jobs() const { return jobs_; }
  [[nodiscard]] bool empty() const { return jobs_.empty(); }
  [[nodiscard]] RequestIndex<QueueKey>& index() { return index_; }

  // Queues `j` (the caller states Priority for it); false when it was queued already.
  bool add(const JobSpec& j, double priority, int score) {
    const QueueKey k = key(priority, j.id);
    if (!jobs_.emplace(k, Queued{j.gpus, j.gpu_milli}).second) return false;
    index_.add(j.id, request_class(j), k, WaitReason::Priority);
    if (shares(j)) pairs_[{index_.class_of(j.id), score}].insert(k, j.gpu_memory_mib);
    score_[j.id] = score;
    return true;
  }
  // Takes the job out; false when it was not queued.
  bool erase(const JobSpec& j, double priority) {
    const QueueKey k = key(priority, j.id);
    if (jobs_.erase(k) == 0) return false;
    if (shares(j)) pairs_[{index_.class_of(j.id), score_[j.id]}].erase(k);
    index_.erase(j.id, k);
    return true;
  }
  void stated(const QueueKey& k, WaitReason r) { index_.stated(k.job, k, r); }

  // The first job of class c after `after` (from the start when null) that a running job
  // alone of sharescore `score` could take as partner: job score + `score` <= 2, job
  // priority <= `top`, and `pairs(job)` (Lucid's exact test; the memory bound `room` is
  // checked first, as job memory < room + a margin for rounding).
  template <class Pairs>
  std::optional<QueueKey> first_partner(std::uint32_t c, const QueueKey* after, int score,
                                        double room, double top, Pairs pairs) const {
    std::optional<QueueKey> best;
    for (auto it = pairs_.lower_bound({c, INT32_MIN}); it != pairs_.end() && it->first.first == c;
         ++it) {
      if (it->first.second + score > 2 || it->second.empty()) continue;
      const QueueKey* from = after;
      bool strict = true;
      for (;;) {
        const QueueKey* k = it->second.first_below(from, strict, room + 1e-6);
        if (!k || k->primary > top || (best && !(*k < *best))) break;
        if (pairs(*k)) {
          best = *k;
          break;
        }
        from = k;  // at the margin but not within Lucid's test: look further
        strict = true;
      }
    }
    return best;
  }

 private:
  static bool shares(const JobSpec& j) {
    return j.gpus <= kMaxShareGpus && j.gpu_milli >= kMilliPerGpu;
  }

  Map jobs_;
  RequestIndex<QueueKey> index_;
  std::map<std::pair<std::uint32_t, int>, MinTreap<QueueKey>> pairs_;  // (class, score)
  PerJob<int> score_;
};

}  // namespace ds
