#include "baselines/queue_backfill.hpp"

namespace ds {

BackfillIndex::Slot BackfillIndex::slot_of(WaitReason r) {
  switch (r) {
    case WaitReason::NoFit:
      return kNoFit;
    case WaitReason::Fragmented:
      return kFragmented;
    default:
      return kPriority;
  }
}

WaitReason BackfillIndex::reason_of(Slot s) {
  return s == kNoFit ? WaitReason::NoFit
                     : (s == kFragmented ? WaitReason::Fragmented : WaitReason::Priority);
}

std::uint32_t BackfillIndex::find_or_add(const JobSpec& j) {
  const int milli = std::min(j.gpu_milli, kMilliPerGpu);
  for (std::size_t c = 0; c < classes_.size(); ++c)
    if (classes_[c].gpus == j.gpus && classes_[c].milli == milli)
      return static_cast<std::uint32_t>(c);
  classes_.push_back(Class{j.gpus, milli, {}, 0});
  return static_cast<std::uint32_t>(classes_.size() - 1);
}

void BackfillIndex::add(const JobSpec& j, const QueueKey& k) {
  const std::uint32_t c = find_or_add(j);
  class_[j.id] = c;
  slot_[j.id] = kPriority;
  classes_[c].jobs[kPriority].insert(k);
  ++classes_[c].size;
}

void BackfillIndex::erase(const JobSpec& j, const QueueKey& k) {
  Class& cl = classes_[class_[j.id]];
  if (cl.jobs[slot_[j.id]].erase(k) > 0) --cl.size;
}

void BackfillIndex::stated(const JobSpec& j, const QueueKey& k, WaitReason r) {
  const Slot to = slot_of(r);
  const Slot from = static_cast<Slot>(slot_[j.id]);
  if (to == from) return;
  Class& cl = classes_[class_[j.id]];
  auto node = cl.jobs[from].extract(k);
  if (node.empty()) return;  // not queued
  cl.jobs[to].insert(std::move(node));
  slot_[j.id] = to;
}

const QueueKey* BackfillIndex::first_after(std::size_t c, const QueueKey* k) const {
  const QueueKey* best = nullptr;
  for (const auto& set : classes_[c].jobs) {
    if (set.empty()) continue;
    auto it = k ? set.upper_bound(*k) : set.begin();
    if (it != set.end() && (!best || *it < *best)) best = &*it;
  }
  return best;
}

void BackfillIndex::restate(std::size_t c, const QueueKey& from, const QueueKey* to, WaitReason r,
                            std::vector<std::pair<QueueKey, WaitReason>>& notes) {
  Class& cl = classes_[c];
  const Slot target = slot_of(r);
  for (std::uint8_t s = 0; s < kSlots; ++s) {
    if (s == target) continue;
    auto& set = cl.jobs[s];
    auto it = set.lower_bound(from);
    while (it != set.end() && (!to || *it < *to)) {
      const QueueKey k = *it;
      auto node = set.extract(it++);
      cl.jobs[target].insert(std::move(node));
      slot_[k.job] = target;
      notes.emplace_back(k, r);
    }
  }
}

}  // namespace ds
