#include "policy/placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/rng.hpp"
#include "model/testing.hpp"

namespace ds {
namespace {

using Fixture = testing::GpuCluster;

int total(const Placement& p) {
  return std::accumulate(p.begin(), p.end(), 0,
                         [](int a, const NodeAlloc& x) { return a + x.gpus(); });
}

TEST(Consolidate, SmallJobsGoToTheFullestNodeThatFits) {
  Fixture f({6, 2, 5, 0});  // free: 2, 6, 3, 8
  FreeMap free(f.snapshot());
  auto p = place_consolidate(free, f.ids, 3);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ(p->front().node.index(), 2u);       // 3 free: the tightest fit
  EXPECT_EQ(p->front().gpu_mask, 0b11100000u);  // its lowest free GPUs
  auto q = place_consolidate(free, f.ids, 2);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->front().node.index(), 0u);
}

TEST(Consolidate, TiesGoToTheFirstNodeInOrder) {
  Fixture f({4, 4, 4});
  FreeMap free(f.snapshot());
  auto p = place_consolidate(free, f.ids, 4);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->front().node.index(), 0u);
}

TEST(Consolidate, LargeJobsNeedWholeFreeNodes) {
  Fixture f({0, 1, 0, 0});
  FreeMap free(f.snapshot());
  auto p = place_consolidate(free, f.ids, 16);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ(p->at(0).node.index(), 0u);
  EXPECT_EQ(p->at(1).node.index(), 2u);
  EXPECT_FALSE(place_consolidate(free, f.ids, 32));  // only 3 whole nodes, 31 free GPUs
}

TEST(Consolidate, RemainderTakesASpareWholeNodeBeforeAPartialOne) {
  Fixture f({0, 3, 0});
  FreeMap free(f.snapshot());
  auto p = place_consolidate(free, f.ids, 12);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ(p->at(0).node.index(), 0u);
  EXPECT_EQ(p->at(1).node.index(), 2u);  // as Lucid: the next wholly free node
  EXPECT_EQ(total(*p), 12);
}

TEST(Consolidate, RemainderOnTheNodeWithMostFreeGpus) {
  Fixture f({0, 6, 3, 3});  // free 8, 2, 5, 5
  FreeMap free(f.snapshot());
  auto p = place_consolidate(free, f.ids, 13);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ(p->at(1).node.index(), 2u);
  EXPECT_FALSE(place_consolidate(free, f.ids, 14));  // remainder 6 > 5
}

TEST(Consolidate, FailsWhenTotalFreeIsTooSmall) {
  Fixture f({7, 7});
  FreeMap free(f.snapshot());
  EXPECT_FALSE(place_consolidate(free, f.ids, 3));
  EXPECT_TRUE(place_consolidate(free, f.ids, 1));
}

// Idle nodes of the given sizes.
struct Sized : Fixture {
  explicit Sized(const std::vector<int>& sizes) : Fixture(Fixture::Sizes{sizes}) {}
};

// Issue #26 item 1: the first candidate's size used to decide, so a 6-GPU job on 4- and
// 2-GPU nodes was never placed, and a 4-GPU job on a 2-GPU-first list took two small nodes.
TEST(ConsolidateMixedSizes, SixGpusOnAFourAndATwoGpuNode) {
  Sized c({4, 2});
  FreeMap free(c.snapshot());
  const auto p = place_consolidate(free, c.ids, 6);
  ASSERT_TRUE(p);
  EXPECT_EQ(total(*p), 6);
  EXPECT_EQ(p->size(), 2u);
  const auto set = free.add_set(c.ids);
  EXPECT_EQ(place_consolidate(free, set, 6), p);
}

TEST(ConsolidateMixedSizes, AJobThatFitsOneNodeTakesOneNode) {
  Sized c({2, 2, 8, 4});
  FreeMap free(c.snapshot());
  const auto p = place_consolidate(free, c.ids, 4);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ(p->front().node.index(), 3u);  // best fit: the 4-GPU node
  const auto q = place_consolidate(free, c.ids, 8);
  ASSERT_TRUE(q);
  ASSERT_EQ(q->size(), 1u);
  EXPECT_EQ(q->front().node.index(), 2u);
}

