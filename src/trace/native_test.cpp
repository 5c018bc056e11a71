#include "trace/native.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "trace/load.hpp"
#include "trace/trace_test_util.hpp"

namespace ds {
namespace {

using ::testing::HasSubstr;
using testing::input_error;
using testing::TempDir;

TEST(Native, ReadsRequiredAndOptionalFields) {
  TempDir dir;
  const std::string trace = dir.write(
      "jobs.csv",
      "job_id,tenant,submit_s,duration_s,gpus,user,state,model,gpu_util,gmem_mib,gpu_milli,qos,"
      "extra\n"
      "a,teamB,10.0004,60.5,2,alice,FAILED,resnet50,55.5,8000,,LS,x\n"
      "b,teamA,1.2345,0,1,bob,,,,,250,be,y\n"
      "c,teamB,3,7,0,carol,,,,,,,z\n");
  const Workload w = load_native(trace);
  ASSERT_EQ(w.jobs.size(), 2u);  // c is a CPU job
  EXPECT_EQ(w.jobs[0].name, "b");
  EXPECT_EQ(w.jobs[0].submit, 1235);  // 1.2345 s, rounded to the nearest ms
  EXPECT_EQ(w.jobs[0].gpu_milli, 250);
  EXPECT_EQ(w.jobs[0].qos, Qos::BestEffort);
  EXPECT_EQ(w.truth[0].state, FinalState::Completed);  // empty state
  EXPECT_EQ(w.jobs[0].profile, -1);
  EXPECT_EQ(w.jobs[1].submit, 10000);
  EXPECT_EQ(w.truth[1].work, 60500);
  EXPECT_EQ(w.truth[1].state, FinalState::Failed);
  EXPECT_EQ(w.jobs[1].gpus, 2);
  EXPECT_DOUBLE_EQ(w.jobs[1].gpu_util, 55.5);
  EXPECT_DOUBLE_EQ(w.jobs[1].gpu_memory_mib, 8000);
  EXPECT_EQ(w.profiles.at(static_cast<std::size_t>(w.jobs[1].profile)).model, "resnet50");
  EXPECT_EQ(w.users[w.jobs[1].user.index()], "alice");
  // Tenants in first-seen order, no nodes (a cluster file supplies them).
  ASSERT_EQ(w.tenants.size(), 2u);
  EXPECT_EQ(w.tenants[0].name, "teamB");
  EXPECT_EQ(w.jobs[0].tenant, w.tenants[1].id);
  EXPECT_TRUE(w.cluster.nodes.empty());
  EXPECT_THAT(::testing::PrintToString(w.notes), HasSubstr("skipped 1 CPU-only jobs"));
}

TEST(Native, ColumnMappingsReadOtherHeaders) {
  TempDir dir;
  const std::string trace = dir.write("philly.csv",
                                      "JobId,VC,SubmitTime,Duration,NumGPU\n"
                                      "x1,vc1,100,20,4\n");
  NativeOptions o;
  o.columns = {"job_id=JobId,tenant=VC", "submit_s=SubmitTime", "duration_s = Duration",
               "gpus=NumGPU"};
  const Workload w = load_native(trace, o);
  ASSERT_EQ(w.jobs.size(), 1u);
  EXPECT_EQ(w.jobs[0].name, "x1");
  EXPECT_EQ(w.jobs[0].gpus, 4);
  EXPECT_EQ(w.truth[0].work, seconds(20));
  EXPECT_EQ(w.tenants[0].name, "vc1");

  NativeOptions unknown;
  unknown.columns = {"submit=SubmitTime"};
  EXPECT_THAT(input_error([&] { load_native(trace, unknown); }),
              HasSubstr("--columns 'submit=SubmitTime': unknown field 'submit' (valid fields: "
                        "job_id, tenant, submit_s, duration_s, gpus, user, state, model, "
                        "dataset, batch_size, amp, gpu_util, gmem_mib, gpu_milli, qos)"));
  NativeOptions malformed;
  malformed.columns = {"submit_s"};
  EXPECT_THAT(input_error([&] { load_native(trace, malformed); }),
              HasSubstr("expected FIELD=COLUMN"));
  NativeOptions twice;
  twice.columns = {"gpus=NumGPU", "gpus=GPUs"};
  EXPECT_THAT(input_error([&] { load_native(trace, twice); }), HasSubstr("already mapped"));
  // Without mappings, the missing column is named with a hint.
  EXPECT_THAT(input_error([&] { load_native(trace); }),
              HasSubstr("philly.csv:1: missing column 'job_id' for field 'job_id'"));
  // One column feeds one field (issue #26); FIELD= leaves an optional field out.
  NativeOptions shared = o;
  shared.columns.push_back("user=VC");
  EXPECT_THAT(input_error([&] { load_native(trace, shared); }),
              HasSubstr("fields 'tenant' and 'user' would both read column 'VC'"));
  NativeOptions left_out = o;
  left_out.columns.push_back("user=");
  EXPECT_EQ(load_native(trace, left_out).jobs.size(), 1u);
  NativeOptions required = o;
  required.columns = {"job_id="};
  EXPECT_THAT(input_error([&] { load_native(trace, required); }),
              HasSubstr("field 'job_id' is required"));
}

TEST(Native, BadRowsNameFileLineColumnAndField) {
  TempDir dir;
  const char* header = "job_id,tenant,submit_s,duration_s,gpus,gpu_milli\n";
  const std::string late = dir.write("late.csv", std::string(header) + "a,t,4e9,5,1,\n");
  EXPECT_THAT(input_error([&] { load_native(late); }),
              HasSubstr("late.csv:2:5: field 'submit_s': expected a submit time in seconds, "
                        "-3155760000..3155760000, got '4e9'"));
  const std::string dur = dir.write("dur.csv", std::string(header) + "a,t,1,soon,1,\n");
  EXPECT_THAT(input_error([&] { load_native(dur); }),
              HasSubstr("dur.csv:2:7: field 'duration_s': expected a duration in seconds, "
                        "0..10000000000, got 'soon'"));
  const std::string milli = dir.write("milli.csv", std::string(header) + "a,t,1,1,2,500\n");
  EXPECT_THAT(input_error([&] { load_native(milli); }),
              HasSubstr("milli.csv:2:11: field 'gpu_milli': expected 1000 for a multi-GPU job"));
  const std::string gpus = dir.write("gpus.csv", std::string(header) + "a,t,1,1,-2,\n");
  EXPECT_THAT(input_error([&] { load_native(gpus); }),
              HasSubstr("gpus.csv:2:9: field 'gpus': expected a GPU count in 0..100000, got '-2'"));
  const std::string dup =
      dir.write("dup.csv", std::string(header) + "a,t,1,1,1,\nb,t,1,1,1,\na,t,1,1,1,\n");
  EXPECT_THAT(input_error([&] { load_native(dup); }),
              HasSubstr("dup.csv:4:1: field 'job_id': duplicate job id 'a' (first on line 2)"));
}

TEST(Native, LoadTraceRequiresAClusterFile) {
  TempDir dir;
  const std::string trace = dir.write("jobs.csv",
                                      "job_id,tenant,submit_s,duration_s,gpus\n"
                                      "a,teamA,0,10,2\n"
                                      "b,teamB,5,10,1\n");
  LoadOptions o;
  o.format = "native";
  EXPECT_THAT(input_error([&] { load_trace(trace, o); }),
              HasSubstr("the native format has no cluster: pass --cluster FILE"));
  o.cluster_file = dir.write("c.yaml",
                             "tenants:\n"
                             "  - {name: teamB, quota_gpus: 4}\n"
                             "  - {name: teamA, quota_gpus: 4, class: best-effort}\n"
                             "nodes:\n"
                             "  - {count: 1, gpus: 8}\n");
  const Workload w = load_trace(trace, o);
  ASSERT_EQ(w.tenants.size(), 2u);
  EXPECT_EQ(w.tenants[w.jobs[0].tenant.index()].name, "teamA");  // remapped by name
  EXPECT_EQ(w.jobs[0].tenant, TenantId(1));
  EXPECT_EQ(w.tenants[1].cls, TenantClass::BestEffort);
  EXPECT_EQ(w.cluster.total_gpus(), 8);
}

// Issue #15 item 7: the same jobs in the venus and the native format are the same workload
// (profiles with dataset, batch size and AMP, utilization, memory, users, states, order).
TEST(Native, SameJobsAsTheVenusFormat) {
  TempDir dir;
  const std::string venus =
      dir.write("venus.csv",
                "job_id,user,vc,gpu_num,cpu_num,state,submit_time,submit_ts,duration,dataset,model,"
                "batchsize,amp,speed,gpu_util,gmem_util,gmem,lucid_vc_order\n"
                "1,u1,vcA,1,1,COMPLETED,100,x,97,CIFAR-10,ResNet18,64,1,1,62.0,34.0,3642.0,1\n"
                "2,u2,vcB,8,1,FAILED,100,x,500,ImageNet,ResNet50,128,0,1,90.5,80.0,20000.0,0\n"
                "3,u1,vcA,2,1,CANCELLED,160,x,30,CIFAR-10,ResNet18,32,1,1,40.0,20.0,2000.0,2\n");
  dir.write("aux/vc_config.csv", ",num\nvcA,1\nvcB,1\n");
  const std::string native = dir.write(
      "native.csv",
      "job_id,tenant,submit_s,duration_s,gpus,user,state,model,dataset,batch_size,amp,gpu_util,"
      "gmem_mib\n"
      "2,vcB,100,500,8,u2,FAILED,ResNet50,ImageNet,128,0,90.5,20000.0\n"
      "1,vcA,100,97,1,u1,COMPLETED,ResNet18,CIFAR-10,64,1,62.0,3642.0\n"
      "3,vcA,160,30,2,u1,CANCELLED,ResNet18,CIFAR-10,32,1,40.0,2000.0\n");
  LoadOptions vo;
  vo.format = "venus";
  const Workload v = load_trace(venus, vo);
  LoadOptions no;
  no.format = "native";
  no.cluster_file = dir.write("c.yaml",
                              "nodes:\n"
                              "  - {count: 1, gpus: 8, tenant: vcA}\n"
                              "  - {count: 1, gpus: 8, tenant: vcB}\n"
                              "tenants:\n"
                              "  - {name: vcA, quota_gpus: 8}\n"
                              "  - {name: vcB, quota_gpus: 8}\n");
  const Workload n = load_trace(native, no);
  ASSERT_EQ(v.jobs.size(), n.jobs.size());
  for (std::size_t i = 0; i < v.jobs.size(); ++i) {
    const JobSpec &a = v.jobs[i], &b = n.jobs[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(v.tenants[a.tenant.index()].name, n.tenants[b.tenant.index()].name);
    EXPECT_EQ(v.users[a.user.index()], n.users[b.user.index()]);
    EXPECT_EQ(a.gpus, b.gpus);
    EXPECT_EQ(a.submit, b.submit);
    EXPECT_EQ(v.truth[i].work, n.truth[i].work);
    EXPECT_EQ(v.truth[i].state, n.truth[i].state);
    EXPECT_DOUBLE_EQ(a.gpu_util, b.gpu_util);
    EXPECT_DOUBLE_EQ(a.gpu_memory_mib, b.gpu_memory_mib);
    ASSERT_GE(a.profile, 0);
    ASSERT_GE(b.profile, 0);
    EXPECT_EQ(v.profiles[static_cast<std::size_t>(a.profile)],
              n.profiles[static_cast<std::size_t>(b.profile)]);
  }
  EXPECT_EQ(n.profiles[static_cast<std::size_t>(n.jobs[1].profile)].dataset, "CIFAR-10");
  EXPECT_EQ(n.profiles[static_cast<std::size_t>(n.jobs[1].profile)].batch_size, 64);
  EXPECT_TRUE(n.profiles[static_cast<std::size_t>(n.jobs[1].profile)].amp);
}

TEST(Native, DropProfilesForgetsWhatSharingNeeds) {
  TempDir dir;
  const std::string trace = dir.write("jobs.csv",
                                      "job_id,tenant,submit_s,duration_s,gpus,model,gpu_util,"
                                      "gmem_mib,gpu_milli\n"
                                      "a,t,0,10,1,ResNet18,50,4000,\n"
                                      "b,t,1,10,1,,,,500\n");
  LoadOptions o;
  o.format = "native";
  o.cluster_file = dir.write("c.yaml",
                             "nodes:\n  - {count: 1, gpus: 8}\ntenants:\n"
                             "  - {name: t, quota_gpus: 8}\n");
  o.profiles = false;
  const Workload w = load_trace(trace, o);
  EXPECT_EQ(w.jobs[0].profile, -1);
  EXPECT_EQ(w.jobs[0].gpu_util, -1);
  EXPECT_EQ(w.jobs[0].gpu_memory_mib, 0);
  EXPECT_TRUE(w.profiles.empty());
  EXPECT_EQ(w.jobs[1].gpu_milli, 500);  // a fractional request keeps its share
  EXPECT_THAT(::testing::PrintToString(w.notes), HasSubstr("profiles dropped"));
}

}  // namespace
}  // namespace ds
