// The live tenants of `deepshare k8s run` without a server (tenants.hpp): the ConfigMap's
// data, Kueue's queues through the importer's mapping, and how a change applies (ids stay,
// quotas change, a new namespace is a new tenant, a dropped one keeps its id at quota 0).
// Watching the objects runs on a real control plane: tests/k8s/deepshare_run_test.sh.
#include "k8s/tenants.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace ds::k8s {
namespace {

using Quotas = std::vector<std::pair<std::string, int>>;

TEST(K8sTenants, ConfigMapData) {
  const json cm = {{"metadata", {{"name", "deepshare-tenants"}}},
                   {"data", {{"team-a", "8"}, {"team-b", "0"}}}};
  EXPECT_EQ(configmap_quotas(cm).quotas, (Quotas{{"team-a", 8}, {"team-b", 0}}));
  EXPECT_TRUE(configmap_quotas(json{{"metadata", json::object()}}).quotas.empty());
  EXPECT_THROW(configmap_quotas(json{{"data", {{"Team_A", "8"}}}}), InputError);
  EXPECT_THROW(configmap_quotas(json{{"data", {{"team-a", "eight"}}}}), InputError);
  EXPECT_THROW(configmap_quotas(json{{"data", {{"team-a", "-1"}}}}), InputError);
}

json cluster_queue(const std::string& name, int gpus) {
  return {{"metadata", {{"name", name}}},
          {"spec",
           {{"cohort", "all"},
            {"resourceGroups",
             json::array(
                 {{{"coveredResources", json::array({"nvidia.com/gpu"})},
                   {"flavors",
                    json::array({{{"name", "h100"},
                                  {"resources", json::array({{{"name", "nvidia.com/gpu"},
                                                              {"nominalQuota", gpus}}})}}})}}})}}}};
}
json local_queue(const std::string& ns, const std::string& cq) {
  return {{"metadata", {{"name", "lq"}, {"namespace", ns}}}, {"spec", {{"clusterQueue", cq}}}};
}

TEST(K8sTenants, KueueQueuesToNamespaces) {
  const auto q = kueue_quotas({cluster_queue("cq-a", 8), cluster_queue("cq-b", 6)},
                              {local_queue("team-a", "cq-a"), local_queue("team-b", "cq-b"),
                               local_queue("team-c", "cq-b")});
  // cq-b serves two namespaces: split evenly (no pod history here), as the importer does.
  EXPECT_EQ(q.quotas, (Quotas{{"team-a", 8}, {"team-b", 3}, {"team-c", 3}}));
  EXPECT_FALSE(q.notes.empty());
  EXPECT_THROW(kueue_quotas({cluster_queue("cq-a", 8)}, {local_queue("team-a", "nope")}),
               InputError);
}

TEST(K8sTenants, ChangesApplyInPlace) {
  Tenant a;
  a.name = "team-a";
  a.quota_gpus = 4;
  TenantBook book({a}, {"team-a"});
  EXPECT_FALSE(book.apply(NamespaceQuotas{{{"team-a", 4}}, {}})) << "nothing changed";
  EXPECT_TRUE(book.apply(NamespaceQuotas{{{"team-a", 6}, {"team-b", 2}}, {}}));
  ASSERT_EQ(book.tenants().size(), 2u);
  EXPECT_EQ(book.tenants()[0].quota_gpus, 6);
  EXPECT_EQ(book.tenants()[1].id, TenantId(1));
  EXPECT_EQ(book.namespaces()[1], "team-b");
  EXPECT_EQ(book.summary(), "team-a=6,team-b=2");
  // team-a dropped: its id stays (running pods), quota 0, no longer a tenant for new pods.
  EXPECT_TRUE(book.apply(NamespaceQuotas{{{"team-b", 2}}, {}}));
  EXPECT_EQ(book.tenants()[0].quota_gpus, 0);
  EXPECT_EQ(book.active().count("team-a"), 0u);
  EXPECT_EQ(book.active().at("team-b"), TenantId(1));
  EXPECT_TRUE(book.apply(NamespaceQuotas{{{"team-a", 1}, {"team-b", 2}}, {}})) << "back";
  EXPECT_EQ(book.active().at("team-a"), TenantId(0));
  EXPECT_EQ(book.tenants().size(), 2u);
}

}  // namespace
}  // namespace ds::k8s
