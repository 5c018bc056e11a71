// End-to-end tests of `deepshare demo` and `deepshare trace stats`: they run the
// binary on the built-in workload (no data needed) and check the report files and
// the printed output.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/atomic_file.hpp"

namespace {
namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  return ds::read_file(p.string());
}

// Runs the binary with `args`; stdout goes to `out`. Returns the exit status.
int run(const std::string& args, const fs::path& out) {
  const std::string cmd =
      std::string(DEEPSHARE_BIN) + " " + args + " > " + out.string() + " 2> /dev/null";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Cli, DemoWritesTheComparisonReport) {
  const fs::path tmp = fs::temp_directory_path() / "deepshare-cli-demo";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const fs::path dir = tmp / "report";
  ASSERT_EQ(run("demo --days 1 --scale 0.1 --policy fifo-isolated --policy fifo-pooled --quiet "
                "--out " +
                    dir.string(),
                tmp / "stdout.txt"),
            0);
  const std::string out = read(tmp / "stdout.txt");
  EXPECT_NE(out.find("DeepShare demo on the built-in workload (seed 1, 1 days, scale 0.1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("| fifo-isolated |"), std::string::npos) << out;
  EXPECT_NE(out.find("Report written to " + dir.string() + "\n"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - 1), "\n");
  for (const char* f : {"comparison.csv", "comparison.md", "workload.md",
                        "fifo-isolated/summary.json", "fifo-pooled/jobs.csv"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  std::istringstream csv(read(dir / "comparison.csv"));
  std::string line;
  std::size_t rows = 0;
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, 3u);  // header + two policies
  EXPECT_NE(read(dir / "workload.md").find("# Trace statistics: generated"), std::string::npos);
  fs::remove_all(tmp);
}

TEST(Cli, DemoRejectsAnUnknownPolicy) {
  const fs::path tmp = fs::temp_directory_path() / "deepshare-cli-demo-bad";
  fs::create_directories(tmp);
  EXPECT_EQ(run("demo --policy no-such-policy --out " + (tmp / "r").string(), tmp / "o.txt"), 2);
  EXPECT_FALSE(fs::exists(tmp / "r"));
  fs::remove_all(tmp);
}

TEST(Cli, TraceStatsDescribesTheGeneratedWorkload) {
  const fs::path tmp = fs::temp_directory_path() / "deepshare-cli-stats";
  fs::create_directories(tmp);
  ASSERT_EQ(run("trace stats --generated --days 1 --seed 3", tmp / "a.txt"), 0);
  const std::string a = read(tmp / "a.txt");
  EXPECT_NE(a.find("# Trace statistics: generated (seed 3, 1 days, scale 1, load 0.89)"),
            std::string::npos)
      << a;
  EXPECT_NE(a.find("| vcJsw | 32 | 256 |"), std::string::npos) << a;
  EXPECT_NE(a.find("Jobs per hour of day"), std::string::npos);
  ASSERT_EQ(run("trace stats --generated --days 1 --seed 3", tmp / "b.txt"), 0);
  EXPECT_EQ(a, read(tmp / "b.txt"));                // deterministic
  EXPECT_EQ(run("trace stats", tmp / "c.txt"), 2);  // neither a PATH nor --generated
  fs::remove_all(tmp);
}

TEST(Cli, TraceStatsOfVenus) {
  const std::string trace =
      std::string(DEEPSHARE_SHARED_DIR) + "/traces/venus-sept/venus_sept_23859_jobs.csv";
  if (!fs::exists(trace)) GTEST_SKIP() << "Venus trace not found at " << trace;
  const fs::path tmp = fs::temp_directory_path() / "deepshare-cli-venus-stats";
  fs::create_directories(tmp);
  ASSERT_EQ(run("trace stats " + trace, tmp / "v.txt"), 0);
  const std::string v = read(tmp / "v.txt");
  EXPECT_NE(v.find("23,859 jobs from 118 users (34 submit to more than one tenant)"),
            std::string::npos)
      << v;
  EXPECT_NE(v.find("offered load (GPU-hours / (GPUs x window)) 0.893"), std::string::npos);
  fs::remove_all(tmp);
}

// Issue #15: the built-in workload through `simulate`, without profiles, under a ground
// truth worse than the policy's model; summary.json names the truth.
TEST(Cli, SimulateGeneratedWithoutProfilesAndAWorseTruth) {
  const fs::path tmp = fs::temp_directory_path() / "deepshare-cli-truth";
  fs::remove_all(tmp);
  ASSERT_EQ(run("simulate --generated seed=2,days=1,scale=0.1,large_jobs=2 --no-profiles "
                "--policy deepshare --truth slicing --truth-error 0.5 --quiet --out " +
                    (tmp / "run").string(),
                tmp.string() + "-stdout.txt"),
            0);
  const std::string summary = read(tmp / "run" / "summary.json");
  EXPECT_NE(summary.find("\"truth\": \"slicing, slowdown +50%\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("generated (seed 2, 1 days, scale 0.1, load 0.89, large jobs x2)"),
            std::string::npos)
      << summary;
  EXPECT_NE(run("simulate --generated seed=2 --trace x.csv --out " + (tmp / "bad").string(),
                tmp.string() + "-stdout.txt"),
            0);
  EXPECT_NE(run("simulate --generated size=2 --out " + (tmp / "bad").string(),
                tmp.string() + "-stdout.txt"),
            0);
  fs::remove_all(tmp);
}

}  // namespace

namespace {

// `deepshare whatif --from slurm` (issue #28) on the hand-written records of
// tests/fixtures/slurm: the import, a comparison of the site's policy with DeepShare and the
// others, the report and the three-line verdict.
TEST(Cli, WhatifFromSlurmRecords) {
  const fs::path tmp = fs::temp_directory_path() / "deepshare-cli-whatif";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const std::string fx = std::string(DEEPSHARE_FIXTURES) + "/slurm/";
  const std::string args = "whatif --from slurm --sacct " + fx + "sacct.txt --assoc " + fx +
                           "assoc.txt --qos " + fx + "qos.txt --nodes " + fx +
                           "nodes.txt --policies kueue --quiet --out " + (tmp / "w").string();
  ASSERT_EQ(run(args, tmp / "stdout.txt"), 0);
  const std::string out = read(tmp / "stdout.txt");
  for (const char* f : {"site/trace.csv", "site/cluster.yaml", "report/comparison.csv",
                        "report/deepshare/summary.json", "report/kueue/jobs.csv", "verdict.txt"})
    EXPECT_TRUE(fs::exists(tmp / "w" / f)) << f;
  const std::string verdict = read(tmp / "w" / "verdict.txt");
  EXPECT_NE(verdict.find("as recorded by Slurm: the 13 jobs waited "), std::string::npos)
      << verdict;
  EXPECT_NE(verdict.find("\nqueueing delay: "), std::string::npos) << verdict;
  EXPECT_NE(verdict.find(" with DeepShare ("), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("\nQoS of guaranteed tenants: "), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("\nutilisation: GPU occupancy "), std::string::npos) << verdict;
  EXPECT_NE(out.find(verdict), std::string::npos) << out;  // printed too
  EXPECT_NE(out.find("| deepshare |"), std::string::npos) << out;
  // Again without --force: refused, nothing replaced; Slurm's files with --from k8s: refused.
  EXPECT_EQ(run(args, tmp / "again.txt"), 2);
  EXPECT_EQ(run("whatif --from k8s --sacct x --assoc x --nodes x --out " + (tmp / "k").string(),
                tmp / "k8s.txt"),
            2);
  EXPECT_FALSE(fs::exists(tmp / "k"));
  EXPECT_EQ(run(args + " --force", tmp / "forced.txt"), 0);
  fs::remove_all(tmp);
}

// `deepshare whatif --from k8s` (issue #28) on the hand-written objects of tests/fixtures/k8s:
// the import with Kueue's queues, the comparison with `kueue` as the site's policy, the verdict.
TEST(Cli, WhatifFromKubernetesObjects) {
  const fs::path tmp = fs::temp_directory_path() / "deepshare-cli-whatif-k8s";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const std::string fx = std::string(DEEPSHARE_FIXTURES) + "/k8s/";
  const std::string args =
      "whatif --from k8s --pods " + fx + "pods.json --nodes " + fx + "nodes.json --clusterqueues " +
      fx + "clusterqueues.json --localqueues " + fx +
      "localqueues.json --policies fifo-pooled --quiet --out " + (tmp / "w").string();
  ASSERT_EQ(run(args, tmp / "stdout.txt"), 0);
  const std::string out = read(tmp / "stdout.txt");
  for (const char* f : {"site/trace.csv", "site/cluster.yaml", "report/comparison.csv",
                        "report/deepshare/summary.json", "report/kueue/jobs.csv",
                        "report/fifo-pooled/jobs.csv", "verdict.txt"})
    EXPECT_TRUE(fs::exists(tmp / "w" / f)) << f;
  const std::string trace = read(tmp / "w" / "site" / "trace.csv");
  EXPECT_NE(trace.find("k8s_start_s,k8s_end_s,k8s_node,k8s_job\n"), std::string::npos) << trace;
  EXPECT_NE(trace.find("team-b/job-x-7fk2p,team-b,1796116200,1200,3,COMPLETED,,1796116205,"
                       "1796117405,gn1,team-b/job-x\n"),
            std::string::npos)
      << trace;
  const std::string cluster = read(tmp / "w" / "site" / "cluster.yaml");
  EXPECT_NE(cluster.find("{name: \"team-b\", quota_gpus: 3, class: guaranteed"), std::string::npos)
      << cluster;
  const std::string verdict = read(tmp / "w" / "verdict.txt");
  // (60 + 30 + 5 + 60) / 4 = 38.75 s from creation to start.
  EXPECT_NE(verdict.find("as recorded by Kubernetes: the 4 pods waited 39 s on average from their "
                         "creation to their start\nsite's policy: kueue\n"),
            std::string::npos)
      << verdict;
  EXPECT_NE(verdict.find("\nqueueing delay: "), std::string::npos) << verdict;
  EXPECT_NE(verdict.find(" with kueue -> "), std::string::npos) << verdict;
  EXPECT_NE(out.find(verdict), std::string::npos) << out;
  EXPECT_NE(out.find("| kueue |"), std::string::npos) << out;
  // Kueue's files go together; Kubernetes options with --from slurm are refused.
  EXPECT_EQ(run("whatif --from k8s --pods " + fx + "pods.json --nodes " + fx +
                    "nodes.json --clusterqueues " + fx + "clusterqueues.json --out " +
                    (tmp / "k").string(),
                tmp / "alone.txt"),
            2);
  EXPECT_EQ(run("whatif --pods " + fx + "pods.json --nodes x --out " + (tmp / "s").string(),
                tmp / "slurm.txt"),
            2);
  EXPECT_FALSE(fs::exists(tmp / "k"));
  EXPECT_FALSE(fs::exists(tmp / "s"));
  fs::remove_all(tmp);
}

}  // namespace
