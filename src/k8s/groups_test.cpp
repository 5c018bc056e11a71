// Pods grouped into jobs (groups.hpp) and a gang's phases, without a server.
#include "k8s/groups.hpp"

#include <gtest/gtest.h>

namespace ds::k8s {
namespace {

PodView member(const std::string& name, int gpus = 4, int size = 2) {
  PodView p;
  p.uid = "u-" + name;
  p.ns = "a";
  p.name = name;
  p.gpus = gpus;
  p.gang = "train";
  p.gang_size = size;
  p.controlled = true;
  return p;
}

// The one group of `pods`, kept with its grouping (it points into it).
struct One {
  explicit One(const std::vector<PodView>& pods) : views(pods) {
    std::vector<const PodView*> ptrs;
    for (const auto& p : views) ptrs.push_back(&p);
    grouping = Grouping(ptrs);
    EXPECT_EQ(grouping.groups().size(), 1u);
  }
  const PodGroup& operator*() const { return grouping.groups().front(); }
  const PodGroup* operator->() const { return &grouping.groups().front(); }
  std::vector<PodView> views;
  Grouping grouping;
};

driver::Phase phase(const std::vector<PodView>& pods, bool start_in_flight) {
  return group_phase(*One(pods), start_in_flight);
}

TEST(K8sGroups, PodsOfAGangFormOneJob) {
  PodView solo = member("solo");
  solo.gang.clear();
  std::vector<PodView> pods = {member("train-1"), solo, member("train-0")};
  std::vector<const PodView*> ptrs;
  for (const auto& p : pods) ptrs.push_back(&p);
  const Grouping grouping(ptrs);
  const auto& groups = grouping.groups();
  const PodGroup& g = groups[0];  // "gang:a/train" < "u-solo"
  EXPECT_EQ(g.key(), "gang:a/train");
  EXPECT_EQ(g.ref(), "a/gang:train");
  EXPECT_TRUE(g.gang);
  EXPECT_EQ(g.gpus(), 8);
  ASSERT_EQ(g.members.size(), 2u);
  EXPECT_EQ(g.members[0]->name, "train-0") << "members in name order";
  EXPECT_TRUE(g.invalid.empty());
  EXPECT_EQ(groups[1].key(), "u-solo");
  EXPECT_EQ(groups[1].ref(), "a/solo");
  EXPECT_EQ(groups[1].gpus(), 4);
  EXPECT_EQ(group_key(solo), "u-solo");
}

TEST(K8sGroups, PodsThatDisagreeMakeTheGangInvalid) {
  EXPECT_NE(One({member("t-0"), member("t-1", 2)})->invalid.find("different nvidia.com/gpu"),
            std::string::npos);
  EXPECT_NE(One({member("t-0"), member("t-1", 4, 3)})->invalid.find("disagree"), std::string::npos);
  EXPECT_NE(One({member("t-0", 4, -1)})->invalid.find("no valid annotation"), std::string::npos);
  EXPECT_NE(One({member("t-0", 4, 0)})->invalid.find("no valid annotation"), std::string::npos);
  // An ending pod of an earlier generation does not count while live ones exist.
  PodView old = member("t-9", 2);
  old.terminating = true;
  EXPECT_TRUE(One({member("t-0"), member("t-1"), old})->invalid.empty());
}

TEST(K8sGroups, GangPhases) {
  using driver::Phase;
  PodView a = member("t-0"), b = member("t-1");
  EXPECT_EQ(phase({a}, false), Phase::Waiting) << "incomplete";
  EXPECT_EQ(phase({a, b}, false), Phase::Waiting);
  a.node = "n1";
  EXPECT_EQ(phase({a, b}, true), Phase::Waiting) << "a start half handed over";
  EXPECT_EQ(phase({a, b}, false), Phase::Stopping)
      << "bound beside unbound without a start: the gang lost a pod";
  b.node = "n2";
  EXPECT_EQ(phase({a, b}, false), Phase::Running);
  EXPECT_EQ(phase({a, b}, true), Phase::Running) << "the start is confirmed";
  b.phase = "Succeeded";
  EXPECT_EQ(phase({a, b}, false), Phase::Running) << "one completion";
  b.phase.clear();
  b.terminating = true;
  EXPECT_EQ(phase({a, b}, false), Phase::Stopping) << "one pod evicted";
  a.terminating = true;
  EXPECT_EQ(phase({a, b}, false), Phase::Stopping) << "both still hold GPUs";
  PodView c = member("t-2"), d = member("t-3");
  EXPECT_EQ(phase({a, b, c, d}, false), Phase::Stopping)
      << "replacements wait while the evicted pods hold their GPUs";
  EXPECT_EQ(phase({c, d}, false), Phase::Waiting) << "the evicted pods are gone";
  c.node = d.node = "n1";
  c.phase = "Failed";
  d.phase = "Succeeded";
  EXPECT_EQ(phase({c, d}, false), Phase::Waiting) << "a failed pod: its Job may make a replacement";
  c.phase = "Succeeded";
  EXPECT_EQ(phase({c, d}, false), Phase::Ended);
  // A gang of one (a work item) whose pod failed and whose replacement succeeded: done, while
  // the failed pod is still listed.
  PodView failed = member("w-0", 4, 1), done = member("w-1", 4, 1);
  failed.phase = "Failed";
  EXPECT_EQ(phase({failed}, false), Phase::Waiting) << "its Job may make a replacement";
  done.phase = "Succeeded";
  EXPECT_EQ(phase({failed, done}, false), Phase::Ended);
  done.phase = "Running";
  done.node = "n1";
  EXPECT_EQ(phase({failed, done}, false), Phase::Running);
  // A pod of its own keeps a pod's phases.
  PodView solo = member("solo");
  solo.gang.clear();
  EXPECT_EQ(phase({solo}, false), Phase::Waiting);
  solo.terminating = true;
  EXPECT_EQ(phase({solo}, false), Phase::Ended);
  solo.node = "n1";
  EXPECT_EQ(phase({solo}, false), Phase::Ending);
}

}  // namespace
}  // namespace ds::k8s
