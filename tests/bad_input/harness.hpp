// The bad-input corpus's harness (issues #12 and #26): a case writes its files into a fresh
// folder, runs the `deepshare` binary of this build (so the ASan+UBSan build runs every case
// under the sanitizers, where any undefined behaviour aborts), and checks three things:
//  1. the exit status (0: a correct result, 2: bad input, 143: ended by SIGTERM; never 3,
//     "internal error"),
//  2. the message (a substring of stderr, or of stdout for successful runs),
//  3. the outputs: complete and readable (every CSV strict RFC 4180, as many jobs.csv rows
//     as summary.json's jobs), or absent (no output folder); in both cases no temporary
//     file, staging folder or lock file is left anywhere in the case's folder.
// A case may add its own check of the outputs. The tables are in bad_input_test.cpp
// (issue #12's reproducers and more) and bad_input_round2_test.cpp (issue #26's).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ds::bad_input {
namespace fs = std::filesystem;

enum class Outputs { Absent, Complete, Ignore };

using Files = std::vector<std::pair<std::string, std::string>>;  // path in the folder, text
using Check = std::function<void(const std::filesystem::path& dir)>;

struct Case {
  Case(std::string n, Files f, std::string a, int code, std::string m, Outputs o = Outputs::Absent,
       std::string sh = "", Check c = {})
      : name(std::move(n)),
        files(std::move(f)),
        args(std::move(a)),
        exit_code(code),
        message(std::move(m)),
        outputs(o),
        shell(std::move(sh)),
        check(std::move(c)) {}
  std::string name;
  Files files;
  std::string args;     // deepshare arguments; {d} is the case folder, {bin} the binary
  int exit_code;        // expected status
  std::string message;  // expected in stderr (in stdout when exit_code is 0)
  Outputs outputs;      // of {d}/out
  std::string shell;    // run before the command, e.g. "ulimit -f 8;"
  Check check;          // more checks of the case folder
};

std::string read(const fs::path& p);

// ---- inputs shared by the cases ---------------------------------------------------------

extern const std::string kCluster;  // 28 GPUs, tenants teamA and teamB
extern const std::string kNativeHeader, kVenusHeader, kPodHeader, kNodes, kJobsCsv;

std::string native(const std::string& rows);
std::string many_jobs(int n);
// `deepshare simulate` of a native trace `t.csv` on the cluster above.
std::string simulate(const std::string& extra = "", const std::string& policy = "fifo-pooled");
// A run folder written by hand (r/summary.json, r/jobs.csv, r/timeseries.csv).
Files run_folder(const std::string& summary, const std::string& jobs);

// ---- checks of a successful run's outputs -----------------------------------------------

// Every CSV of a run folder reads back strictly; jobs.csv has a row per job.
void check_run_folder(const fs::path& out);
// The jobs.csv field `column` of the row whose job_id is `job`.
std::string job_field(const fs::path& out, const std::string& job, const std::string& column);

// gtest names a failing case by this, not by a dump of its bytes.
void PrintTo(const Case& c, std::ostream* os);

class BadInput : public ::testing::TestWithParam<Case> {};

// The name gtest shows for a case.
inline std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

}  // namespace ds::bad_input
