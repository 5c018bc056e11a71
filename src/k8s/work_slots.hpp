// The work items of a NonIndexed Job that is no gang (jobs.hpp; docs/kubernetes.md §8,
// "Work-queue Jobs"): pure state of the pods' views, no I/O, tested without a server.
//
// Such a Job runs up to `parallelism` pods at a time, each one item of work, and makes a
// replacement when one fails or is evicted. Its pods carry no index, so DeepShare gives each
// pod a slot, a number within its Job, and a replacement takes over a slot its predecessor
// left: the item is the same job to the policy (key "job:UID~S": its place in the queue and
// its restarts are kept), as an Indexed Job's item is by its completion index.
//  - a slot is open until a pod of it Succeeded (that item is done: the Job's next pod is a
//    new item) and free while open with no live pod (neither ended nor terminating);
//  - a pod seen for the first time takes, if it is live, the lowest free slot of its Job
//    (pods in creation order, then by name), else a new one (the Job's next number);
//  - a pod keeps its slot while it is listed; a Job's slots are forgotten once none of its
//    pods is listed and the Job is not listed either.
// Slots live in the scheduler's memory: a restarted scheduler numbers the pods anew.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "k8s/jobs.hpp"
#include "k8s/pods.hpp"

namespace ds::k8s {

class WorkSlots {
 public:
  // This cycle's pods of such Jobs (PodView::job_uid set, each listed once); `jobs`: the
  // listed Jobs. Afterwards slot() answers for each of them.
  void update(const std::vector<const PodView*>& pods, const JobIndex& jobs);
  // The slot of a pod of the last update (-1: none).
  [[nodiscard]] int slot(const std::string& pod_uid) const;
  [[nodiscard]] std::size_t jobs() const { return jobs_.size(); }

 private:
  struct JobSlots {
    int next = 0;        // the number the next new slot gets
    std::set<int> open;  // slots no pod of which Succeeded
  };
  std::unordered_map<std::string, JobSlots> jobs_;  // by the Job's UID
  std::unordered_map<std::string, int> slot_;       // pod UID -> slot, this cycle's pods
};

}  // namespace ds::k8s
