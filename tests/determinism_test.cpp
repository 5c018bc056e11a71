// End-to-end: the `deepshare` binary, run twice on the same input, writes
// byte-identical outputs (summary.json differs only in wall_seconds), for every
// registered policy.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "registry/registry.hpp"

namespace {
namespace fs = std::filesystem;

std::string read(const fs::path& p, bool drop_wall) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  std::string line;
  while (std::getline(in, line))
    if (!drop_wall || line.find("\"wall_seconds\"") == std::string::npos) s << line << '\n';
  return s.str();
}

// A folder of this process's own (worktrees and parallel runs of the suite do not share one).
fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
}

int run(const std::string& args) {
  const std::string cmd = std::string(DEEPSHARE_BIN) + " " + args + " > /dev/null";
  return std::system(cmd.c_str());
}

void expect_identical(const fs::path& a, const fs::path& b) {
  for (const char* f : {"summary.json", "jobs.csv", "tenants.csv", "timeseries.csv"}) {
    ASSERT_TRUE(fs::exists(a / f)) << f;
    EXPECT_EQ(read(a / f, true), read(b / f, true)) << f << " differs between two runs";
  }
}

TEST(Determinism, VenusOutputsAreByteIdentical) {
  const std::string trace =
      std::string(DEEPSHARE_SHARED_DIR) + "/traces/venus-sept/venus_sept_23859_jobs.csv";
  if (!fs::exists(trace)) GTEST_SKIP() << "Venus trace not found at " << trace;
  const fs::path tmp = scratch("deepshare-determinism");
  fs::remove_all(tmp);
  for (const auto& info : ds::policy_registry()) {  // every registered policy
    const std::string& policy = info.name;
#ifdef DEEPSHARE_SANITIZED
    // Under ASan+UBSan (10x slower) two policies suffice: the optimized build runs all.
    if (policy != "fifo-pooled" && policy != "deepshare") continue;
#endif
    for (const char* run_name : {"a", "b"}) {
      ASSERT_EQ(run("simulate --quiet --trace " + trace + " --policy " + policy +
                    " --load-factor 1.25 --out " + (tmp / policy / run_name).string()),
                0);
    }
    expect_identical(tmp / policy / "a", tmp / policy / "b");
  }
  fs::remove_all(tmp);
}

TEST(Cli, BadInputExitsWithStatusTwoAndAMessage) {
  const fs::path tmp = scratch("deepshare-badinput");
  fs::create_directories(tmp / "aux");
  std::ofstream(tmp / "aux" / "vc_config.csv") << ",num\nvcA,1\n";
  std::ofstream(tmp / "jobs.csv") << "job_id,user,vc,gpu_num,state,submit_time,duration\n"
                                     "1,u,vcA,2,COMPLETED,0,10\n"
                                     "2,u,vcA,two,COMPLETED,5,10\n";
  const std::string cmd = std::string(DEEPSHARE_BIN) + " simulate --quiet --trace " +
                          (tmp / "jobs.csv").string() + " --out " + (tmp / "out").string() +
                          " 2> " + (tmp / "err.txt").string();
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string err = read(tmp / "err.txt", false);
  EXPECT_NE(err.find("jobs.csv:3:"), std::string::npos) << err;
  EXPECT_NE(err.find("gpu_num"), std::string::npos) << err;
  fs::remove_all(tmp);
}

TEST(Cli, UnknownPolicyOptionIsRejected) {
  const fs::path tmp = scratch("deepshare-badoption");
  fs::create_directories(tmp / "aux");
  std::ofstream(tmp / "aux" / "vc_config.csv") << ",num\nvcA,1\n";
  std::ofstream(tmp / "jobs.csv") << "job_id,user,vc,gpu_num,state,submit_time,duration\n"
                                     "1,u,vcA,2,COMPLETED,0,10\n";
  const std::string cmd = std::string(DEEPSHARE_BIN) + " simulate --quiet --trace " +
                          (tmp / "jobs.csv").string() + " --policy fifo-pooled --set backfil=off" +
                          " --out " + (tmp / "out").string() + " 2>/dev/null";
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 2);
  fs::remove_all(tmp);
}

}  // namespace
