#include "model/tenant_tree.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "model/cluster.hpp"

namespace ds {
namespace {

// name, parent index (-1: top level), configured quota (-1: none), weight
struct T {
  const char* name;
  int parent;
  int quota;
  double weight = 1;
};

std::vector<Tenant> make(std::initializer_list<T> list) {
  std::vector<Tenant> out;
  for (const T& t : list) {
    Tenant x;
    x.id = TenantId(static_cast<std::uint32_t>(out.size()));
    x.name = t.name;
    if (t.parent >= 0) x.parent = TenantId(static_cast<std::uint32_t>(t.parent));
    x.tree_quota_gpus = t.quota;
    x.quota_gpus = std::max(0, t.quota);
    x.weight = t.weight;
    out.push_back(x);
  }
  return out;
}

TEST(TenantTree, FlatTenantsAreUntouched) {
  auto ts = make({{"a", -1, 8}, {"b", -1, 4}});
  ts[0].quota_gpus = 7;  // a flat tenant's quota is its own, whatever tree_quota says
  EXPECT_TRUE(resolve_tenant_tree(ts, 16).empty());
  EXPECT_EQ(ts[0].quota_gpus, 7);
  EXPECT_EQ(ts[1].quota_gpus, 4);
  const TenantTree tree(ts);
  EXPECT_TRUE(tree.flat());
  EXPECT_TRUE(tree.may_reclaim(0, 1, std::vector<std::int64_t>{0, 99000}));
  EXPECT_EQ(tree.inside_rank(1, std::vector<std::int64_t>{0, 0}), 0);
}

TEST(TenantTree, ChildrenWithinTheParentKeepTheirQuotasAndTheParentTheRest) {
  auto ts = make({{"dept", -1, 12}, {"nlp", 0, 4}, {"vision", 0, 6}});
  EXPECT_TRUE(resolve_tenant_tree(ts, 16).empty());
  EXPECT_EQ(ts[0].quota_gpus, 2);  // its own jobs: what the children leave
  EXPECT_EQ(ts[1].quota_gpus, 4);
  EXPECT_EQ(ts[2].quota_gpus, 6);
  EXPECT_EQ(TenantTree(ts).guarantee(0), 12);
}

TEST(TenantTree, ASubAccountAskingMoreThanItsParentIsCutToTheParentAndReported) {
  // The case: a coordinator of an account with quota 8 made a sub-account of 16.
  auto ts = make({{"alpha", -1, 8}, {"sub", 0, 16}, {"beta", -1, 8}});
  const auto problems = resolve_tenant_tree(ts, 16);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("tenant 'alpha'"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("sub 16"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("exceed its own 8"), std::string::npos) << problems[0];
  EXPECT_EQ(ts[1].quota_gpus, 8);
  EXPECT_EQ(ts[0].quota_gpus, 0);
  EXPECT_EQ(ts[2].quota_gpus, 8);
}

TEST(TenantTree, ScaledChildrenShareTheParentByTheirQuotas) {
  auto ts = make({{"p", -1, 10}, {"a", 0, 10}, {"b", 0, 5}, {"c", 0, 5}});
  ASSERT_EQ(resolve_tenant_tree(ts, -1).size(), 1u);
  EXPECT_EQ(ts[1].quota_gpus, 5);
  EXPECT_EQ(ts[2].quota_gpus + ts[3].quota_gpus, 5);  // 2.5 each: one gets the remainder
  EXPECT_EQ(ts[2].quota_gpus, 3);                     // ties go to the lower index
}

TEST(TenantTree, ChildrenWithoutAQuotaShareTheParentsRestByWeight) {
  auto ts = make({{"p", -1, 12}, {"fixed", 0, 4}, {"x", 0, -1, 3}, {"y", 0, -1, 1}});
  EXPECT_TRUE(resolve_tenant_tree(ts, 12).empty());
  EXPECT_EQ(ts[0].quota_gpus, 0);  // the open children take the rest
  EXPECT_EQ(ts[1].quota_gpus, 4);
  EXPECT_EQ(ts[2].quota_gpus, 6);
  EXPECT_EQ(ts[3].quota_gpus, 2);
}

TEST(TenantTree, ATopLevelTenantWithoutAQuotaGuaranteesWhatItsChildrenAsk) {
  auto ts = make({{"org", -1, -1}, {"a", 0, 4}, {"b", 0, 4}});
  EXPECT_TRUE(resolve_tenant_tree(ts, 8).empty());
  EXPECT_EQ(ts[0].quota_gpus, 0);
  EXPECT_EQ(TenantTree(ts).guarantee(0), 8);
}

TEST(TenantTree, GuaranteesBeyondTheClusterAreReportedNotCut) {
  auto ts = make({{"p", -1, 12}, {"a", 0, 12}, {"q", -1, 8}});
  const auto problems = resolve_tenant_tree(ts, 16);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("20 GPUs, more than the cluster's 16"), std::string::npos);
  EXPECT_EQ(ts[1].quota_gpus, 12);
}

TEST(TenantTree, DeeperTreesResolveLevelByLevel) {
  // org 16 -> dept 8 (-> team1 6, team2 6: scaled to 4/4) and ops 4; org keeps 4
  auto ts =
      make({{"org", -1, 16}, {"dept", 0, 8}, {"team1", 1, 6}, {"team2", 1, 6}, {"ops", 0, 4}});
  const auto problems = resolve_tenant_tree(ts, 32);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("tenant 'dept'"), std::string::npos);
  EXPECT_EQ(ts[0].quota_gpus, 4);
  EXPECT_EQ(ts[1].quota_gpus, 0);
  EXPECT_EQ(ts[2].quota_gpus, 4);
  EXPECT_EQ(ts[3].quota_gpus, 4);
  EXPECT_EQ(ts[4].quota_gpus, 4);
  const TenantTree tree(ts);
  EXPECT_EQ(tree.depth(2), 2);
  EXPECT_EQ(tree.guarantee(1), 8);
  EXPECT_EQ(tree.guarantee(0), 16);
}

TEST(TenantTree, CyclesAndBadParentsAreInputErrors) {
  auto self = make({{"a", 0, 4}});
  EXPECT_THROW(resolve_tenant_tree(self, -1), InputError);
  auto cycle = make({{"a", 1, 4}, {"b", 0, 4}});
  try {
    resolve_tenant_tree(cycle, -1);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
  }
  auto range = make({{"a", 5, 4}});
  EXPECT_THROW(resolve_tenant_tree(range, -1), InputError);
}

TEST(TenantTree, ReclaimCrossesOnlyFromGroupsOverTheirGuarantee) {
  // p 8: a 4, b 4; x 8 (top level). Usage in milli-GPUs per tenant.
  auto ts = make({{"p", -1, 8}, {"a", 0, 4}, {"b", 0, 4}, {"x", -1, 8}});
  ASSERT_TRUE(resolve_tenant_tree(ts, 16).empty());
  const TenantTree tree(ts);
  std::vector<std::int64_t> sub;
  // b borrows a's idle quota inside p (p at 8 of 8); x within its own 8.
  tree.subtree_sums(std::vector<std::int64_t>{0, 0, 8000, 8000}, sub);
  EXPECT_EQ(sub[0], 8000);
  EXPECT_TRUE(tree.may_reclaim(1, 2, sub));  // a takes back from its sibling
  // b's borrowing stays inside p (p within its 8): x's claim cannot take it
  EXPECT_FALSE(tree.may_reclaim(3, 2, sub));
  std::vector<std::int64_t> sub2;
  auto ts2 = make({{"p", -1, 8}, {"a", 0, 4}, {"b", 0, 4}, {"c", 0, -1}, {"x", -1, 8}});
  ASSERT_TRUE(resolve_tenant_tree(ts2, 16).empty());
  const TenantTree tree2(ts2);
  // c has no quota (p's rest is 0): a borrower of c inside p, p at 6 of 8
  tree2.subtree_sums(std::vector<std::int64_t>{0, 0, 4000, 2000, 4000}, sub2);
  EXPECT_FALSE(tree2.may_reclaim(4, 3, sub2));  // p within its guarantee: c borrows from a
  EXPECT_TRUE(tree2.may_reclaim(1, 3, sub2));   // a may take it back
  // p over its guarantee: its borrowers took from outside, x may take back
  tree2.subtree_sums(std::vector<std::int64_t>{0, 0, 4000, 6000, 4000}, sub2);
  EXPECT_TRUE(tree2.may_reclaim(4, 3, sub2));
}

TEST(TenantTree, LendingGoesToTheNearestGroupWithIdleGuaranteeFirst) {
  auto ts = make({{"org", -1, 16},
                  {"dept", 0, 8},
                  {"t1", 1, 4},
                  {"t2", 1, 4},
                  {"ops", 0, 8},
                  {"other", -1, 0}});
  ASSERT_TRUE(resolve_tenant_tree(ts, 16).empty());
  const TenantTree tree(ts);
  std::vector<std::int64_t> sub;
  // t1 idle: dept has idle guarantee -> t2 ranks 2 (dept's depth 1 + 1); ops 1 (org);
  // other (flat, top level) 0.
  tree.subtree_sums(std::vector<std::int64_t>{0, 0, 0, 4000, 8000, 0}, sub);
  EXPECT_EQ(tree.inside_rank(3, sub), 2);
  EXPECT_EQ(tree.inside_rank(4, sub), 1);
  EXPECT_EQ(tree.inside_rank(5, sub), 0);
  // dept full, org not: t2 ranks 1
  tree.subtree_sums(std::vector<std::int64_t>{0, 0, 4000, 4000, 0, 0}, sub);
  EXPECT_EQ(tree.inside_rank(3, sub), 1);
}

}  // namespace
}  // namespace ds
