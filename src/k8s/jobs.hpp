// Jobs (batch/v1) as DeepShare reads them for gangs (docs/kubernetes.md §8, "Gangs"): pure
// functions of the API's JSON plus a cache keyed by UID, no I/O, tested without a server.
//
// An Indexed Job whose parallelism equals its completions, N >= 2, runs its N pods together
// (one per index: the shape of distributed training): its pods are one gang of N, placed
// all-or-nothing, without a label of ours (groups.hpp, key "job:UID"). A Job of one pod
// (parallelism = completions = 1, either mode) is a gang of one: its replacements after an
// eviction or a failure are the same job (its place in the queue, its restarts). Every other
// Job (a work queue with parallelism below completions or none, NonIndexed with N >= 2) runs
// work items, one pod each: a job per item, whose replacements after an eviction or a failure
// are the same job too. An Indexed Job's item is its completion index (key "job:UID#I", the
// annotation batch.kubernetes.io/job-completion-index that the Job controller gives the
// replacement too); a NonIndexed Job's pods are interchangeable, so its items are slots that
// a replacement takes over (key "job:UID~S", work_slots.hpp). Labels win: a Job whose pods
// carry deepshare.io/gang (or Kueue's pod group) is the gang they name.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ds::k8s {

using nlohmann::json;

struct JobShape {
  std::string uid, ns, name;
  int gang_size = 0;      // N when its pods are one gang (above), else 0: work items
  bool indexed = false;   // completionMode Indexed: its items are its completion indices
  bool finished = false;  // condition Complete or Failed: it makes no more pods
};

// Reads one Job object; nullopt when it lacks a uid, namespace or name.
std::optional<JobShape> job_shape(const json& job);

// The Job's UID in a key of one of its jobs ("job:UID", "job:UID#I", "job:UID~S"); "" when
// `key` is no Job's.
std::string job_uid_of_key(const std::string& key);

// The Jobs of the last update, by UID.
class JobIndex {
 public:
  // The informer's objects now; an object seen in the last update (the same pointer: the
  // informer stores a new one for each change) is not read again.
  void update(const std::vector<std::shared_ptr<const json>>& jobs);
  // The Job of `uid`, or nullptr when it is not listed.
  [[nodiscard]] const JobShape* find(const std::string& uid) const;
  [[nodiscard]] std::size_t size() const { return jobs_.size(); }

 private:
  struct Cached {
    std::shared_ptr<const json> object;
    JobShape shape;
  };
  std::unordered_map<std::string, Cached> jobs_;
};

}  // namespace ds::k8s
