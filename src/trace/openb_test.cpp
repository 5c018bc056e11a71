#include "trace/openb.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "trace/load.hpp"
#include "trace/trace_test_util.hpp"

namespace ds {
namespace {

using ::testing::HasSubstr;
using testing::input_error;
using testing::TempDir;

const char* kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";
const char* kNodes =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "n0,64000,262144,8,V100M32\n"
    "n1,32000,262144,0,\n"
    "n2,64000,262144,2,G2\n"
    "n3,64000,262144,4,T4\n";

TEST(Openb, ReadsPodsNodesAndQosTenants) {
  TempDir dir;
  dir.write("openb_node_list_gpu_node.csv", kNodes);
  const std::string pods =
      dir.write("openb_pod_list_default.csv",
                std::string(kPodHeader) +
                    "p0,12000,16384,1,1000,,LS,Running,0,1000,0\n"
                    "p1,6000,12288,1,460,,BE,Succeeded,10,110,20\n"
                    "p2,6000,12288,0,0,,BE,Running,10,500,10\n"
                    "p3,6000,12288,2,1000,,LS,Failed,30,330,\n"  // pending: work from creation
                    "p4,6000,12288,1,1000,,Guaranteed,Pending,40,90,\n");
  const Workload w = load_openb(pods);
  ASSERT_EQ(w.jobs.size(), 4u);  // p2 is CPU-only
  EXPECT_EQ(w.jobs[0].name, "p0");
  EXPECT_EQ(w.truth[0].work, seconds(1000));
  EXPECT_EQ(w.jobs[1].gpu_milli, 460);
  EXPECT_EQ(w.jobs[1].qos, Qos::BestEffort);
  EXPECT_EQ(w.jobs[1].submit, seconds(10));
  EXPECT_EQ(w.truth[1].work, seconds(90));  // deletion - scheduled
  EXPECT_EQ(w.truth[1].state, FinalState::Completed);
  EXPECT_EQ(w.jobs[2].gpus, 2);
  EXPECT_EQ(w.truth[2].work, seconds(300));  // deletion - creation
  EXPECT_EQ(w.truth[2].state, FinalState::Failed);
  EXPECT_EQ(w.truth[3].state, FinalState::Other);
  EXPECT_FALSE(w.jobs[0].user.valid());

  // Tenants LS, Guaranteed, BE; 14 GPUs split by GPU-time: LS 1000 + 600, Guaranteed 50.
  ASSERT_EQ(w.tenants.size(), 3u);
  EXPECT_EQ(w.tenants[0].name, "LS");
  EXPECT_EQ(w.tenants[1].name, "Guaranteed");
  EXPECT_EQ(w.tenants[2].name, "BE");
  EXPECT_EQ(w.tenants[0].cls, TenantClass::Guaranteed);
  EXPECT_EQ(w.tenants[2].cls, TenantClass::BestEffort);
  EXPECT_EQ(w.tenants[0].quota_gpus, 14);  // 14 * 1600/1650 = 13.58 -> 13, remainder to LS
  EXPECT_EQ(w.tenants[1].quota_gpus, 0);
  EXPECT_EQ(w.tenants[2].quota_gpus, 0);
  EXPECT_EQ(w.jobs[3].tenant, w.tenants[1].id);

  ASSERT_EQ(w.cluster.nodes.size(), 3u);  // n1 has no GPU
  EXPECT_EQ(w.cluster.total_gpus(), 14);
  EXPECT_EQ(w.cluster.nodes[0].name, "n0");
  EXPECT_EQ(w.cluster.nodes[0].gpu_type, "V100M32");
  EXPECT_EQ(w.cluster.nodes[0].gpu_memory_mib, 32 * 1024);
  EXPECT_EQ(w.cluster.nodes[1].gpu_memory_mib, 24 * 1024);  // G2: undisclosed
  EXPECT_EQ(w.cluster.nodes[2].gpu_memory_mib, 16 * 1024);
  EXPECT_FALSE(w.cluster.nodes[0].owner.valid());
  const std::string notes = ::testing::PrintToString(w.notes);
  EXPECT_THAT(notes, HasSubstr("skipped 1 CPU-only pods"));
  EXPECT_THAT(notes, HasSubstr("skipped 1 GPU-less nodes"));
  EXPECT_THAT(notes, HasSubstr("model 'G2' is not published: assumed 24 GiB on its 1 nodes"));
}

TEST(Openb, BadRowsNameFileLineColumnAndField) {
  TempDir dir;
  dir.write("openb_node_list_gpu_node.csv", kNodes);
  const std::string neg =
      dir.write("neg.csv", std::string(kPodHeader) + "p0,1,1,1,1000,,LS,Running,0,1000,0\n" +
                               "p1,1,1,1,1000,,LS,Running,50,60,70\n");
  EXPECT_THAT(input_error([&] { load_openb(neg); }),
              HasSubstr("neg.csv:3:30: field 'deletion_time': pod 'p1' ends at 60 s, before it "
                        "was scheduled (70 s)"));
  const std::string qos =
      dir.write("qos.csv", std::string(kPodHeader) + "p0,1,1,1,1000,,Gold,Running,0,1000,0\n");
  EXPECT_THAT(input_error([&] { load_openb(qos); }),
              HasSubstr("qos.csv:2:16: field 'qos': expected a QoS class (LS, BE, Burstable or "
                        "Guaranteed), got 'Gold'"));
  const std::string milli =
      dir.write("milli.csv", std::string(kPodHeader) + "p0,1,1,1,1500,,LS,Running,0,1000,0\n");
  EXPECT_THAT(input_error([&] { load_openb(milli); }),
              HasSubstr("milli.csv:2:10: field 'gpu_milli': expected a GPU share in 1..1000"));
  const std::string early =
      dir.write("early.csv", std::string(kPodHeader) + "p0,1,1,1,1000,,LS,Running,100,1000,99\n");
  EXPECT_THAT(input_error([&] { load_openb(early); }),
              HasSubstr("early.csv:2:36: field 'scheduled_time': pod 'p0' is scheduled at 99 s, "
                        "before it was created (100 s)"));
  const std::string sched =
      dir.write("sched.csv", std::string(kPodHeader) + "p0,1,1,1,1000,,LS,Running,0,1000,soon\n");
  EXPECT_THAT(input_error([&] { load_openb(sched); }),
              HasSubstr("sched.csv:2:34: field 'scheduled_time': expected a time (whole seconds) "
                        "in -3155760000..3155760000, got 'soon'"));
}

TEST(Openb, NodeListIsRequiredUnlessTheCallerGivesTheCluster) {
  TempDir dir;
  const std::string pods =
      dir.write("pods.csv", std::string(kPodHeader) + "p0,1,1,1,1000,,LS,Running,0,1000,0\n");
  EXPECT_THAT(input_error([&] { load_openb(pods); }),
              HasSubstr("cannot find openb_node_list_gpu_node.csv"));
  const std::string cluster =
      dir.write("c.yaml", "nodes: [{count: 1, gpus: 2}]\ntenants: [{name: LS, quota_gpus: 2}]\n");
  LoadOptions o;
  o.format = "openb";
  o.cluster_file = cluster;
  const Workload w = load_trace(pods, o);
  EXPECT_EQ(w.cluster.total_gpus(), 2);
  EXPECT_EQ(w.jobs.at(0).tenant, w.tenant_by_name("LS"));
}

TEST(Openb, MemoryTable) {
  EXPECT_EQ(openb_gpu_memory_mib("T4"), 16 * 1024);
  EXPECT_EQ(openb_gpu_memory_mib("P100"), 16 * 1024);
  EXPECT_EQ(openb_gpu_memory_mib("V100M16"), 16 * 1024);
  EXPECT_EQ(openb_gpu_memory_mib("V100M32"), 32 * 1024);
  EXPECT_EQ(openb_gpu_memory_mib("A10"), 24 * 1024);
  EXPECT_EQ(openb_gpu_memory_mib("G3"), 0);
}

TEST(Openb, RealTrace) {
  const std::string pods = testing::shared_trace("alibaba-openb/openb_pod_list_default.csv");
  if (pods.empty()) GTEST_SKIP() << "research data not found under " DEEPSHARE_SHARED_DIR;
  LoadOptions o;
  o.format = "openb";
  const Workload w = load_trace(pods, o);
  EXPECT_EQ(w.jobs.size(), 7064u);  // of 8,152 pods, 1,088 are CPU-only
  EXPECT_EQ(w.cluster.nodes.size(), 1213u);
  EXPECT_EQ(w.cluster.total_gpus(), 6212);
  ASSERT_EQ(w.tenants.size(), 4u);
  int quota = 0;
  for (const auto& t : w.tenants) quota += t.quota_gpus;
  EXPECT_EQ(quota, 6212);
  EXPECT_EQ(w.tenants[w.tenant_by_name("BE").index()].quota_gpus, 0);
  std::size_t fractional = 0;
  for (const auto& j : w.jobs) fractional += j.gpu_milli < 1000;
  EXPECT_EQ(fractional, 3078u);
  EXPECT_THAT(::testing::PrintToString(w.notes), HasSubstr("skipped 1088 CPU-only pods"));
}

}  // namespace
}  // namespace ds
