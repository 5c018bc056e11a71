#include "driver/job_book.hpp"

#include <algorithm>

#include "model/cluster_state.hpp"

namespace ds::driver {

std::optional<JobId> JobBook::find(const std::string& key) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

JobBook::Slot JobBook::add(const std::string& key, const std::string& ref) {
  Slot slot;
  if (!free_ids_.empty() && entries_.size() >= reuse_after_) {
    slot.id = free_ids_.back();  // a compacted slot
    free_ids_.pop_back();
    slot.fresh = false;
  } else {
    slot.id = JobId(static_cast<std::uint32_t>(entries_.size()));
    entries_.emplace_back();
  }
  BookEntry& e = entries_[slot.id.index()];
  e = BookEntry{};
  e.key = key;
  e.ref = ref;
  e.seen = true;
  by_key_[key] = slot.id;
  return slot;
}

void JobBook::assume_start(JobId id, std::int64_t wall, const StartJob& decided) {
  BookEntry& e = entries_[id.index()];
  e.intent = Intent::Start;
  e.handed_over = false;
  e.intent_wall = wall;
  e.retry_wall = 0;
  e.run_placement = decided.placement;
  e.run_borrowed = decided.borrowed;
  e.run_shared = decided.shared;
}

void JobBook::assume_preempt(JobId id, std::int64_t wall) {
  BookEntry& e = entries_[id.index()];
  e.intent = Intent::Preempt;
  e.intent_wall = e.retry_wall = wall;
  e.handed_over = false;
}

void JobBook::handed_over(JobId id, std::int64_t wall) {
  BookEntry& e = entries_[id.index()];
  e.handed_over = true;
  e.handover_wall = wall;
}

void JobBook::forget(JobId id) {
  BookEntry& e = entries_[id.index()];
  e.intent = Intent::None;
  e.handed_over = false;
}

void JobBook::set_run(JobId id, const Placement& p, bool borrowed, bool shared) {
  BookEntry& e = entries_[id.index()];
  e.run_placement = p;
  e.run_borrowed = borrowed;
  e.run_shared = shared;
}

void JobBook::begin_observation() {
  for (auto& e : entries_) e.seen = false;
}

bool JobBook::returns(std::optional<JobId> found, const std::string& key, bool unfinished,
                      const ClusterState& state) const {
  if (!unfinished) return false;
  // Done only: a rejected job is listed pending until the engine has removed it (an adapter
  // never lists it again once it carries the refusal).
  if (found) return state.runtime(*found).status == JobStatus::Done;
  return tombstoned(key);
}

void JobBook::reopen(const std::string& key) {
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    entries_[it->second.index()].vanished = true;  // compacted later without a tombstone
    by_key_.erase(it);
  }
  left_.erase(key);
}

void JobBook::end_observation(const std::unordered_set<std::string>& listed) {
  for (auto it = left_.begin(); it != left_.end();)  // the engine no longer lists them
    it = listed.count(*it) ? std::next(it) : left_.erase(it);
}

std::vector<JobId> JobBook::compact(const ClusterState& state,
                                    const std::vector<JobId>& listed_by_policy, std::int64_t wall) {
  std::vector<std::uint8_t> listed(entries_.size(), 0);  // the policy has not seen it leave yet
  for (JobId id : listed_by_policy) listed[id.index()] = 1;
  open_intents_ = 0;
  next_wake_wall_ = std::numeric_limits<std::int64_t>::max();
  std::vector<JobId> freed;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    BookEntry& e = entries_[i];
    const JobId id(static_cast<std::uint32_t>(i));
    const JobStatus st = state.runtime(id).status;
    if (!e.free && e.intent != Intent::None) ++open_intents_;
    if (!e.free && st == JobStatus::Future && e.wake_wall > wall)
      next_wake_wall_ = std::min(next_wake_wall_, e.wake_wall);
    if (e.free || (st != JobStatus::Done && st != JobStatus::Rejected) || listed[i]) continue;
    if (auto it = by_key_.find(e.key); it != by_key_.end() && it->second == id) by_key_.erase(it);
    if (!e.vanished) left_.insert(e.key);  // the engine may still list it, as ended
    e = BookEntry{};
    e.free = true;
    free_ids_.push_back(id);
    freed.push_back(id);
  }
  return freed;
}

}  // namespace ds::driver
