// Queued jobs by request class and by the waiting reason last stated for them: what lets a
// start loop over a deep queue look at one job per class and at the jobs whose reason
// changes, instead of every queued job (issue #27). Used by OrderedQueues' backfill loop
// (queue.hpp) and Kueue's nomination (kueue.cpp).
//
// Why a class stands for all its jobs: whether a job can be placed depends only on its
// request (GPUs, milli-GPUs, GPU model, node mask) and the free map (place_job), and a quota test
// only on its GPUs (and what `extra` distinguishes: Kueue's priority and preemptibility). So while
// the state stays the same, every job of a class gets the same answer, and the first job of the
// class after a position stands for the rest.
//
// Why only the reasons that change are stated: a note equal to the reason last stated
// changes nothing (ClusterState::note_waits keeps the current stretch), so per class the
// jobs sit in one ordered set per reason last stated, and stating reason r over a range moves
// the jobs of the other sets (each such move is a change the plain loop would make too).
// Notes are returned with their keys. Their order does not matter: the ranges a caller restates
// in one loop are disjoint, so each job is stated at most once, and ClusterState::note_waits
// changes each job's stretch on its own. (Sorting them into queue order had cost 5-6 % of a
// deep queue's run for nothing: issue #27.)
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "policy/policy.hpp"

namespace ds {

// What decides a job's answers in a start loop.
struct RequestClass {
  int gpus = 0;
  int milli = kMilliPerGpu;         // < 1000: a share of one GPU
  int extra = 0;                    // the caller's further distinction (0 if none)
  std::string model;                // the GPU model(s) asked for (JobSpec::gpu_type; empty: any)
  std::vector<std::uint8_t> nodes;  // the node mask (JobSpec::allowed_nodes; empty: any)
  [[nodiscard]] bool constrained() const { return !model.empty() || !nodes.empty(); }
  bool operator==(const RequestClass&) const = default;
};

inline RequestClass request_class(const JobSpec& j, int extra = 0) {
  return {j.gpus, std::min(j.gpu_milli, kMilliPerGpu), extra, j.gpu_type, j.allowed_nodes};
}

template <class Key>
class RequestIndex {
 public:
  // The reasons start loops state for queued jobs (every other counts as Priority: stating
  // Priority again would be a note, stating another one one too).
  enum Slot : std::uint8_t { kPriority, kQuota, kNoFit, kFragmented, kSlots };
  static Slot slot_of(WaitReason r) {
    switch (r) {
      case WaitReason::Quota:
        return kQuota;
      case WaitReason::NoFit:
        return kNoFit;
      case WaitReason::Fragmented:
        return kFragmented;
      default:
        return kPriority;
    }
  }

  struct Class {
    RequestClass req;
    std::array<std::set<Key>, kSlots> jobs;
    std::size_t size = 0;
  };
  using Notes = std::vector<std::pair<Key, WaitReason>>;

  // `id` is queued under `k`, its reason last stated `r`.
  void add(JobId id, const RequestClass& c, const Key& k, WaitReason r) {
    const std::uint32_t cls = find_or_add(c);
    class_[id] = cls;
    slot_[id] = slot_of(r);
    classes_[cls].jobs[slot_[id]].insert(k);
    ++classes_[cls].size;
  }
  void erase(JobId id, const Key& k) {
    Class& cl = classes_[class_[id]];
    if (cl.jobs[slot_[id]].erase(k) > 0) --cl.size;
  }
  // Reason `r` was stated for the queued job `id` (moves it between sets).
  void stated(JobId id, const Key& k, WaitReason r) {
    const Slot to = slot_of(r), from = static_cast<Slot>(slot_[id]);
    if (to == from) return;
    Class& cl = classes_[class_[id]];
    auto node = cl.jobs[from].extract(k);
    if (node.empty()) return;  // not queued
    cl.jobs[to].insert(std::move(node));
    slot_[id] = to;
  }

  [[nodiscard]] std::size_t classes() const { return classes_.size(); }
  [[nodiscard]] const Class& at(std::size_t c) const { return classes_[c]; }
  [[nodiscard]] std::uint32_t class_of(JobId id) const { return class_[id]; }
  // The first job of class c at or after `k` (strictly after when `after`; from the start
  // when `k` is null), skipping those `skip(key)` says to; null when none.
  template <class Skip>
  [[nodiscard]] const Key* first(std::size_t c, const Key* k, bool after, Skip skip) const {
    const Key* best = nullptr;
    for (const auto& set : classes_[c].jobs) {
      if (set.empty()) continue;
      auto it = from(set, k, after);
      while (it != set.end() && skip(*it)) ++it;
      if (it != set.end() && (!best || *it < *best)) best = &*it;
    }
    return best;
  }
  // States `r` for the jobs of class c with key in [from, to) (from null: from the start,
  // to null: to the end) whose reason last stated differs, but those `skip(key)` says to,
  // appending them to `notes`.
  template <class Skip>
  void restate(std::size_t c, const Key* from, const Key* to, WaitReason r, Notes& notes,
               Skip skip) {
    Class& cl = classes_[c];
    const Slot target = slot_of(r);
    auto& into = cl.jobs[target];
    for (std::uint8_t s = 0; s < kSlots; ++s) {
      if (s == target) continue;
      auto& set = cl.jobs[s];
      if (set.empty() || (to && !(*set.begin() < *to))) continue;
      auto it = this->from(set, from, false);
      // The moved keys rise, and in a deep queue they mostly form a run that `into` has no
      // key inside of (a stretch whose reason flips as a whole): each goes right after the
      // one before, where the hint makes the insertion O(1) instead of a descent.
      auto hint = into.end();
      bool hinted = false;
      while (it != set.end() && (!to || *it < *to)) {
        if (skip(*it)) {
          ++it;
          continue;
        }
        notes.emplace_back(*it, r);
        slot_[job_of(*it)] = target;
        auto node = set.extract(it++);
        hint = std::next(hinted ? into.insert(hint, std::move(node))
                                : into.insert(std::move(node)).position);
        hinted = true;
      }
    }
  }

 private:
  // The first key of `set` at or after `k` (after it when `after`; null: the first); the tree
  // is descended only when its first key comes before `k` (scans often start before it).
  static typename std::set<Key>::const_iterator from(const std::set<Key>& set, const Key* k,
                                                     bool after) {
    if (!k || (after ? *k < *set.begin() : !(*set.begin() < *k))) return set.begin();
    return after ? set.upper_bound(*k) : set.lower_bound(*k);
  }
  static typename std::set<Key>::iterator from(std::set<Key>& set, const Key* k, bool after) {
    if (!k || (after ? *k < *set.begin() : !(*set.begin() < *k))) return set.begin();
    return after ? set.upper_bound(*k) : set.lower_bound(*k);
  }
  static JobId job_of(const JobId& k) { return k; }
  template <class K>
  static JobId job_of(const K& k) {
    return k.job;
  }
  std::uint32_t find_or_add(const RequestClass& c) {
    for (std::size_t k = 0; k < classes_.size(); ++k)
      if (classes_[k].req == c) return static_cast<std::uint32_t>(k);
    classes_.push_back(Class{c, {}, 0});
    return static_cast<std::uint32_t>(classes_.size() - 1);
  }

  std::vector<Class> classes_;
  PerJob<std::uint32_t> class_;  // valid while queued
  PerJob<std::uint8_t> slot_;    // the set the job is in (Slot), valid while queued
};

}  // namespace ds
