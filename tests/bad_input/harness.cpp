#include "harness.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/csv.hpp"

namespace ds::bad_input {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size())
    s.replace(p, from.size(), to);
  return s;
}

// ---- inputs shared by the cases ---------------------------------------------------------

const std::string kCluster =
    "nodes:\n"
    "  - {count: 3, gpus: 8, tenant: teamA}\n"
    "  - {count: 1, gpus: 4}\n"
    "tenants:\n"
    "  - {name: teamA, quota_gpus: 16}\n"
    "  - {name: teamB, quota_gpus: 8}\n";
const std::string kNativeHeader = "job_id,tenant,submit_s,duration_s,gpus\n";
const std::string kVenusHeader = "job_id,user,vc,gpu_num,state,submit_time,duration\n";
const std::string kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";
const std::string kNodes = "sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1000,8,T4\n";

std::string native(const std::string& rows) {
  return kNativeHeader + rows;
}
std::string many_jobs(int n) {
  std::string s = kNativeHeader;
  for (int i = 0; i < n; ++i)
    s += "job-with-a-long-name-" + std::to_string(i) + (i % 2 ? ",teamA," : ",teamB,") +
         std::to_string(i * 10) + ",600,1\n";
  return s;
}

// `deepshare simulate` of a native trace `t.csv` on the cluster above.
std::string simulate(const std::string& extra, const std::string& policy) {
  return "simulate --trace {d}/t.csv --format native --cluster {d}/c.yaml --policy " + policy +
         " --quiet --out {d}/out " + extra;
}

// A run folder written by a successful case.
Files run_folder(const std::string& summary, const std::string& jobs) {
  return {{"r/summary.json", summary},
          {"r/jobs.csv", jobs},
          {"r/timeseries.csv",
           "time_s,scope,gpus,busy_gpus,allocated_gpus,occupancy,sm_util,running_jobs,"
           "pending_jobs,pending_gpus,borrowed_gpus,lent_gpus,reserve_gpus,assurance\n"
           "0,cluster,8,0,0,0,0,0,0,0,,,,\n"}};
}
const std::string kJobsCsv =
    "job_id,tenant,user,gpus,gpu_milli,submit_s,start_s,end_s,queue_s,jct_s,preemptions,"
    "lost_work_s,max_slowdown,entitled,status,trace_state,reason\n"
    "j1,a,u,1,1000,0,0,10,0,10,0,0,1,1,completed,COMPLETED,\n";

// ---- checks of a successful run's outputs -----------------------------------------------

// Every CSV of a run folder reads back strictly; jobs.csv has a row per job.
void check_run_folder(const fs::path& out) {
  for (const char* f : {"summary.json", "jobs.csv", "tenants.csv", "timeseries.csv"})
    ASSERT_TRUE(fs::is_regular_file(out / f)) << out / f;
  const auto summary = nlohmann::json::parse(read(out / "summary.json"));
  std::size_t rows = 0;
  for (const char* f : {"jobs.csv", "tenants.csv", "timeseries.csv"}) {
    CsvReader csv = CsvReader::open((out / f).string());
    csv.read_header();
    std::size_t n = 0;
    while (csv.next()) ++n;  // throws on a row of the wrong width
    if (std::string(f) == "jobs.csv") rows = n;
  }
  EXPECT_EQ(rows, summary.at("jobs").get<std::size_t>());
}

// The jobs.csv field `column` of the row whose job_id is `job`.
std::string job_field(const fs::path& out, const std::string& job, const std::string& column) {
  CsvReader csv = CsvReader::open((out / "jobs.csv").string());
  csv.read_header();
  const std::size_t id = csv.require_column("job_id"), c = csv.require_column(column);
  while (csv.next())
    if (csv.field(id) == job) return std::string(csv.field(c));
  return "(no such job)";
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

TEST_P(BadInput, ClearErrorOrCorrectResult) {
  const Case& c = GetParam();
  const fs::path d = fs::temp_directory_path() / ("deepshare-bad-input-" + c.name);
  fs::remove_all(d);
  fs::create_directories(d);
  for (const auto& [path, text] : c.files) {
    fs::create_directories((d / path).parent_path());
    std::ofstream(d / path, std::ios::binary) << text;
  }
  const std::string src =
      std::getenv("DEEPSHARE_SOURCE_DIR") ? std::getenv("DEEPSHARE_SOURCE_DIR") : ".";
  auto fill = [&](std::string s) {
    s = replace_all(s, "{bin}", DEEPSHARE_BIN);
    s = replace_all(s, "{src}", src);
    return replace_all(s, "{d}", d.string());
  };
  const std::string cmd = fill(c.shell) + " " + DEEPSHARE_BIN + " " + fill(c.args) + " > " +
                          (d / "stdout.txt").string() + " 2> " + (d / "stderr.txt").string();
  // In single quotes for system()'s sh, so that `$?` and `'$d'` reach bash as written.
  std::string quoted = "'";
  for (char ch : cmd) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  quoted += "'";
  const int status = std::system(("bash -c " + quoted).c_str());
  // Ended by a signal (a case that sends one): 128 + its number, as a shell reports it.
  const int code = WIFEXITED(status)     ? WEXITSTATUS(status)
                   : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                         : -1;
  const std::string out = read(d / "stdout.txt"), err = read(d / "stderr.txt");
  EXPECT_EQ(code, c.exit_code) << cmd << "\nstderr: " << err.substr(0, 2000);
  const std::string& where = c.exit_code == 0 ? out : err;
  EXPECT_NE(where.find(c.message), std::string::npos)
      << "expected: " << c.message << "\ngot: " << where.substr(0, 2000);
  EXPECT_EQ(err.find("internal error"), std::string::npos) << err.substr(0, 2000);
  if (c.outputs == Outputs::Absent) {
    EXPECT_FALSE(fs::exists(d / "out")) << "outputs left behind by a failed run";
  } else if (c.outputs == Outputs::Complete) {
    check_run_folder(d / "out");
  }
  if (c.check) c.check(d);
  // No temporary file, staging folder or lock file is left (core/cleanup.hpp).
  for (const auto& e : fs::recursive_directory_iterator(d)) {
    const std::string n = e.path().filename().string();
    EXPECT_EQ(n.find(".tmp-"), std::string::npos) << e.path();
    EXPECT_FALSE(n.starts_with(".") && n.ends_with(".lock")) << e.path();
  }
  if (!HasFailure()) fs::remove_all(d);
}

}  // namespace ds::bad_input
