// The bad-input corpus (issue #12): every input a careless or hostile user tried, as one
// table. Each case writes its files into a fresh folder, runs the `deepshare` binary of
// this build (so the ASan+UBSan build runs every case under the sanitizers, where any
// undefined behaviour aborts), and checks three things:
//  1. the exit status (0: a correct result, 2: bad input; never 3, "internal error"),
//  2. the message (a substring of stderr, or of stdout for successful runs),
//  3. the outputs: complete and readable (every CSV strict RFC 4180, as many jobs.csv rows
//     as summary.json's jobs), or absent (no output folder, no temporary file left).
// A case may add its own check of the outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/csv.hpp"

namespace ds {
namespace {
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

const std::string kCluster =  // 28 GPUs, tenants teamA and teamB
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

// A site's Slurm records (`deepshare import slurm`, issue #28).
const std::string kSacctHeader =
    "JobID|JobIDRaw|Account|User|Partition|Submit|Start|End|Elapsed|State|AllocTRES|ReqTRES\n";
const std::string kSacctJob =
    "7|7|alpha|ann|gpu|2026-01-01T00:00:00|2026-01-01T00:00:05|2026-01-01T01:00:05|01:00:00|"
    "COMPLETED|gres/gpu=2|gres/gpu=2\n";
const std::string kAssoc = "Cluster|Account|User|GrpTRES|Share\nc|alpha||gres/gpu=4|1\n";
const std::string kNodesTxt = "NodeName=n1 Gres=gpu:a100:4(S:0) State=IDLE Partitions=gpu\n";
std::string import_slurm(const std::string& extra = "") {
  return "import slurm --sacct {d}/sacct.txt --assoc {d}/assoc.txt --nodes {d}/nodes.txt "
         "--out {d}/out " +
         extra;
}
Files slurm_files(const std::string& sacct, const std::string& assoc = kAssoc,
                  const std::string& nodes = kNodesTxt) {
  return {{"sacct.txt", sacct}, {"assoc.txt", assoc}, {"nodes.txt", nodes}};
}

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
std::string simulate(const std::string& extra = "", const std::string& policy = "fifo-pooled") {
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

// ---- the table ---------------------------------------------------------------------------

std::vector<Case> cases() {
  const std::string huge(10'000'000, 'x');
  return {
      // 1. Times overflow.
      {"VenusDurationBeyondTheRange",
       {{"t.csv", kVenusHeader + "1,u,teamA,1,COMPLETED,0,9223372036854775\n"},
        {"c.yaml", kCluster}},
       "simulate --trace {d}/t.csv --cluster {d}/c.yaml --quiet --out {d}/out",
       2,
       "t.csv:2:25: field 'duration': expected a duration (whole seconds) in 0..10000000000, got "
       "'9223372036854775'"},
      {"VenusSubmitBeyondHundredYears",
       {{"t.csv", kVenusHeader + "1,u,teamA,1,COMPLETED,9300000000000000,5\n"},
        {"c.yaml", kCluster}},
       "simulate --trace {d}/t.csv --cluster {d}/c.yaml --quiet --out {d}/out",
       2,
       "field 'submit_time': expected a time (whole seconds) in -3155760000..3155760000"},
      {"NativeSubmitBeyondHundredYears",
       {{"t.csv", native("j1,teamA,4e9,10,1\n")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "field 'submit_s': expected a submit time in seconds, -3155760000..3155760000, got '4e9'"},
      {"HeliosDateInTheYear2999",
       {{"t.csv",
         "job_id,user,vc,gpu_num,state,submit_time,duration\n"
         "1,u,teamA,1,COMPLETED,2999-01-01 00:00:00,5\n"},
        {"c.yaml", kCluster}},
       "simulate --trace {d}/t.csv --format helios --cluster {d}/c.yaml --quiet --out {d}/out",
       2,
       "from 1869-12-31 to 2070-01-01, got '2999-01-01 00:00:00'"},
      {"OpenbTimeBeyondInt64",
       {{"pods.csv", kPodHeader + "p0,1,1,1,1000,,LS,Succeeded,0,1e300,\n"},
        {"openb_node_list_gpu_node.csv", kNodes}},
       "simulate --trace {d}/pods.csv --format openb --quiet --out {d}/out",
       2,
       "field 'deletion_time': expected a time (whole seconds)"},
      // 2. Memory and time follow the simulated span: bounded now. A job of 9e9 s gives a
      // run of well under a second (no wall-clock assertion here: `timeout` only catches a
      // hang) whose time series stays small, with a coarser interval.
      {"JobOf9e9SecondsHasSmallOutputs",
       {{"t.csv", native("j1,teamA,0,3600,8\nj2,teamB,10,9e9,1\n")}, {"c.yaml", kCluster}},
       simulate(),
       0,
       "jobs 2 (completed 2)",
       Outputs::Complete,
       "exec timeout 60",
       [](const fs::path& d) {
         EXPECT_LT(fs::file_size(d / "out" / "timeseries.csv"), 2'000'000u);
         EXPECT_EQ(job_field(d / "out", "j2", "end_s"), "9000000010");
         const auto s = nlohmann::json::parse(read(d / "out" / "summary.json"));
         EXPECT_GT(s.at("timeseries_interval_s").get<double>(), 600);
       }},
      // srtf with checkpoints 1e9 s apart: a job preempted again during its restart overhead
      // gained a phantom checkpoint interval of work (31 years here; 15 GB on Venus). Job a
      // runs 100 s, is preempted by b, restarts at 110 s, is preempted by c at 120 s (10 s
      // into its 40 s overhead), restarts at 125 s with 1,000 + 30 + 40 s to go.
      {"SrtfPreemptedDuringItsRestartOverheadKeepsItsWork",
       {{"t.csv", native("a,teamA,0,1000,1\nb,teamA,100,10,1\nc,teamA,120,5,1\n")},
        {"c.yaml",
         "nodes:\n  - {count: 1, gpus: 1}\ntenants:\n  - {name: teamA, quota_gpus: 1}\n"}},
       "simulate --trace {d}/t.csv --format native --cluster {d}/c.yaml --policy srtf --set "
       "scope=pooled --checkpoint-interval 1e9 --quiet --out {d}/out",
       0,
       "jobs 3 (completed 3)",
       Outputs::Complete,
       "exec timeout 60",
       [](const fs::path& d) {
         EXPECT_EQ(job_field(d / "out", "a", "end_s"), "1195");
         EXPECT_EQ(job_field(d / "out", "a", "preemptions"), "2");
       }},
      // 3. Write errors: a file-size limit fails jobs.csv's write; nothing half-written stays.
      {"FailedWriteLeavesNoOutputs",
       {{"t.csv", many_jobs(3000)}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "jobs.csv: cannot write: File too large",
       Outputs::Absent,
       "ulimit -f 64;"},
      // 4. Output CSVs are quoted, and the project's readers read them back.
      {"IdWithACommaIsQuotedAndReadBack",
       {{"t.csv", native("\"a,b\",teamA,0,10,1\n\"say \"\"hi\"\"\",teamB,0,10,1\n")},
        {"c.yaml", kCluster}},
       simulate() + " && {bin} report {d}/out",
       0,
       "HTML report:",
       Outputs::Complete,
       "DEEPSHARE_WEB_DIR={src}/web",
       [](const fs::path& d) {
         EXPECT_EQ(job_field(d / "out", "a,b", "tenant"), "teamA");
         EXPECT_EQ(job_field(d / "out", "say \"hi\"", "status"), "completed");
       }},
      // 5. Rows with more or fewer fields than the header.
      {"DecimalCommaIsAnError",
       {{"t.csv", native("j1,teamA,1,5,10,1\n")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "t.csv:2:17: row has 6 fields, the header has 5"},
      {"ShortRowIsAnError",
       {{"t.csv", native("j1,teamA,1,5\n")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "t.csv:2: row has 4 fields, the header has 5"},
      {"ColumnNamedTwice",
       {{"t.csv", "job_id,tenant,submit_s,duration_s,gpus,gpus\nj1,teamA,0,1,1,2\n"},
        {"c.yaml", kCluster}},
       simulate(),
       2,
       "column 'gpus' appears twice in the header"},
      // 6. Options are parsed with ranges.
      {"LoadFactorTiny",
       {{"t.csv", native("j1,teamA,0,10,1\nj2,teamA,100,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--load-factor 1e-300"),
       2,
       "--load-factor: expected a number in 0.001..1000, got '1e-300'"},
      {"LoadFactorStretchesBeyondHundredYears",
       {{"t.csv", native("j1,teamA,0,10,1\nj2,teamA,3e9,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--load-factor 0.5"),
       2,
       "load factor 0.5 stretches the trace's submit times beyond 100 years"},
      {"CheckpointIntervalHuge",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--checkpoint-interval 1e300"),
       2,
       "--checkpoint-interval: expected a number in 0..3155760000"},
      {"JitterHuge",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--jitter 1e300"),
       2,
       "--jitter: expected a number in 0..3155760000"},
      {"JitterBeyondHundredYears",
       {{"t.csv", native("j1,teamA,0,10,1\nj2,teamA,3e9,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--jitter 3e9"),
       2,
       "--jitter 3000000000 moves the trace's submit times beyond 100 years from 1970"},
      {"PackIntervalHuge",
       {{"pods.csv", kPodHeader + "p0,1,1,1,1000,,LS,Succeeded,0,10,\n"},
        {"openb_node_list_gpu_node.csv", kNodes}},
       "pack --trace {d}/pods.csv --policies fifo-pooled --interval 1e300 --out {d}/out",
       2,
       "--interval: expected a number in 0.001..3155760000"},
      {"FitLoadThatWouldCreateMillionsOfNodes",
       {{"t.csv", native("j1,teamA,0,1e9,8\nj2,teamA,100,1e9,8\n")}, {"c.yaml", kCluster}},
       simulate("--fit-load 0.001"),
       2,
       "GPUs and 100000 nodes are allowed"},
      {"ThreadsOutOfRange",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       "compare --trace {d}/t.csv --format native --cluster {d}/c.yaml --threads 100000 --out "
       "{d}/out",
       2,
       "--threads"},
      // 7. GPU counts, quotas and node counts within bounds.
      {"QuotasOfAMillionGpus",
       {{"t.csv", native("j1,teamA,0,10,1\n")},
        {"c.yaml",
         "nodes:\n  - {count: 1, gpus: 8}\ntenants:\n  - {name: teamA, quota_gpus: 1000000}\n"
         "  - {name: teamB, quota_gpus: 1000000}\n  - {name: teamC, quota_gpus: 1000000}\n"}},
       simulate(),
       2,
       "c.yaml:4:31: key 'quota_gpus': expected a GPU count in 0..100000, got '1000000'"},
      {"QuotasAddUpBeyondTheLimit",
       {{"t.csv", native("j1,teamA,0,10,1\n")},
        {"c.yaml",
         [] {
           std::string y = "nodes:\n  - {count: 1, gpus: 8}\ntenants:\n";
           for (int i = 0; i < 11; ++i)
             y += "  - {name: team" + std::string(1, static_cast<char>('A' + i)) +
                  ", quota_gpus: 100000}\n";
           return y;
         }()}},
       simulate(),
       2,
       "the tenants' quotas add up to more than 1000000 GPUs"},
      {"VcConfigOfThreeBillionNodes",
       {{"t.csv", kVenusHeader + "1,u,vcA,1,COMPLETED,0,5\n"},
        {"aux/vc_config.csv", "vc,nodes\nvcA,3000000000\n"}},
       "simulate --trace {d}/t.csv --quiet --out {d}/out",
       2,
       "vc_config.csv:2:5: field 'nodes': expected a node count in 0..100000, got '3000000000'"},
      {"ThirteenMillionNodes",
       {{"t.csv", native("j1,teamA,0,10,1\n")},
        {"c.yaml",
         "nodes:\n  - {count: 13000000, gpus: 8}\ntenants:\n  - {name: teamA, "
         "quota_gpus: 8}\n"}},
       simulate(),
       2,
       "key 'count': expected a node count in 1..100000, got '13000000'"},
      {"NodeGroupsAddUpBeyondTheLimit",
       {{"t.csv", native("j1,teamA,0,10,1\n")},
        {"c.yaml",
         "nodes:\n  - {count: 60000, gpus: 1}\n  - {count: 60000, gpus: 1}\ntenants:\n"
         "  - {name: teamA, quota_gpus: 8}\n"}},
       simulate(),
       2,
       "c.yaml:3:13: the cluster would have more than 100000 nodes (node group #2)"},
      {"JobOfThreeBillionGpus",
       {{"t.csv", native("j1,teamA,0,10,3000000000\n")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "field 'gpus': expected a GPU count in 0..100000, got '3000000000'"},
      // 8. GPU memory given in bytes.
      {"GpuMemoryInBytes",
       {{"t.csv", "job_id,tenant,submit_s,duration_s,gpus,gmem_mib\nj1,teamA,0,10,1,34359738368\n"},
        {"c.yaml", kCluster}},
       simulate(),
       2,
       "field 'gmem_mib': expected GPU memory per GPU in MiB in 0..1048576, got '34359738368'"},
      // 9. DeepShare's --set numbers have ranges.
      {"DeepShareMinRuntimeHuge",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--set min_runtime_s=9223372036854775807", "deepshare"),
       2,
       "--set 'min_runtime_s': expected an integer in 0..3155760000"},
      {"DeepShareNegativeShare",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--set reserve_min=-1", "deepshare"),
       2,
       "--set 'reserve_min': expected a number in 0..1, got '-1'"},
      {"DeepShareEwmaTauZero",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--set ewma_tau_s=0", "deepshare"),
       2,
       "--set 'ewma_tau_s': expected an integer in 1..3155760000, got '0'"},
      {"TiresiasIntervalHuge",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--set interval=1e300", "tiresias"),
       2,
       "--set 'interval': expected a number in 0.001..1000000000, got '1e300'"},
      {"KueueLimitBeyondInt",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--set lending_limit=3000000000", "kueue"),
       2,
       "--set 'lending_limit': expected an integer in -1..100000"},
      // 10. compare folders.
      {"CompareIntoANonEmptyFolderNeedsForce",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}, {"out/old.txt", "mine"}},
       "compare --trace {d}/t.csv --format native --cluster {d}/c.yaml --policies fifo-pooled "
       "--quiet --out {d}/out",
       2,
       "the output folder is not empty (it holds 'old.txt'): choose a new folder, or pass "
       "--force",
       Outputs::Ignore,
       "",
       [](const fs::path& d) { EXPECT_EQ(read(d / "out" / "old.txt"), "mine"); }},
      {"ForceRefusesToDeleteFilesItDidNotWrite",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}, {"out/old.txt", "mine"}},
       "compare --trace {d}/t.csv --format native --cluster {d}/c.yaml --policies fifo-pooled "
       "--quiet --force --out {d}/out",
       2,
       "--force: the folder holds 'old.txt', which DeepShare does not write; refusing to delete",
       Outputs::Ignore,
       "",
       [](const fs::path& d) { EXPECT_EQ(read(d / "out" / "old.txt"), "mine"); }},
      {"ForceReplacesAnEarlierComparison",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       "compare --trace {d}/t.csv --format native --cluster {d}/c.yaml --policies sjf,fifo-pooled "
       "--quiet --out {d}/out > /dev/null && {bin} compare --trace {d}/t.csv --format native "
       "--cluster {d}/c.yaml --policies fifo-pooled --quiet --force --out {d}/out",
       0,
       "Report written to",
       Outputs::Ignore,
       "",
       [](const fs::path& d) {
         EXPECT_FALSE(fs::exists(d / "out" / "sjf@1"));  // the old run is gone
         check_run_folder(d / "out" / "fifo-pooled@1");
       }},
      {"LoadsGivenTwice",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       "compare --trace {d}/t.csv --format native --cluster {d}/c.yaml --loads 1,1 --out "
       "{d}/out",
       2,
       "--loads: 1 is given twice"},
      {"LoadsWithTheSameFolderName",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       "compare --trace {d}/t.csv --format native --cluster {d}/c.yaml --loads 1,1.0000001 "
       "--out {d}/out",
       2,
       "give the same run folder"},
      {"PolicyGivenTwice",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       "compare --trace {d}/t.csv --format native --cluster {d}/c.yaml --policies sjf,sjf --out "
       "{d}/out",
       2,
       "policy 'sjf' is given twice"},
      {"DemoIntoANonEmptyFolder",
       {{"out/notes.txt", "mine"}},
       "demo --days 1 --scale 0.1 --policy fifo-pooled --quiet --out {d}/out",
       2,
       "the output folder is not empty",
       Outputs::Ignore},
      // 11. report validates what it reads; --out ''; huge input is not echoed.
      {"ReportOfASummaryWithWrongTypes",
       run_folder(R"({"policy": "fifo", "trace": 7, "jobs": 1})", kJobsCsv), "report {d}/r", 2,
       "summary.json: key 'trace': expected a string, got a number"},
      {"ReportOfASummaryThatIsNoObject", run_folder("[]", kJobsCsv), "report {d}/r", 2,
       "summary.json: expected a JSON object, got an array"},
      {"ReportOfAShiftedJobsCsv",
       run_folder(R"({"policy": "fifo", "jobs": 1})", kJobsCsv + "j2,a,u,1,1000,0\n"),
       "report {d}/r", 2, "jobs.csv:3: row has 6 fields, the header has 17"},
      {"EmptyOutFolderName",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       "simulate --trace {d}/t.csv --format native --cluster {d}/c.yaml --out ''",
       2,
       "--out: expected a file or folder name, got ''"},
      {"EmptyReportFolderName", {}, "report ''", 2, "expected a file or folder name"},
      {"HugeFieldIsNotEchoed",
       {{"t.csv", native("j1,teamA," + huge + ",10,1\n")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "got 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... "
       "(10000000 bytes)",
       Outputs::Absent,
       "",
       [](const fs::path& d) { EXPECT_LT(fs::file_size(d / "stderr.txt"), 1000u); }},
      {"HugeJobIdIsNotEchoed",
       {{"t.csv", native(huge + ",teamA,0,10,1\n" + huge + ",teamA,0,10,1\n")},
        {"c.yaml", kCluster}},
       simulate(),
       2,
       "duplicate job id 'xxxx",
       Outputs::Absent,
       "",
       [](const fs::path& d) { EXPECT_LT(fs::file_size(d / "stderr.txt"), 1000u); }},
      // Every rejected job has a reason.
      {"RejectedJobHasAReason",
       {{"t.csv", native("small,teamA,0,10,1\nbig,teamB,0,10,64\n")}, {"c.yaml", kCluster}},
       simulate("", "deepshare"),
       0,
       "jobs 2 (completed 1)",
       Outputs::Complete,
       "",
       [](const fs::path& d) {
         EXPECT_EQ(job_field(d / "out", "big", "status"), "rejected");
         EXPECT_EQ(job_field(d / "out", "big", "reason"), "needs 64 GPUs; the cluster has 28");
         EXPECT_EQ(job_field(d / "out", "small", "reason"), "");
       }},
      // More malformed files.
      {"EmptyTrace", {{"t.csv", ""}, {"c.yaml", kCluster}}, simulate(), 2, "file is empty"},
      {"UnterminatedQuote",
       {{"t.csv", native("\"j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "unterminated quoted field"},
      {"BinaryGarbage",
       {{"t.csv", std::string("\x7f"
                              "ELF\x02\x01\x01\0\0\0",
                              10)},
        {"c.yaml", kCluster}},
       simulate(),
       2,
       "missing column 'job_id'"},
      {"ControlCharactersAreEscapedInMessages",
       {{"t.csv", native("j1,teamA,\x1b[31mred,10,1\n")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "got '\\x1b[31mred'"},
      {"ClusterFileIsNotYaml",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", "nodes: [\n"}},
       simulate(),
       2,
       "c.yaml:2:1: invalid YAML"},
      {"ClusterFileNestedTooDeep",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", std::string(100'000, '[')}},
       simulate(),
       2,
       "c.yaml:1:1: invalid YAML"},
      {"ClusterFileHugeGpuMemory",
       {{"t.csv", native("j1,teamA,0,10,1\n")},
        {"c.yaml",
         "nodes:\n  - {count: 1, gpus: 8, gpu_memory_gib: 1e300}\ntenants:\n"
         "  - {name: teamA, quota_gpus: 8}\n"}},
       simulate(),
       2,
       "key 'gpu_memory_gib': expected GiB in 0.000976562..1024, got '1e300'"},
      {"ClusterFileHugeSlo",
       {{"t.csv", native("j1,teamA,0,10,1\n")},
        {"c.yaml",
         "nodes:\n  - {count: 1, gpus: 8}\ntenants:\n"
         "  - {name: teamA, quota_gpus: 8, slo_queue_s: 1e300}\n"}},
       simulate(),
       2,
       "key 'slo_queue_s': expected seconds in 0..3155760000, got '1e300'"},
      {"OutputFolderIsAFile",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}, {"out", "a file"}},
       simulate(),
       2,
       "cannot create output folder",
       Outputs::Ignore},
      {"TraceStatsOfABadTrace",
       {{"t.csv", native("j1,teamA,-1e300,10,1\n")}, {"c.yaml", kCluster}},
       "trace stats {d}/t.csv --format native --cluster {d}/c.yaml",
       2,
       "field 'submit_s': expected a submit time in seconds"},
      {"InvalidUtf8InNamesKeepsSummaryValidJson",
       {{"t.csv", native("j\xff\xfe,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate(),
       0,
       "jobs 1 (completed 1)",
       Outputs::Complete},
      // 3. A site's Slurm records (issue #28): file, line, column and field; nothing written.
      {"SlurmSacctTimeThatIsNoDate",
       slurm_files(kSacctHeader + "7|7|alpha|ann|gpu|2026-02-30T00:00:00|None|None|00:00:00|"
                                  "PENDING||gres/gpu=1\n"),
       import_slurm(), 2,
       "sacct.txt:2:19: field 'Submit': expected a time 'YYYY-MM-DDTHH:MM:SS' from 1869-12-31 "
       "to 2070-01-01, or Unknown"},
      {"SlurmSacctValueHoldingABar",
       slurm_files(kSacctHeader + "7|7|al|pha|ann|gpu|2026-01-01T00:00:00|None|None|00:00:00|"
                                  "PENDING||gres/gpu=1\n"),
       import_slurm(), 2,
       "sacct.txt:2:68: row has 13 fields, the header has 12 (a value holding '|'"},
      {"SlurmSacctWithoutHeader", slurm_files(kSacctJob), import_slurm(), 2,
       "sacct.txt:1:3: column '7' appears twice in the header (columns 1 and 2): the first line "
       "must be the header that sacct --parsable2"},
      {"SlurmSacctNoGpuAnywhere",
       slurm_files(kSacctHeader +
                   "7|7|alpha|ann|gpu|2026-01-01T00:00:00|2026-01-01T00:00:05|"
                   "2026-01-01T01:00:05|01:00:00|COMPLETED|cpu=2,mem=4G|cpu=2,mem=4G\n"),
       import_slurm(), 2,
       "no job to import (1 no GPUs (CPU-only)); jobs need gres/gpu in AllocTRES or ReqTRES"},
      {"SlurmSacctBadGpuCount",
       slurm_files(kSacctHeader + "7|7|alpha|ann|gpu|2026-01-01T00:00:00|2026-01-01T00:00:05|"
                                  "2026-01-01T01:00:05|01:00:00|COMPLETED|gres/gpu=3000000000|\n"),
       import_slurm(), 2, "field 'AllocTRES': expected a GPU count in 0..100000 for 'gres/gpu'"},
      {"SlurmAssocOfTwoClusters",
       slurm_files(kSacctHeader + kSacctJob, kAssoc + "d|beta||gres/gpu=2|1\n"), import_slurm(), 2,
       "assoc.txt:3:1: field 'Cluster': expected one cluster per file"},
      {"SlurmAssocShareNotANumber",
       slurm_files(kSacctHeader + kSacctJob, "Account|Share\nalpha|lots\n"), import_slurm(), 2,
       "assoc.txt:2:7: field 'Share': expected a fair-share value 0..1e9 or parent"},
      {"SlurmNodesThatAreACsv", slurm_files(kSacctHeader + kSacctJob, kAssoc, "name,gpus\nn1,4\n"),
       import_slurm(), 2,
       "nodes.txt:1:1: expected `scontrol show nodes` output, which starts with NodeName="},
      {"SlurmGpuMemoryOutOfRange", slurm_files(kSacctHeader + kSacctJob),
       import_slurm("--gpu-memory a100=0"), 2,
       "--gpu-memory 'a100=0': expected MODEL=GIB with GIB in 0.000976562..1024"},
      {"SlurmWithoutAssociations", slurm_files(kSacctHeader + kSacctJob),
       "import slurm --sacct {d}/sacct.txt --nodes {d}/nodes.txt --out {d}/out", 2,
       "--assoc is required"},
      {"SlurmImportWritesNativeFilesOnce", slurm_files(kSacctHeader + kSacctJob), import_slurm(), 0,
       "imported 1 jobs of 1 tenants on 1 nodes (4 GPUs)", Outputs::Ignore, "",
       [](const fs::path& d) {
         EXPECT_EQ(read(d / "out" / "trace.csv"),
                   "job_id,tenant,submit_s,duration_s,gpus,user,state,slurm_first_start_s,"
                   "slurm_start_s,slurm_end_s,slurm_time_limit_s,slurm_runs\n"
                   "7,alpha,1767225600,3600,2,ann,COMPLETED,1767225605,1767225605,1767229205,,1\n");
         EXPECT_NE(read(d / "out" / "cluster.yaml").find("gpu_type: \"a100\""), std::string::npos);
         const std::string again = std::string(DEEPSHARE_BIN) + " " +
                                   replace_all(import_slurm(), "{d}", d.string()) +
                                   " > /dev/null 2> " + (d / "again.txt").string();
         EXPECT_EQ(WEXITSTATUS(std::system(again.c_str())), 2);
         EXPECT_NE(read(d / "again.txt").find("exists already (pass --force"), std::string::npos);
       }},
  };
}

// gtest names a failing case by this, not by a dump of its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class BadInput : public ::testing::TestWithParam<Case> {};

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
  const int status = std::system(("bash -c " + nlohmann::json(cmd).dump()).c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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
  for (const auto& e : fs::recursive_directory_iterator(d))  // no temporary file is left
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
  if (c.check) c.check(d);
  if (!HasFailure()) fs::remove_all(d);
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace ds
