// Pods grouped into jobs (groups.hpp).
#include "k8s/groups.hpp"

#include <algorithm>
#include <map>

namespace ds::k8s {

std::string group_key(const PodView& p) {
  return p.gang.empty() ? p.uid : "gang:" + p.ns + "/" + p.gang;
}

namespace {

bool live(const PodView& p) { return !p.ended() && !p.terminating; }

// A gang's size and GPUs per pod, from `pods` (which all count); "" or why they disagree.
std::string shape(PodGroup& g, const std::vector<const PodView*>& pods) {
  const PodView& first = *pods.front();
  g.size = first.gang_size;
  g.pod_gpus = first.gpus;
  if (g.size <= 0)
    return std::string("pod ") + first.name + " has no valid annotation " + kGangSizeAnnotation +
           " (a whole number from 1 to " + std::to_string(kMaxGangSize) + ")";
  for (const PodView* p : pods) {
    if (p->gang_size != g.size)
      return "its pods disagree on " + std::string(kGangSizeAnnotation) + ": " + first.name +
             " says " + std::to_string(g.size) + ", " + p->name + " says " +
             (p->gang_size > 0 ? std::to_string(p->gang_size) : std::string("nothing valid"));
    if (p->gpus != g.pod_gpus)
      return "its pods ask for different nvidia.com/gpu: " + first.name + " " +
             std::to_string(g.pod_gpus) + ", " + p->name + " " + std::to_string(p->gpus);
  }
  return {};
}

}  // namespace

std::vector<PodGroup> group_pods(const std::vector<const PodView*>& pods) {
  std::map<std::string, PodGroup> by_key;
  for (const PodView* p : pods) {
    PodGroup& g = by_key[group_key(*p)];
    g.members.push_back(p);
  }
  std::vector<PodGroup> out;
  out.reserve(by_key.size());
  for (auto& [key, g] : by_key) {
    std::sort(g.members.begin(), g.members.end(),
              [](const PodView* a, const PodView* b) { return a->name < b->name; });
    const PodView& first = *g.members.front();
    g.key = key;
    g.ns = first.ns;
    g.gang = !first.gang.empty();
    g.name = g.gang ? first.gang : first.name;
    g.pod_gpus = first.gpus;
    if (g.gang) {
      std::vector<const PodView*> counted;
      for (const PodView* p : g.members)
        if (live(*p)) counted.push_back(p);
      g.invalid = shape(g, counted.empty() ? g.members : counted);
    }
    out.push_back(std::move(g));
  }
  return out;
}

GroupCount count(const PodGroup& g) {
  GroupCount c;
  for (const PodView* p : g.members) {
    if (p->ended()) {
      ++c.ended;
    } else if (p->terminating) {
      c.holding += p->bound();
    } else {
      ++c.live;
      c.live_bound += p->bound();
      c.gated += p->gated;
    }
  }
  return c;
}

driver::Phase group_phase(const PodGroup& g, bool start_in_flight) {
  using driver::Phase;
  if (!g.gang) {
    const PodView& p = *g.members.front();
    if (p.ended()) return Phase::Ended;
    if (p.terminating) return p.bound() ? Phase::Ending : Phase::Ended;
    return p.bound() ? Phase::Running : Phase::Waiting;
  }
  const GroupCount c = count(g);
  if (c.live_bound == 0) {
    if (c.holding > 0) return Phase::Stopping;
    const bool succeeded = !g.members.empty() && std::all_of(g.members.begin(), g.members.end(),
                                                              [](const PodView* p) {
                                                                return p->phase == "Succeeded";
                                                              });
    if (c.live == 0 && succeeded) return Phase::Ended;
    return Phase::Waiting;
  }
  if (c.live_bound == c.live && c.holding == 0) return Phase::Running;
  return start_in_flight ? Phase::Waiting : Phase::Stopping;
}

}  // namespace ds::k8s