TEST(ConsolidateMixedSizes, LargestWholeNodesFirstThenTheSmallestSpare) {
  Sized c({2, 8, 4, 8});
  FreeMap free(c.snapshot());
  const auto p = place_consolidate(free, c.ids, 10);  // 8 + 2: the first 8, then the 2-GPU node
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ(p->at(0).node.index(), 1u);
  EXPECT_EQ(p->at(1).node.index(), 0u);
  const auto q = place_consolidate(free, c.ids, 11);  // 8 + 2, the rest (1) on the 4-GPU node
  ASSERT_TRUE(q);
  ASSERT_EQ(q->size(), 3u);
  EXPECT_EQ(q->at(2).node.index(), 2u);
  EXPECT_EQ(total(*q), 11);
}

// On an idle cluster of random node sizes, every job of 1..all GPUs is placed, the indexed
// set and the span agree, and a placement uses each node at most once and only free GPUs.
TEST(ConsolidateMixedSizes, AnIdleClusterPlacesEveryJobItHasTheGpusFor) {
  for (int round = 0; round < 200; ++round) {
    Rng rng(static_cast<std::uint64_t>(round) + 7);
    std::vector<int> sizes;
    const int nodes = 1 + static_cast<int>(rng.below(8));
    for (int n = 0; n < nodes; ++n)
      sizes.push_back(std::vector<int>{1, 2, 3, 4, 6, 8, 16}[rng.below(7)]);
    Sized c(sizes);
    FreeMap free(c.snapshot());
    const auto set = free.add_set(c.ids);
    for (int want = 1; want <= c.cluster.total_gpus(); ++want) {
      const auto p = place_consolidate(free, c.ids, want);
      ASSERT_TRUE(p) << "round " << round << ": " << want << " GPUs";
      EXPECT_EQ(total(*p), want);
      EXPECT_EQ(place_consolidate(free, set, want), p);
      std::vector<std::uint32_t> used;
      for (const auto& a : *p) used.push_back(a.node.index());
      std::sort(used.begin(), used.end());
      EXPECT_EQ(std::adjacent_find(used.begin(), used.end()), used.end());
    }
    EXPECT_FALSE(place_consolidate(free, c.ids, c.cluster.total_gpus() + 1));
  }
}

TEST(FreeMap, TakeAndGiveAreInverse) {
  Fixture f({0, 0});
  FreeMap free(f.snapshot());
  auto p = place_consolidate(free, f.ids, 8);
  ASSERT_TRUE(p);
  free.take(*p, 1000);
  EXPECT_EQ(free.total_free_gpus(f.ids), 8);
  free.give(*p, 1000);
  EXPECT_EQ(free.total_free_gpus(f.ids), 16);
}

// A trial changes the map as give/take do and its undo leaves the map exactly as before:
// free shares, whole-GPU counts, node sets, the change log, and which nodes the next sync
// copies again (those this map changed outside the trial only).
TEST(FreeMap, TrialIsUndoneExactly) {
  Fixture f({0, 0, 0});
  f.occupy(0, 0b1);
  ClusterSnapshot s = f.snapshot();
  s.gpu_source = 7;
  s.gpu_epoch = 1;
  FreeMap free;
  free.sync(s);
  const auto set = free.add_set(f.ids);
  free.take({NodeAlloc{NodeId(1), 0b11}}, 1000);  // outside the trial: node 1 is dirty
  std::vector<NodeId> log;
  free.log_changes(&log);
  auto state = [&] {
    std::vector<int> v;
    for (int g = 0; g < 24; ++g) v.push_back(free.free_milli(g));
    for (NodeId n : f.ids) v.push_back(free.free_gpus(n));
    v.push_back(free.set_free_gpus(set));
    v.push_back(free.total_free_gpus());
    v.push_back(free.set_largest_fit(set).value_or(-1));
    return v;
  };
  const auto before = state();
  const Placement freed{NodeAlloc{NodeId(0), 0b1}}, half{NodeAlloc{NodeId(2), 0b110}};
  {
    FreeMap::Trial trial(free);
    trial.give(freed, 1000);
    trial.take(half, 500);
    trial.take(freed, 1000);
    trial.give(freed, 1000);
    EXPECT_EQ(free.free_gpus(NodeId(0)), 8);
    EXPECT_EQ(free.free_milli(17), 500);
    EXPECT_EQ(free.set_free_gpus(set), 20);
    EXPECT_FALSE(log.empty());
  }  // undone here
  EXPECT_EQ(state(), before);
  EXPECT_TRUE(log.empty());
  {
    FreeMap::Trial trial(free);
    trial.take(half, 1000);
    trial.undo();
    EXPECT_EQ(state(), before);
    trial.give(freed, 1000);  // usable again after an undo
    EXPECT_EQ(free.free_gpus(NodeId(0)), 8);
  }
  EXPECT_EQ(state(), before);
  // The next sync copies node 1 again (this map's own take) but not nodes 0 and 2.
  s.gpu_epoch = 2;
  s.changed_nodes = {};
  free.sync(s);
  EXPECT_EQ(log, std::vector<NodeId>{NodeId(1)});
  EXPECT_EQ(free.free_gpus(NodeId(1)), 8);
  free.log_changes(nullptr);
}

