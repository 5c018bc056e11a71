// The job book of an online driver: which engine job each JobId stands for, and what the
// driver has decided for it that the engine has not shown yet (an intent). It is the
// assume / confirm / forget cache of the Kubernetes scheduler (its cache's AssumePod,
// FinishBinding, ForgetPod and the expiry of assumed pods), for starts and preemptions:
//  - assume: a decision changes the model (ClusterState) at once and is recorded here as an
//    intent (assume_start / assume_preempt), with the wall time it was made;
//  - hand-over: a start is handed to the engine (released, bound) only when the engine can
//    hold it; handed_over() records when;
//  - confirm: the intent is cleared when the engine shows its effect (confirm());
//  - forget: an intent the engine has not carried out in time is dropped by the reconciler
//    (the start rolled back, the preemption counted as failed; forget()).
// It knows nothing of any engine: keys and names are the engine's strings.
//
// Ids and memory: a JobId is the index of a slot. A job that left (done, withdrawn,
// rejected) and whose leaving the policy has seen gives its slot back (compact()); the slot
// is reused for a later job once `reuse_after` slots exist (policy contract 1: ids are not
// arrival order), so memory follows the jobs the engine lists, not every job ever seen. A
// compacted job the engine still lists (as ended) leaves a tombstone, so that it is never
// taken for a new job, even from a late duplicate of an older listing.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/types.hpp"
#include "model/snapshot.hpp"

namespace ds {
class ClusterState;
}

namespace ds::driver {

enum class Intent : std::uint8_t { None, Start, Preempt };

struct BookEntry {
  std::string key;
  std::string ref;
  Intent intent = Intent::None;
  bool handed_over = false;        // Start: the engine has it (released, bound)
  std::int64_t intent_wall = 0;    // wall ms the intent was made
  std::int64_t handover_wall = 0;  // wall ms it was handed over
  std::int64_t retry_wall = 0;     // wall ms of the last re-issued action
  // The current run as the driver decided or adopted it (a failed preemption runs on so).
  Placement run_placement;
  bool run_borrowed = false;
  bool run_shared = false;
  std::int64_t wake_wall = 0;  // Waiting: the engine lets it run by itself then (0: never)
  bool seen = false;           // listed in the current observation
  bool free = false;           // a compacted slot, waiting for reuse
  bool vanished = false;       // left because the engine no longer listed it
};

class JobBook {
 public:
  // The job with this key, if the book has it.
  [[nodiscard]] std::optional<JobId> find(const std::string& key) const;
  // A slot for a new job: a compacted one once `reuse_after` slots exist, else a new one
  // (`fresh` says which: a fresh slot has the next id, the state appends a job for it).
  struct Slot {
    JobId id;
    bool fresh = true;
  };
  Slot add(const std::string& key, const std::string& ref);
  [[nodiscard]] BookEntry& operator[](JobId id) { return entries_[id.index()]; }
  [[nodiscard]] const BookEntry& operator[](JobId id) const { return entries_[id.index()]; }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }
  [[nodiscard]] bool known(JobId id) const {
    return id.valid() && id.index() < entries_.size() && !entries_[id.index()].free;
  }
  void set_reuse_after(std::size_t slots) { reuse_after_ = slots; }

  // --- intents ---
  void assume_start(JobId id, std::int64_t wall, const StartJob& decided);
  void assume_preempt(JobId id, std::int64_t wall);
  void handed_over(JobId id, std::int64_t wall);
  void confirm(JobId id) { entries_[id.index()].intent = Intent::None; }
  // Drops the intent; the caller undoes its effect on the model.
  void forget(JobId id);
  // The run as adopted (found running, or kept after a failed preemption).
  void set_run(JobId id, const Placement& p, bool borrowed, bool shared);

  // --- observations ---
  // Before an observation is folded in: nothing is seen yet.
  void begin_observation();
  // A compacted job the engine still lists: never a new job.
  [[nodiscard]] bool tombstoned(const std::string& key) const { return left_.count(key) != 0; }
  // A job that left (done or withdrawn, in the book or as a tombstone) and that the
  // engine lists `unfinished` again (Slurm: its user's requeue of the finished job).
  [[nodiscard]] bool returns(const std::string& key, bool unfinished,
                             const ClusterState& state) const {
    return returns(find(key), key, unfinished, state);
  }
  // The same, with what find(key) gave.
  [[nodiscard]] bool returns(std::optional<JobId> found, const std::string& key, bool unfinished,
                             const ClusterState& state) const;
  // Before such a job is added again: its key no longer names the old slot (which leaves
  // without a tombstone) nor a tombstone.
  void reopen(const std::string& key);
  // After it: tombstones of keys the engine no longer lists are dropped (`listed`: the
  // tombstoned keys it listed).
  void end_observation(const std::unordered_set<std::string>& listed);

  // Gives back the slots of jobs that have left and whose leaving the policy has seen
  // (`listed_by_policy`: ids the next snapshot still lists); returns them, so that the state
  // and the engine forget them too.
  std::vector<JobId> compact(const ClusterState& state, const std::vector<JobId>& listed_by_policy,
                             std::int64_t wall);
  // As of the last compact(): starts and preemptions in flight, and the earliest wake time of
  // a job that waits outside the policy's sight (max: none).
  [[nodiscard]] int open_intents() const { return open_intents_; }
  [[nodiscard]] std::int64_t next_wake_wall() const { return next_wake_wall_; }

 private:
  std::vector<BookEntry> entries_;
  std::unordered_map<std::string, JobId> by_key_;
  std::unordered_set<std::string> left_;
  std::vector<JobId> free_ids_;
  std::size_t reuse_after_ = 4096;
  int open_intents_ = 0;
  std::int64_t next_wake_wall_ = std::numeric_limits<std::int64_t>::max();
};

}  // namespace ds::driver
