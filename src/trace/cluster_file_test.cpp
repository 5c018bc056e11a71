#include "trace/cluster_file.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "trace/load.hpp"
#include "trace/trace_test_util.hpp"

namespace ds {
namespace {

using ::testing::HasSubstr;
using testing::input_error;
using testing::TempDir;

TEST(ClusterFile, ReadsNodesAndTenants) {
  const ClusterSpec c = parse_cluster_yaml("c.yaml", R"(# two teams and a shared pool
nodes:
  - {count: 2, gpus: 8, gpu_memory_gib: 80, gpu_type: A100, tenant: teamA}
  - count: 1
    gpus: 4
  - {count: 2, gpus: 2, name: spare-}
tenants:
  - {name: teamA, quota_gpus: 16, slo_queue_s: 60.5, class: guaranteed, weight: 2,
     checkpoint_interval_s: 0, max_slowdown: 1.2}
  - {name: scavengers, quota_gpus: 0, class: best-effort}
)");
  ASSERT_EQ(c.cluster.nodes.size(), 5u);
  EXPECT_EQ(c.cluster.total_gpus(), 24);
  EXPECT_EQ(c.cluster.nodes[0].name, "teamA-n0");
  EXPECT_EQ(c.cluster.nodes[1].name, "teamA-n1");
  EXPECT_EQ(c.cluster.nodes[1].gpu_memory_mib, 80 * 1024);
  EXPECT_EQ(c.cluster.nodes[1].gpu_type, "A100");
  EXPECT_EQ(c.cluster.nodes[1].owner, TenantId(0));
  EXPECT_EQ(c.cluster.nodes[2].name, "node0");
  EXPECT_FALSE(c.cluster.nodes[2].owner.valid());
  EXPECT_EQ(c.cluster.nodes[2].gpu_memory_mib, 24 * 1024);
  EXPECT_EQ(c.cluster.nodes[4].name, "spare-1");
  EXPECT_EQ(c.cluster.nodes[4].first_gpu, 22);
  ASSERT_EQ(c.tenants.size(), 2u);
  const Tenant& a = c.tenants[0];
  EXPECT_EQ(a.quota_gpus, 16);
  EXPECT_EQ(a.slo_queue, 60500);
  EXPECT_DOUBLE_EQ(a.weight, 2);
  EXPECT_EQ(a.checkpoint_interval, 0);
  EXPECT_DOUBLE_EQ(a.max_slowdown, 1.2);
  const Tenant& s = c.tenants[1];
  EXPECT_EQ(s.id, TenantId(1));
  EXPECT_EQ(s.cls, TenantClass::BestEffort);
  EXPECT_EQ(s.slo_queue, Tenant{}.slo_queue);  // defaults kept
}

TEST(ClusterFile, ReadsATenantTreeAndResolvesItsGuarantees) {
  const ClusterSpec c = parse_cluster_yaml("c.yaml", R"(nodes: [{count: 2, gpus: 8}]
tenants:
  - {name: nlp, parent: research, quota_gpus: 16}   # the parent may come later
  - {name: vision, parent: research, weight: 2}      # no quota: shares research's
  - {name: research, quota_gpus: 8}
  - {name: product, quota_gpus: 8}
)");
  ASSERT_EQ(c.tenants.size(), 4u);
  EXPECT_EQ(c.tenants[0].parent, TenantId(2));
  EXPECT_EQ(c.tenants[0].tree_quota_gpus, 16);
  EXPECT_EQ(c.tenants[1].tree_quota_gpus, -1);
  EXPECT_FALSE(c.tenants[2].parent.valid());
  // nlp asks 16 of research's 8: cut to 8, vision gets nothing, reported
  EXPECT_EQ(c.tenants[0].quota_gpus, 8);
  EXPECT_EQ(c.tenants[1].quota_gpus, 0);
  EXPECT_EQ(c.tenants[2].quota_gpus, 0);
  EXPECT_EQ(c.tenants[3].quota_gpus, 8);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_THAT(c.problems[0], HasSubstr("tenant 'research': its sub-tenants' quotas (nlp 16"));
}

TEST(ClusterFile, TreeErrorsNameTheKey) {
  auto err = [](const std::string& text) {
    return input_error(
        [&] { parse_cluster_yaml("c.yaml", "nodes: [{count: 1, gpus: 8}]\n" + text); });
  };
  EXPECT_THAT(err("tenants: [{name: a, quota_gpus: 8, parent: zz}]\n"),
              HasSubstr("c.yaml:2:44: key 'parent': 'zz' is not in the tenants list"));
  EXPECT_THAT(err("tenants: [{name: a, quota_gpus: 8, parent: a}]\n"),
              HasSubstr("key 'parent': tenant 'a' cannot be its own parent"));
  EXPECT_THAT(err("tenants: [{name: a, parent: b}, {name: b, parent: a}]\n"),
              HasSubstr("its parents form a cycle"));
  EXPECT_THAT(err("tenants: [{name: a}]\n"),
              HasSubstr("tenant #1: missing required key 'quota_gpus' (only a tenant with a "
                        "'parent' may leave it out)"));
}

TEST(ClusterFile, ErrorsNameFileLineColumnAndKey) {
  auto err = [](const std::string& text) {
    return input_error([&] { parse_cluster_yaml("c.yaml", text); });
  };
  const std::string tenants = "tenants: [{name: a, quota_gpus: 8}]\n";
  EXPECT_THAT(err(tenants + "nodes:\n  - {count: 2, gpu: 8}\n"),
              HasSubstr("c.yaml:3:16: node group #1: unknown key 'gpu' (valid keys: count, gpus, "
                        "gpu_memory_gib, gpu_type, tenant, name)"));
  EXPECT_THAT(err(tenants + "nodes:\n  - {count: 2}\n"),
              HasSubstr("c.yaml:3:5: node group #1: missing required key 'gpus'"));
  EXPECT_THAT(err(tenants + "nodes:\n  - {count: two, gpus: 8}\n"),
              HasSubstr("c.yaml:3:13: key 'count': expected a node count in 1..100000, got 'two'"));
  EXPECT_THAT(err(tenants + "nodes:\n  - {count: 1, gpus: 100}\n"),
              HasSubstr("c.yaml:3:22: key 'gpus': expected a GPU count in 1..64, got '100'"));
  EXPECT_THAT(err(tenants + "nodes:\n  - {count: 1, gpus: 8, tenant: b}\n"),
              HasSubstr("c.yaml:3:33: key 'tenant': 'b' is not in the tenants list"));
  EXPECT_THAT(err("nodes: [{count: 1, gpus: 8}]\ntenants:\n  - {name: a}\n"),
              HasSubstr("c.yaml:3:5: tenant #1: missing required key 'quota_gpus'"));
  EXPECT_THAT(err("nodes: [{count: 1, gpus: 8}]\ntenants:\n  - {name: a, quota_gpus: 1, "
                  "class: gold}\n"),
              HasSubstr("c.yaml:3:37: key 'class': expected guaranteed or best-effort, got "
                        "'gold'"));
  EXPECT_THAT(err("nodes: [{count: 1, gpus: 8}]\ntenants:\n  - {name: a, quota_gpus: 1}\n"
                  "  - {name: a, quota_gpus: 2}\n"),
              HasSubstr("c.yaml:4:12: key 'name': tenant 'a' is defined twice"));
  EXPECT_THAT(err(tenants + "nodes: [{count: 1, gpus: 8}]\nnode: []\n"),
              HasSubstr("c.yaml:3:1: cluster file: unknown key 'node' (valid keys: nodes, "
                        "tenants, gpu_types)"));
  EXPECT_THAT(err(tenants), HasSubstr("c.yaml:1:1: cluster file: missing required key 'nodes'"));
  EXPECT_THAT(err(tenants + "nodes: []\n"),
              HasSubstr("key 'nodes': expected a non-empty list of node groups"));
  EXPECT_THAT(err(tenants + "nodes: [{count: 1, gpus: 8]\n"), HasSubstr("c.yaml:2:"));
  EXPECT_THAT(err(tenants + "nodes: [{count: 1, gpus: 8, count: 2}]\n"),
              HasSubstr("key 'count' appears twice"));
  EXPECT_THAT(err(""), HasSubstr("c.yaml: empty"));
  // Issue #26: a second document, tenants a reader takes for one, names with outer spaces.
  const std::string nodes = "nodes: [{count: 1, gpus: 8}]\n";
  EXPECT_THAT(err(nodes + tenants + "---\nnodes: [{count: 9, gpus: 8}]\n"),
              HasSubstr("c.yaml:4:1: a second YAML document (after '---')"));
  EXPECT_THAT(
      err(nodes + "tenants:\n  - {name: Team, quota_gpus: 1}\n  - {name: tEAM, quota_gpus: 1}\n"),
      HasSubstr("tenant 'tEAM' and tenant 'Team' differ only in case or Unicode form"));
  EXPECT_THAT(err(nodes + "tenants:\n  - {name: \"\xef\xbc\xa1\", quota_gpus: 1}\n"  // fullwidth A
                          "  - {name: a, quota_gpus: 1}\n"),
              HasSubstr("differ only in case or Unicode form"));
  EXPECT_THAT(err(nodes + "tenants:\n  - {name: \" a\", quota_gpus: 1}\n"),
              HasSubstr("starts or ends with white space"));
  EXPECT_THAT(err(nodes + "tenants:\n  - {name: \"\xff\", quota_gpus: 1}\n"),
              HasSubstr("is not valid UTF-8"));
  EXPECT_THAT(err("nodes: [{count: 1, gpus: 8, tenant: A}]\n" + tenants),
              HasSubstr("'A' is not in the tenants list (did you mean 'a'?)"));
}

TEST(ClusterFile, JobTenantMissingFromTheFileIsAnError) {
  TempDir dir;
  const std::string trace = dir.write("jobs.csv",
                                      "job_id,tenant,submit_s,duration_s,gpus\n"
                                      "a,teamA,0,10,2\n"
                                      "b,teamC,5,10,1\n"
                                      "c,teamC,6,10,1\n");
  LoadOptions o;
  o.format = "native";
  o.cluster_file = dir.write(
      "c.yaml", "nodes: [{count: 1, gpus: 8}]\ntenants: [{name: teamA, quota_gpus: 8}]\n");
  EXPECT_THAT(input_error([&] { load_trace(trace, o); }),
              HasSubstr("c.yaml: the cluster file does not define tenant 'teamC' (2 jobs, e.g. "
                        "job 'b')"));
  o.cluster_file = dir.path() + "/absent.yaml";
  EXPECT_THAT(input_error([&] { load_trace(trace, o); }), HasSubstr("absent.yaml: cannot open"));
}

TEST(ClusterFile, ReplacesTheImportersClusterAndNotesIt) {
  Workload w;
  for (const char* name : {"x", "y"}) {
    Tenant t;
    t.id = TenantId(static_cast<std::uint32_t>(w.tenants.size()));
    t.name = name;
    w.tenants.push_back(t);
  }
  w.cluster.add_nodes(2, 8, 1024, "", TenantId(0));
  JobSpec j;
  j.name = "j";
  j.tenant = TenantId(1);
  w.jobs.push_back(j);
  w.truth.push_back(JobTruth{});
  apply_cluster(w,
                parse_cluster_yaml("c.yaml",
                                   "nodes: [{count: 1, gpus: 4}]\n"
                                   "tenants: [{name: y, quota_gpus: 6}]\n"),
                "c.yaml");
  ASSERT_EQ(w.tenants.size(), 1u);  // x had no jobs: it may be left out
  EXPECT_EQ(w.jobs[0].tenant, TenantId(0));
  EXPECT_EQ(w.cluster.total_gpus(), 4);
  const std::string notes = ::testing::PrintToString(w.notes);
  EXPECT_THAT(notes, HasSubstr("cluster from c.yaml: 1 nodes, 4 GPUs, 1 tenants"));
  EXPECT_THAT(notes,
              HasSubstr("the tenants' guarantees add up to 6 GPUs, more than the cluster's 4"));
}

TEST(LoadTrace, ColumnsOnlyForNativeAndUnknownFormatsListed) {
  LoadOptions o;
  o.format = "venus";
  o.columns = {"gpus=GPU"};
  EXPECT_THAT(input_error([&] { load_trace("x.csv", o); }),
              HasSubstr("--columns applies only to --format native"));
  o.columns.clear();
  o.format = "philly";
  EXPECT_THAT(input_error([&] { load_trace("x.csv", o); }),
              HasSubstr("unknown trace format 'philly' (known: venus, helios, openb, native)"));
}

TEST(LoadTrace, VenusWithAClusterFileNeedsNoVcConfig) {
  TempDir dir;
  const std::string trace = dir.write("venus.csv",
                                      "job_id,user,vc,gpu_num,state,submit_time,duration\n"
                                      "1,u,vcA,1,COMPLETED,0,10\n");
  LoadOptions o;
  o.format = "venus";
  EXPECT_THAT(input_error([&] { load_trace(trace, o); }), HasSubstr("vc_config.csv"));
  o.cluster_file = dir.write("c.yaml",
                             "nodes: [{count: 1, gpus: 8, tenant: vcA}]\n"
                             "tenants: [{name: vcA, quota_gpus: 8}]\n");
  const Workload w = load_trace(trace, o);
  EXPECT_EQ(w.cluster.nodes.at(0).owner, w.jobs.at(0).tenant);
}

}  // namespace
}  // namespace ds