TEST(Fraction, PacksSharesOntoTheFullestGpuThatFits) {
  Fixture f({0});
  f.occupy_share(0, 3, 600);
  f.occupy_share(0, 5, 300);
  FreeMap free(f.snapshot());
  auto p = place_fraction(free, f.ids, 400);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->front().gpu_mask, 1u << 3);
  auto q = place_fraction(free, f.ids, 500);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->front().gpu_mask, 1u << 5);
  free.take(*q, 500);
  EXPECT_EQ(free.free_gpus(NodeId(0)), 6);
}

// The indexed placement (a registered set) gives exactly the span version's placement over
// the same nodes, through random takes and gives, on uniform and mixed node sizes.
TEST(NodeSet, IndexedPlacementEqualsTheSpanRule) {
  for (int round = 0; round < 40; ++round) {
    Rng rng(static_cast<std::uint64_t>(round) + 1);
    const bool mixed = round % 4 == 3;
    Cluster c;
    const int nodes = 1 + static_cast<int>(rng.below(round < 20 ? 12 : 200));
    for (int n = 0; n < nodes; ++n)
      c.add_nodes(1, mixed ? 4 + 4 * static_cast<int>(rng.below(2)) : 8, 24 * 1024, "", TenantId());
    std::vector<GpuState> gpus(static_cast<std::size_t>(c.total_gpus()));
    std::vector<std::int16_t> milli(gpus.size(), 1000);
    std::vector<std::int32_t> node_free;
    for (const Node& n : c.nodes) node_free.push_back(n.gpus);
    ClusterSnapshot s;
    s.cluster = &c;
    s.gpus = gpus;
    s.gpu_free_milli = milli;
    s.node_free_gpus = node_free;
    FreeMap free(s);
    // A random subset in ascending order, and the whole cluster.
    std::vector<NodeId> subset, all;
    for (const Node& n : c.nodes) {
      all.push_back(n.id);
      if (rng.below(3) != 0) subset.push_back(n.id);
    }
    const auto set_all = free.add_set(all);
    const auto set_sub = free.add_set(subset);
    std::vector<std::pair<Placement, int>> held;
    for (int step = 0; step < 400; ++step) {
      if (!held.empty() && rng.below(3) == 0) {
        const auto k = static_cast<std::size_t>(rng.below(held.size()));
        free.give(held[k].first, 1000);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
        continue;
      }
      const int want = 1 + static_cast<int>(rng.below(rng.below(4) == 0 ? 40 : 8));
      for (auto [set, span] : {std::pair{set_all, std::span<const NodeId>(all)},
                               std::pair{set_sub, std::span<const NodeId>(subset)}}) {
        const auto a = place_consolidate(free, span, want);
        const auto b = place_consolidate(free, set, want);
        ASSERT_EQ(a.has_value(), b.has_value()) << "round " << round << " step " << step;
        if (a) {
          ASSERT_EQ(*a, *b) << "round " << round << " step " << step;
        }
        ASSERT_EQ(free.set_free_gpus(set), free.total_free_gpus(span));
        if (auto largest = free.set_largest_fit(set)) {
          EXPECT_EQ(a.has_value(), want <= *largest) << "round " << round << " step " << step;
        }
      }
      if (auto p = place_consolidate(free, set_all, want)) {
        free.take(*p, 1000);
        held.emplace_back(*p, want);
      }
      ASSERT_EQ(free.total_free_gpus(), free.total_free_gpus(all));
    }
    // Membership changes keep the index exact.
    if (!subset.empty()) {
      const NodeId gone = subset[subset.size() / 2];
      free.set_erase(set_sub, gone);
      std::erase(subset, gone);
      EXPECT_EQ(free.set_free_gpus(set_sub), free.total_free_gpus(subset));
      free.set_insert(set_sub, gone);
      subset.insert(std::lower_bound(subset.begin(), subset.end(), gone), gone);
      EXPECT_EQ(free.set_free_gpus(set_sub), free.total_free_gpus(subset));
      for (int want : {1, 3, 8, 12, 20})
        EXPECT_EQ(place_consolidate(free, set_sub, want),
                  place_consolidate(free, std::span<const NodeId>(subset), want));
    }
  }
}

