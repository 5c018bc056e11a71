// GPU models on the fake cluster (models.hpp): node models from the nodes' Features listed in
// gpu_models, a job's model from its record (gm=). Every online policy places a job only on
// nodes of its model, even when the other model's GPUs sit idle; a model no node has is
// refused with the reason in the job's record; without gpu_models nothing changes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "registry/registry.hpp"
#include "slurm/fake_harness.hpp"
#include "slurm/models.hpp"

namespace ds::slurm {
namespace {

// node1, node2: a100; node3, node4: v100 (4 GPUs each).
FakeOptions two_models() {
  FakeOptions o;
  o.node_features = {"a100", "a100", "v100", "v100"};
  return o;
}

void configure(FakeHarness& h, const std::string& policy) {
  h.cfg = fake_config(policy);
  h.cfg.gpu_models = {{"a100", 40960}, {"v100", 16384}};
}

bool on_model(const std::vector<std::string>& nodes, const std::string& model) {
  for (const auto& n : nodes) {
    const bool a100 = n == "node1" || n == "node2";
    if (model == "a100" ? !a100 : a100) return false;
  }
  return !nodes.empty();
}

std::vector<std::string> online_policies() {
  std::vector<std::string> names;
  for (const auto& p : policy_registry())
    if (!p.oracle) names.push_back(p.name);
  return names;
}

class GpuModels : public ::testing::TestWithParam<std::string> {};

// Six 2-GPU v100 jobs want 12 GPUs where v100 nodes hold 8: the last two wait for a v100
// node although the a100 nodes are idle but for one job; each job ends, on its model only.
TEST_P(GpuModels, JobsRunOnlyOnNodesOfTheirModel) {
  FakeHarness h(two_models());
  configure(h, GetParam());
  auto ctl = h.start();
  const auto& nodes = ctl->core().state().cluster().nodes;
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0].gpu_type, "a100");
  EXPECT_EQ(nodes[0].gpu_memory_mib, 40960);
  EXPECT_EQ(nodes[3].gpu_type, "v100");
  EXPECT_EQ(nodes[3].gpu_memory_mib, 16384);
  std::vector<std::pair<std::uint32_t, std::string>> jobs;
  for (int k = 0; k < 6; ++k) jobs.emplace_back(h.fc.submit("beta", 2, 8000, true, "v100"), "v100");
  jobs.emplace_back(h.fc.submit("alpha", 2, 8000, true, "a100"), "a100");
  jobs.emplace_back(h.fc.submit("alpha", 1, 8000, true, "v100|a100"), "");
  const auto any = h.fc.submit("alpha", 1, 8000);
  h.run(*ctl, 200000);
  for (const auto& [id, model] : jobs) {
    const FakeJobStats& s = h.fc.stats(id);
    EXPECT_TRUE(s.completed) << h.fc.describe(id);
    if (!model.empty()) {
      EXPECT_TRUE(on_model(s.ran_on, model)) << h.fc.describe(id);
    }
  }
  EXPECT_TRUE(h.fc.stats(any).completed) << h.fc.describe(any);
  for (const auto& why : h.unsound()) ADD_FAILURE() << why;
  EXPECT_EQ(ctl->counters().invalid_decisions, 0u);
}

INSTANTIATE_TEST_SUITE_P(EveryOnlinePolicy, GpuModels, ::testing::ValuesIn(online_policies()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

// A model no node has, or more GPUs of a model than its nodes hold: cancelled at once with
// the reason (x=), naming the partition's models.
TEST(GpuModelsRefused, AModelNoNodeHasIsRefusedWithTheModels) {
  FakeHarness h(two_models());
  configure(h, "deepshare");
  auto ctl = h.start();
  const auto h100 = h.fc.submit("alpha", 1, 1000, true, "h100");
  const auto ok = h.fc.submit("alpha", 1, 1000, true, "h100|v100");
  h.run(*ctl, 5000);
  const FakeJobStats& s = h.fc.stats(h100);
  EXPECT_TRUE(s.cancelled) << h.fc.describe(h100);
  EXPECT_EQ(s.starts, 0);
  EXPECT_NE(s.refusal.find("no node has GPU model 'h100'"), std::string::npos) << s.refusal;
  EXPECT_NE(s.refusal.find("a100 (2 nodes), v100 (2 nodes)"), std::string::npos) << s.refusal;
  EXPECT_TRUE(h.fc.stats(ok).completed) << h.fc.describe(ok);
  for (const auto& why : h.unsound(false, true)) ADD_FAILURE() << why;
}

// A site of one model needs no configuration: without gpu_models, gm= is not enforced.
TEST(GpuModelsRefused, WithoutGpuModelsTheModelIsNotEnforced) {
  FakeHarness h(two_models());
  auto ctl = h.start();
  EXPECT_EQ(ctl->core().state().cluster().nodes[0].gpu_type, "");
  const auto j = h.fc.submit("alpha", 1, 1000, true, "h100");
  h.run(*ctl, 5000);
  EXPECT_TRUE(h.fc.stats(j).completed) << h.fc.describe(j);
}

// A node's model is the one of its Features that gpu_models lists; two are an error naming
// the node (the controller refuses to start).
TEST(GpuModelsRefused, ANodeOfTwoModelsIsAConfigurationError) {
  ControllerConfig cfg;
  cfg.gpu_models = {{"a100", 40960}, {"v100", 16384}};
  NodeInfo n;
  n.name = "node2";
  n.features = {"bigmem", "a100"};
  EXPECT_EQ(node_model(n, cfg), "a100");  // other features are not models
  n.features = {"bigmem"};
  EXPECT_EQ(node_model(n, cfg), "");
  n.features = {"bigmem", "a100", "v100"};
  try {
    (void)node_model(n, cfg);
    FAIL() << "a node of two models accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("node node2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a100, v100"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ds::slurm
