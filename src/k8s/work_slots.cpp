// Slots of a NonIndexed Job's work items (work_slots.hpp).
#include "k8s/work_slots.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace ds::k8s {

void WorkSlots::update(const std::vector<const PodView*>& pods, const JobIndex& jobs) {
  // Each Job's pods: first the ones with a slot (it stays theirs), then the new ones.
  std::map<std::string, std::vector<const PodView*>> by_job;
  for (const PodView* p : pods) by_job[p->job_uid].push_back(p);
  std::unordered_map<std::string, int> kept;
  kept.reserve(pods.size());
  for (auto& [uid, listed] : by_job) {
    JobSlots& job = jobs_[uid];
    std::set<int> live;
    std::vector<const PodView*> fresh;
    for (const PodView* p : listed) {
      auto s = slot_.find(p->uid);
      if (s == slot_.end()) {
        fresh.push_back(p);
        continue;
      }
      kept.emplace(p->uid, s->second);
      if (p->phase == "Succeeded") job.open.erase(s->second);
      if (!p->ended() && !p->terminating) live.insert(s->second);
    }
    std::sort(fresh.begin(), fresh.end(), [](const PodView* a, const PodView* b) {
      return std::tie(a->created_s, a->name) < std::tie(b->created_s, b->name);
    });
    for (const PodView* p : fresh) {
      const bool is_live = !p->ended() && !p->terminating;
      int slot = -1;
      if (is_live)
        for (int s : job.open)
          if (!live.count(s)) {
            slot = s;
            break;
          }
      if (slot < 0) {
        slot = job.next++;
        if (p->phase != "Succeeded") job.open.insert(slot);
      }
      if (is_live) live.insert(slot);
      kept.emplace(p->uid, slot);
    }
  }
  slot_.swap(kept);
  std::erase_if(jobs_,
                [&](const auto& j) { return !by_job.count(j.first) && !jobs.find(j.first); });
}

int WorkSlots::slot(const std::string& pod_uid) const {
  auto it = slot_.find(pod_uid);
  return it == slot_.end() ? -1 : it->second;
}

}  // namespace ds::k8s
