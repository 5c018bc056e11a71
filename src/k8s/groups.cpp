// Pods grouped into jobs (groups.hpp).
#include "k8s/groups.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace ds::k8s {

std::string group_key(const PodView& p) {
  if (p.job_gang) return "job:" + p.job_uid + p.job_item;
  return p.gang.empty() ? p.uid : "gang:" + p.ns + "/" + p.gang;
}

namespace {

bool live(const PodView& p) {
  return !p.ended() && !p.terminating;
}

// A gang's size and GPUs per pod, from `pods` (which all count); "" or why they disagree.
std::string shape(PodGroup& g, std::span<const PodView* const> pods) {
  const PodView& first = *pods.front();
  g.size = first.gang_size;
  g.pod_gpus = first.gpus;
  if (g.size <= 0)
    return std::string("pod ") + first.name + " has no valid annotation " + first.gang_size_key() +
           " (a whole number from 1 to " + std::to_string(kMaxGangSize) + ")";
  for (const PodView* p : pods) {
    if (p->gang_size != g.size)
      return "its pods disagree on " + std::string(first.gang_size_key()) + ": " + first.name +
             " says " + std::to_string(g.size) + ", " + p->name + " says " +
             (p->gang_size > 0 ? std::to_string(p->gang_size) : std::string("nothing valid"));
    if (p->gpus != g.pod_gpus)
      return "its pods ask for different nvidia.com/gpu: " + first.name + " " +
             std::to_string(g.pod_gpus) + ", " + p->name + " " + std::to_string(p->gpus);
  }
  return {};
}

bool key_less(const PodGroup& g, const std::string& k) {
  return g.key() < k;
}

}  // namespace

Grouping::Grouping(const std::vector<const PodView*>& pods) {
  // (key, pod) ordered by key, then name. A gang's key is made once per pod of a gang; a pod
  // of its own is keyed by its UID, not copied: no allocation per pod.
  using Keyed = std::pair<const std::string*, const PodView*>;
  const auto less = [](const Keyed& a, const Keyed& b) {
    const int c = a.first->compare(*b.first);
    return c != 0 ? c < 0 : a.second->name < b.second->name;
  };
  std::vector<Keyed> own, gangs;
  own.reserve(pods.size());
  for (const PodView* p : pods) {
    if (p->gang.empty())
      own.emplace_back(&p->uid, p);
    else
      gangs.emplace_back(&texts_.emplace_back(group_key(*p)), p);
  }
  // The adapter's pods come ordered by UID: then only the gangs' pods are sorted.
  if (!std::is_sorted(own.begin(), own.end(), less)) std::sort(own.begin(), own.end(), less);
  std::sort(gangs.begin(), gangs.end(), less);
  std::vector<Keyed> keyed;
  keyed.reserve(pods.size());
  std::merge(own.begin(), own.end(), gangs.begin(), gangs.end(), std::back_inserter(keyed), less);
  members_.reserve(keyed.size());
  for (const auto& k : keyed) members_.push_back(k.second);
  groups_.reserve(keyed.size());
  for (std::size_t i = 0; i < keyed.size();) {
    const std::size_t begin = i;
    const std::string& key = *keyed[i].first;
    while (i < keyed.size() && *keyed[i].first == key) ++i;
    PodGroup g;
    const PodView& first = *keyed[begin].second;
    g.key_ = &key;
    g.ns_ = &first.ns;
    g.gang = !first.gang.empty();
    g.job = first.job_gang;
    g.name_ = g.gang ? &first.gang : &first.name;
    g.pod_gpus = first.gpus;
    g.members = std::span<const PodView* const>(members_.data() + begin, i - begin);
    if (g.gang) {
      std::vector<const PodView*> counted;
      for (const PodView* p : g.members)
        if (live(*p)) counted.push_back(p);
      g.invalid = counted.empty() ? shape(g, g.members) : shape(g, counted);
    }
    groups_.push_back(std::move(g));
  }
}

const PodGroup* Grouping::find(const std::string& key) const {
  auto it = std::lower_bound(groups_.begin(), groups_.end(), key, key_less);
  return it != groups_.end() && it->key() == key ? &*it : nullptr;
}

void Grouping::add_empty(const std::string& key, const std::string& ns, const std::string& name,
                         bool job, int size, int pod_gpus) {
  PodGroup g;
  g.key_ = &texts_.emplace_back(key);
  g.ns_ = &texts_.emplace_back(ns);
  g.name_ = &texts_.emplace_back(name);
  g.gang = true;
  g.job = job;
  g.size = size;
  g.pod_gpus = pod_gpus;
  groups_.insert(std::lower_bound(groups_.begin(), groups_.end(), key, key_less), std::move(g));
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
    // Its pods succeeded: all of them, or as many as it needs beside failed ones that their
    // Job replaced (an index or a work item that failed, then succeeded: one is listed of each).
    const auto succeeded = std::count_if(g.members.begin(), g.members.end(),
                                         [](const PodView* p) { return p->phase == "Succeeded"; });
    if (c.live == 0 && succeeded > 0 && succeeded >= g.size) return Phase::Ended;
    return Phase::Waiting;
  }
  if (c.live_bound == c.live && c.holding == 0) return Phase::Running;
  return start_in_flight ? Phase::Waiting : Phase::Stopping;
}

}  // namespace ds::k8s