// sync() follows a snapshot's changed nodes, and falls back to a full copy for a snapshot
// without deltas.
TEST(FreeMap, SyncCopiesChangedNodesOnly) {
  Fixture f({0, 0, 0});
  ClusterSnapshot s = f.snapshot();
  s.gpu_source = 7;
  s.gpu_epoch = 1;
  FreeMap free;
  free.sync(s);
  const auto set = free.add_set(f.ids);
  EXPECT_EQ(free.set_free_gpus(set), 24);
  // The driver starts a job on node 1 (this map took it too) and another appears on node 2.
  free.take({NodeAlloc{NodeId(1), 0b11}}, 1000);
  f.occupy(1, 0b11);
  f.occupy(2, 0b1111);
  s = f.snapshot();
  s.gpu_source = 7;
  s.gpu_epoch = 2;
  const std::vector<NodeId> changed{NodeId(2)};
  s.changed_nodes = changed;
  free.sync(s);
  EXPECT_EQ(free.free_gpus(NodeId(1)), 6);
  EXPECT_EQ(free.free_gpus(NodeId(2)), 4);
  EXPECT_EQ(free.set_free_gpus(set), 18);
  EXPECT_EQ(free.total_free_gpus(), 18);
  // A take this map made that the driver never applied is undone by the next sync.
  free.take({NodeAlloc{NodeId(0), 0b1}}, 1000);
  s.gpu_epoch = 3;
  s.changed_nodes = {};
  free.sync(s);
  EXPECT_EQ(free.free_gpus(NodeId(0)), 8);
  EXPECT_EQ(free.set_free_gpus(set), 18);
}

// growths() counts the syncs whose snapshot shows a node with more free GPUs than the
// previous snapshot (GPUs freed outside the policy's own bookkeeping), not the undoing of
// the map's own takes.
TEST(FreeMap, GrowthsCountCapacityTheSnapshotsGainedOnly) {
  Fixture f({0, 0, 0});
  auto snap = [&](std::uint64_t epoch, const std::vector<NodeId>& changed) {
    ClusterSnapshot s = f.snapshot();
    s.gpu_source = 7;
    s.gpu_epoch = epoch;
    s.changed_nodes = changed;
    return s;
  };
  FreeMap free;
  free.sync(snap(1, {}));
  EXPECT_EQ(free.growths(), 1u);  // a full copy
  free.take({NodeAlloc{NodeId(0), 0b1}}, 1000);
  free.sync(snap(2, {}));  // the take was not applied: undone, not a growth
  EXPECT_EQ(free.growths(), 1u);
  const std::size_t held = f.occupy(2, 0b1111);  // GPUs held outside the policy
  const std::vector<NodeId> two{NodeId(2)};
  free.sync(snap(3, two));
  EXPECT_EQ(free.growths(), 1u);
  f.release(held);  // ... given back
  free.sync(snap(4, two));
  EXPECT_EQ(free.growths(), 2u);
  EXPECT_EQ(free.free_gpus(NodeId(2)), 8);
}

}  // namespace
}  // namespace ds