namespace ds {
namespace {

// A heterogeneous cluster: its GPU models with their memory, once (issue #28).
TEST(ClusterFile, GpuTypesGiveEachModelItsMemory) {
  const ClusterSpec c = parse_cluster_yaml("c.yaml", R"(
gpu_types:
  - {name: A100, memory_gib: 80}
  - {name: T4, memory_gib: 16}
nodes:
  - {count: 2, gpus: 8, gpu_type: A100}
  - {count: 1, gpus: 4, gpu_type: T4, gpu_memory_gib: 16}
tenants:
  - {name: a, quota_gpus: 4}
)");
  ASSERT_EQ(c.cluster.nodes.size(), 3u);
  EXPECT_EQ(c.cluster.nodes[0].gpu_memory_mib, 80 * 1024);
  EXPECT_EQ(c.cluster.nodes[2].gpu_type, "T4");
  EXPECT_EQ(c.cluster.nodes[2].gpu_memory_mib, 16 * 1024);
  const std::string types = "gpu_types: [{name: A100, memory_gib: 80}]\n";
  const std::string tenants = "tenants: [{name: a, quota_gpus: 4}]\n";
  auto error = [&](const std::string& nodes) {
    return testing::input_error(
        [&] { (void)parse_cluster_yaml("c.yaml", types + nodes + tenants); });
  };
  EXPECT_THAT(error("nodes: [{count: 1, gpus: 8, gpu_type: H100}]\n"),
              HasSubstr("c.yaml:2:39: key 'gpu_type': 'H100' is not in gpu_types (A100)"));
  EXPECT_THAT(error("nodes: [{count: 1, gpus: 8}]\n"),
              HasSubstr("key 'gpu_type': missing is not in gpu_types (A100)"));
  EXPECT_THAT(error("nodes: [{count: 1, gpus: 8, gpu_type: A100, gpu_memory_gib: 40}]\n"),
              HasSubstr("key 'gpu_memory_gib': '40' GiB differs from gpu_types' memory_gib of "
                        "'A100'"));
  EXPECT_THAT(testing::input_error([&] {
                (void)parse_cluster_yaml(
                    "c.yaml", "gpu_types: [{name: A, memory_gib: 8}, {name: A, memory_gib: 8}]\n" +
                                  std::string("nodes: [{count: 1, gpus: 8, gpu_type: A}]\n") +
                                  tenants);
              }),
              HasSubstr("key 'name': GPU model 'A' is listed twice"));
}

}  // namespace
}  // namespace ds
