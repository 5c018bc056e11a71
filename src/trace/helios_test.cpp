#include "trace/helios.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "trace/load.hpp"
#include "trace/trace_test_util.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace {

using ::testing::HasSubstr;
using testing::input_error;
using testing::TempDir;

const char* kHeader =
    "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"
    "queue\n";

TEST(Datetime, ParsesUtcSecondsSinceEpoch) {
  EXPECT_EQ(parse_datetime("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(parse_datetime("2020-04-01 00:02:31"), 1585699351);
  EXPECT_EQ(parse_datetime("2020-02-29T23:59:59"), 1583020799);  // leap day
  EXPECT_EQ(parse_date("2020-09-26"), 18531);
  EXPECT_EQ(format_date(18531), "2020-09-26");
  EXPECT_EQ(format_date(0), "1970-01-01");
  for (const char* bad : {"2019-02-29 00:00:00", "2020-13-01 00:00:00", "2020-04-01 24:00:00",
                          "2020-04-01", "2020/04/01 00:00:00", "1585699351", ""})
    EXPECT_FALSE(parse_datetime(bad).has_value()) << bad;
}

// VC sizes per day: a is resized on 04-03; c has no GPUs and no jobs; d has jobs but no GPUs.
const char* kSizes =
    "date,a,b,c,d,total\n"
    "2020-04-01,16,8,0,0,24\n"
    "2020-04-02,12,8,0,0,20\n"
    "2020-04-03,24,8,0,0,32\n";

TEST(Helios, ReadsJobsAndSizesVcsFromTheLastDateNotAfterTheLastSubmit) {
  TempDir dir;
  dir.write("aux/cluster_gpu_number.csv", kSizes);
  const std::string trace =
      dir.write("cluster_log.csv", std::string(kHeader) +
                                       "j1,u1,a,2,8,1,COMPLETED,2020-04-01 00:02:31,2020-04-01 "
                                       "00:02:35,2020-04-01 01:02:35,3600,4\n"
                                       "j2,u2,b,0,4,1,COMPLETED,2020-04-01 00:03:00,,,60,0\n"
                                       "j3,u1,a,8,8,1,FAILED,2020-04-02 10:00:00,,,120,0\n"
                                       "j4,u3,d,1,8,1,CANCELLED,2020-04-02 23:59:59,,,0,0\n");
  const Workload w = load_helios(trace);
  ASSERT_EQ(w.jobs.size(), 3u);  // j2 is CPU-only
  EXPECT_EQ(w.jobs[0].name, "j1");
  EXPECT_EQ(w.jobs[0].submit, seconds(1585699351));
  EXPECT_EQ(w.truth[0].work, seconds(3600));
  EXPECT_EQ(w.jobs[0].gpus, 2);
  EXPECT_EQ(w.truth[1].state, FinalState::Failed);
  EXPECT_EQ(w.users[w.jobs[1].user.index()], "u1");
  // Last submit day is 04-02: sizes from 04-02 (a = 12 GPUs), not 04-03.
  ASSERT_EQ(w.tenants.size(), 3u);  // a, b, d (c has neither GPUs nor jobs)
  EXPECT_EQ(w.tenants[0].name, "a");
  EXPECT_EQ(w.tenants[0].quota_gpus, 12);
  EXPECT_EQ(w.tenants[1].quota_gpus, 8);
  EXPECT_EQ(w.tenants[2].name, "d");
  EXPECT_EQ(w.tenants[2].quota_gpus, 0);
  EXPECT_EQ(w.tenant_by_name(std::string("a")), w.jobs[0].tenant);
  // a: one 8-GPU node and one 4-GPU node; b: one node.
  ASSERT_EQ(w.cluster.nodes.size(), 3u);
  EXPECT_EQ(w.cluster.nodes[0].gpus, 8);
  EXPECT_EQ(w.cluster.nodes[1].gpus, 4);
  EXPECT_EQ(w.cluster.nodes[1].name, "a-n1");
  EXPECT_EQ(w.cluster.nodes[2].name, "b-n0");
  EXPECT_EQ(w.cluster.nodes[0].gpu_memory_mib, 24 * 1024);
  EXPECT_EQ(w.cluster.nodes[2].owner, w.tenants[1].id);
  EXPECT_EQ(w.cluster.total_gpus(), 20);
  const std::string notes = ::testing::PrintToString(w.notes);
  EXPECT_THAT(notes, HasSubstr("skipped 1 CPU-only jobs"));
  EXPECT_THAT(notes, HasSubstr("on 2020-04-02"));
  EXPECT_THAT(notes, HasSubstr("VC 'd' has 1 GPU jobs but 0 GPUs"));
}

TEST(Helios, BadRowsNameFileLineColumnAndField) {
  TempDir dir;
  dir.write("cluster_gpu_number.csv", kSizes);
  const std::string bad_time = dir.write(
      "t1.csv", std::string(kHeader) + "j1,u,a,1,1,1,COMPLETED,2020-04-31 00:00:00,,,1,0\n");
  EXPECT_THAT(input_error([&] { load_helios(bad_time); }),
              HasSubstr("t1.csv:2:24: field 'submit_time': expected a date and time "
                        "'YYYY-MM-DD HH:MM:SS' from 1869-12-31 to 2070-01-01, got "
                        "'2020-04-31 00:00:00'"));
  const std::string far = dir.write(
      "t0.csv", std::string(kHeader) + "j1,u,a,1,1,1,COMPLETED,2999-01-01 00:00:00,,,1,0\n");
  EXPECT_THAT(input_error([&] { load_helios(far); }),
              HasSubstr("t0.csv:2:24: field 'submit_time': expected a date and time"));
  const std::string bad_gpus = dir.write(
      "t2.csv", std::string(kHeader) + "j1,u,a,two,1,1,COMPLETED,2020-04-01 00:00:00,,,1,0\n");
  EXPECT_THAT(
      input_error([&] { load_helios(bad_gpus); }),
      HasSubstr("t2.csv:2:8: field 'gpu_num': expected a GPU count in 0..100000, got 'two'"));
  const std::string neg = dir.write(
      "t3.csv", std::string(kHeader) + "j1,u,a,0,1,1,COMPLETED,2020-04-01 00:00:00,,,-5,0\n");
  EXPECT_THAT(
      input_error([&] { load_helios(neg); }),
      HasSubstr(
          "t3.csv:2:46: field 'duration': expected a duration (whole seconds) in 0..10000000000"));
  const std::string dup = dir.write(
      "t4.csv", std::string(kHeader) + "j1,u,a,1,1,1,COMPLETED,2020-04-01 00:00:00,,,1,0\n" +
                    "j1,u,a,1,1,1,COMPLETED,2020-04-01 00:00:00,,,1,0\n");
  EXPECT_THAT(input_error([&] { load_helios(dup); }),
              HasSubstr("t4.csv:3:1: field 'job_id': duplicate job id 'j1' (first on line 2)"));
  const std::string short_row = dir.write("t5.csv", std::string(kHeader) + "j1,u,a,1\n");
  EXPECT_THAT(input_error([&] { load_helios(short_row); }), HasSubstr("t5.csv:2"));
}

TEST(Helios, VcWithoutSizeIsAnErrorUnlessTheCallerGivesTheCluster) {
  TempDir dir;
  dir.write("cluster_gpu_number.csv", kSizes);
  const std::string trace =
      dir.write("log.csv", std::string(kHeader) +
                               "j1,u,a,1,1,1,COMPLETED,2020-04-01 00:00:00,,,1,0\n"
                               "j2,u,zz,1,1,1,COMPLETED,2020-04-01 00:00:00,,,1,0\n");
  EXPECT_THAT(input_error([&] { load_helios(trace); }),
              HasSubstr("log.csv:3: VC 'zz' (1 GPU jobs) has no column in"));
  HeliosOptions o;
  o.cluster_from_caller = true;
  const Workload w = load_helios(trace, o);
  ASSERT_EQ(w.tenants.size(), 2u);
  EXPECT_EQ(w.tenants[1].name, "zz");
  EXPECT_TRUE(w.cluster.nodes.empty());
}

TEST(Helios, MissingSizesFileSaysWhatToDo) {
  TempDir dir;
  const std::string trace = dir.write(
      "log.csv", std::string(kHeader) + "j1,u,a,1,1,1,COMPLETED,2020-04-01 00:00:00,,,1,0\n");
  const std::string msg = input_error([&] { load_helios(trace); });
  EXPECT_THAT(msg, HasSubstr("cluster_gpu_number.csv"));
  EXPECT_THAT(msg, HasSubstr("--cluster"));
  // A sizes file that starts after the trace ends cannot size it.
  dir.write("cluster_gpu_number.csv", "date,a,total\n2020-05-01,8,8\n");
  EXPECT_THAT(input_error([&] { load_helios(trace); }),
              HasSubstr("starts on 2020-05-01, after the trace's last submit day 2020-04-01"));
}

TEST(Helios, RegisteredInTheFormatTable) {
  TempDir dir;
  const std::string trace = dir.write(
      "log.csv", std::string(kHeader) + "j1,u,a,1,1,1,COMPLETED,2020-04-01 00:00:00,,,1,0\n");
  const std::string cluster =
      dir.write("c.yaml", "nodes: [{count: 2, gpus: 4}]\ntenants: [{name: a, quota_gpus: 8}]\n");
  LoadOptions o;
  o.format = "helios";
  o.cluster_file = cluster;  // no sizes file needed then
  const Workload w = load_trace(trace, o);
  EXPECT_EQ(w.format, "helios");
  EXPECT_EQ(w.cluster.total_gpus(), 8);
  EXPECT_EQ(w.tenants.at(0).quota_gpus, 8);
}

// The real HeliosData VC sizes (Venus, 2020-04-01..09-28) with a synthetic job log.
TEST(Helios, RealVenusGpuNumbers) {
  const std::string sizes = testing::shared_trace("venus-sept/aux/cluster_gpu_number.csv");
  if (sizes.empty()) GTEST_SKIP() << "research data not found under " DEEPSHARE_SHARED_DIR;
  TempDir dir;
  HeliosOptions o;
  o.gpu_numbers = sizes;
  const std::string sept =
      dir.write("sept.csv", std::string(kHeader) +
                                "j1,u,vcEwI,8,1,1,COMPLETED,2020-09-01 00:00:00,,,100,0\n"
                                "j2,u,vchA3,1,1,1,COMPLETED,2020-09-26 23:00:00,,,100,0\n");
  const Workload w = load_helios(sept, o);
  EXPECT_EQ(w.tenants.size(), 16u);  // the VCs with GPUs on 2020-09-26
  EXPECT_EQ(w.cluster.total_gpus(), 1080);
  EXPECT_EQ(w.cluster.nodes.size(), 135u);
  EXPECT_EQ(w.tenants[w.tenant_by_name("vcEwI").index()].quota_gpus, 72);
  EXPECT_EQ(w.tenants[w.tenant_by_name("vchA3").index()].quota_gpus, 24);
  const std::string april = dir.write(
      "april.csv", std::string(kHeader) + "j1,u,vcEhP,1,1,1,COMPLETED,2020-04-01 00:02:31,,,1,0\n");
  const Workload a = load_helios(april, o);
  EXPECT_EQ(a.cluster.total_gpus(), 968);
  EXPECT_EQ(a.tenants.size(), 19u);  // 18 VCs with GPUs + vcEhP (jobs, 0 GPUs)
}

}  // namespace
}  // namespace ds
