#include "policy/placement.hpp"

#include <gtest/gtest.h>

#include <numeric>

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

TEST(Fraction, PacksSharesOntoTheFullestGpuThatFits) {
  Fixture f({0});
  f.gpus[3] = GpuState{1, 600, 0};
  f.free_milli[3] = 400;
  f.gpus[5] = GpuState{1, 300, 0};
  f.free_milli[5] = 700;
  f.node_free[0] = 6;
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

}  // namespace
}  // namespace ds
