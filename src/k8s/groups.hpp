// Pods grouped into the jobs DeepShare schedules (docs/kubernetes.md §8, "Gangs"): pure
// functions of the pods' views (pods.hpp), no I/O, tested without a server.
//
// A pod is a job of its own (key: its UID), or one pod of a gang: the pods of a namespace that
// carry the label deepshare.io/gang NAME (an indexed Job's pod template, or bare pods) form one
// job of deepshare.io/gang-size pods (key "gang:NS/NAME"), placed all-or-nothing: it becomes a
// candidate once that many of its pods wait, the policy sees one job of size x (each pod's
// nvidia.com/gpu) GPUs, and its pods are bound together. The key outlives the pods: a gang
// evicted and recreated by its Job is the same job (its place in the queue, its restarts).
// Without a label, the pods of an Indexed Job that runs them all together, and the pod of a
// Job of one pod (jobs.hpp), are the gang of their Job: key "job:UID" (the Job's UID: a Job
// deleted and created again under its name is a new job), named "NS/job:NAME"; each work
// item of another Job is a gang of one: key "job:UID#I" (index I) or "job:UID~S" (slot S,
// work_slots.hpp), named "NS/job:NAME#I" or "NS/job:NAME~S".
//
// A gang's phase, from its pods (live = neither ended nor terminating):
//  - every live pod bound, none terminating: Running (pods that ended meanwhile, a Job's
//    completions, hold nothing more);
//  - no live pod bound: Stopping while a terminating pod still holds GPUs, else Waiting;
//  - some live pods bound and others not, or bound ones beside terminating ones: a start being
//    handed over (Waiting) when the driver has one in flight, else a gang that lost a pod
//    (Stopping: the adapter evicts the rest, and the gang starts again as a whole);
//  - no live pod and as many Succeeded as it needs (those of a gang of one: one, beside the
//    failed pods its Job replaced): Ended. Without live pods otherwise (its pods failed or were
//    evicted and deleted, its Job makes replacements): Waiting; the adapter takes it for ended once
//    it has had no live pod for a while (adapter.hpp, kGangAbsenceMs).
#pragma once

#include <deque>
#include <span>
#include <string>
#include <vector>

#include "driver/ports.hpp"
#include "k8s/pods.hpp"

namespace ds::k8s {

// How logs and the journal name a job: "NS/NAME" (a pod of its own), "NS/gang:NAME" (a
// labelled gang) or "NS/job:NAME" (a Job's gang).
inline std::string job_ref(const std::string& ns, bool gang, bool job, const std::string& name) {
  return ns + (job ? "/job:" : gang ? "/gang:" : "/") + name;
}

// A job's pods. Its texts and members point into the pods' views and the Grouping that made
// it: valid while both are (one cycle).
struct PodGroup {
  bool gang = false;
  bool job = false;                         // a gang that is its Job's pods (gang too)
  int size = 1;                             // pods the job needs
  int pod_gpus = 0;                         // nvidia.com/gpu of each of its pods
  std::span<const PodView* const> members;  // ordered by name
  std::string invalid;                      // why the gang can never run as written ("" = it can)
  // The pod's UID, "gang:NS/NAME" or "job:UID" (+ "#I" or "~S": a work item).
  [[nodiscard]] const std::string& key() const { return *key_; }
  [[nodiscard]] const std::string& ns() const { return *ns_; }
  // The pod's name, the gang's or the Job's.
  [[nodiscard]] const std::string& name() const { return *name_; }
  [[nodiscard]] int gpus() const { return size * pod_gpus; }
  // How logs and the journal name it (job_ref).
  [[nodiscard]] std::string ref() const { return job_ref(ns(), gang, job, name()); }

 private:
  friend class Grouping;
  const std::string *key_ = nullptr, *ns_ = nullptr, *name_ = nullptr;
};

// The key of the job a pod belongs to.
std::string group_key(const PodView& p);

// One cycle's pods grouped into jobs, and what the groups point into.
class Grouping {
 public:
  // The pods grouped by key: a gang's size and GPUs per pod are its live pods' (all its
  // pods' when none is live); pods that disagree, or a size that is missing or not a whole
  // number from 1 to kMaxGangSize, make it invalid. The views must outlive the grouping.
  explicit Grouping(const std::vector<const PodView*>& pods);
  Grouping() = default;
  Grouping(const Grouping&) = delete;
  Grouping& operator=(const Grouping&) = delete;
  Grouping(Grouping&&) = default;
  Grouping& operator=(Grouping&&) = default;

  [[nodiscard]] const std::vector<PodGroup>& groups() const { return groups_; }  // by key
  // The group of `key`, or nullptr (a binary search).
  [[nodiscard]] const PodGroup* find(const std::string& key) const;
  // Adds a gang without pods (its pods are gone for a moment), in key order.
  void add_empty(const std::string& key, const std::string& ns, const std::string& name, bool job,
                 int size, int pod_gpus);

 private:
  std::vector<PodGroup> groups_;
  std::vector<const PodView*> members_;  // every group's, contiguous per group
  std::deque<std::string> texts_;        // gangs' keys; the texts of gangs without pods
};

struct GroupCount {
  int live = 0;        // neither ended nor terminating
  int live_bound = 0;  // live and bound
  int holding = 0;     // bound and terminating: they still hold their GPUs
  int ended = 0;       // Succeeded or Failed
  int gated = 0;       // live with scheduling gates
};
GroupCount count(const PodGroup& g);

// The phase the driver sees (above); `start_in_flight`: the driver has decided a start of it
// that is not confirmed yet. A pod of its own keeps a pod's phases: ended; terminating (Ending
// while bound, else Ended); bound (Running); else Waiting.
driver::Phase group_phase(const PodGroup& g, bool start_in_flight);

}  // namespace ds::k8s
