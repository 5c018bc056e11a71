// The bad-input corpus of issue #26 ("Bad input, round two"), by the items: mixed
// node sizes, the generator's budgets, outputs that are complete or absent (failures,
// signals, concurrent runs, --out over an input or an earlier run), `report` on
// inconsistent folders, and the smaller items. The Slurm tools' cases (excerpt, fidelity,
// replay folders) are in bad_input_slurm_test.cpp. The harness: harness.hpp.
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness.hpp"

namespace ds::bad_input {
namespace {

// Tenant teamA owns one 4-GPU and one 2-GPU node: a 6-GPU job spans both.
const std::string kMixed =
    "nodes:\n"
    "  - {count: 1, gpus: 4, tenant: teamA}\n"
    "  - {count: 1, gpus: 2, tenant: teamA}\n"
    "tenants:\n"
    "  - {name: teamA, quota_gpus: 6}\n";

std::string compare(const std::string& policies, const std::string& out = "out",
                    const std::string& trace = "t.csv") {
  return "compare --trace {d}/" + trace + " --format native --cluster {d}/c.yaml --policies " +
         policies + " --quiet --out {d}/" + out;
}

// The status of job `job` in every run folder of the comparison `dir`.
void expect_completed_everywhere(const fs::path& dir, const std::string& job) {
  int runs = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_directory()) continue;
    ++runs;
    EXPECT_EQ(job_field(e.path(), job, "status"), "completed") << e.path();
  }
  EXPECT_GT(runs, 0);
}

std::vector<Case> mixed_and_generator_cases() {
  return {
      // Item 1: a 6-GPU job on a 4- and a 2-GPU node was never started and never rejected.
      {"SixGpusOnAFourAndATwoGpuNodeStartUnderEveryPolicy",
       {{"t.csv", native("big,teamA,0,100,6\nsmall,teamA,10,100,3\n")}, {"c.yaml", kMixed}},
       compare("fifo-isolated,fifo-pooled,sjf,srtf,qssf,tiresias,lucid,kueue,deepshare"),
       0,
       "Report written to",
       Outputs::Ignore,
       "exec timeout 120",
       [](const fs::path& d) { expect_completed_everywhere(d / "out", "big"); }},
      // ... or spun to the 10,000-year stop (lucid, tiresias with the pooled scope).
      {"SixGpusOnMixedNodesUnderPooledScopes",
       {{"t.csv", native("big,teamA,0,100,6\nsmall,teamA,10,100,3\n")}, {"c.yaml", kMixed}},
       compare("lucid,tiresias,sjf,srtf") + " --set scope=pooled",
       0,
       "Report written to",
       Outputs::Ignore,
       "exec timeout 120",
       [](const fs::path& d) { expect_completed_everywhere(d / "out", "big"); }},
      // Item 3: the generator's budgets always terminate.
      {"GeneratorTinyLoadTerminates",
       {},
       "trace stats --generated --load 1e-6",
       0,
       "offered load",
       Outputs::Ignore,
       "exec timeout 60"},
      {"GeneratorTinySpanHasNoJob",
       {},
       "trace stats --generated --days 1e-9",
       2,
       "give no job: every tenant's budget is below one GPU-second",
       Outputs::Ignore,
       "exec timeout 60"},
      {"GeneratorSeedMinusOne",
       {},
       "trace stats --generated --days 1 --seed -1",
       2,
       "--seed: expected a whole number in 0..18446744073709551615, got '-1'"},
      {"SimulateSeedMinusOne",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--seed -1"),
       2,
       "--seed: expected a whole number in 0..18446744073709551615, got '-1'"},
      {"GeneratedSpecSeedMinusOne",
       {},
       "simulate --generated seed=-1 --quiet --out {d}/out",
       2,
       "--generated 'seed=-1': expected a seed in 0..18446744073709551615, got '-1'"},
      {"GeneratedSpecDaysNan",
       {},
       "simulate --generated days=nan --quiet --out {d}/out",
       2,
       "--generated 'days=nan': expected days in 0..366, got 'nan'"},
      {"GeneratedSpecKeyTwice",
       {},
       "simulate --generated seed=1,seed=2 --quiet --out {d}/out",
       2,
       "--generated: key 'seed' is given twice"},
  };
}

std::vector<Case> output_cases() {
  const std::string two = native("j1,teamA,0,10,1\nj2,teamB,5,20,2\n");
  return {
      // Item 4: a signal during the write phase leaves no folder and no hidden file.
      {"SignalDuringTheWritePhaseLeavesNothing",
       {{"t.csv", two}, {"c.yaml", kCluster}},
       simulate(),
       143,
       "",
       Outputs::Absent,
       "DEEPSHARE_FAULT_SIGNAL_AFTER=jobs.csv"},
      // ... and an earlier comparison survives an interrupted `compare --force`, which a
      // later `compare --force` then replaces.
      {"SignalDuringCompareForceKeepsTheEarlierComparison",
       {{"t.csv", two}, {"c.yaml", kCluster}},
       compare("sjf") + " > /dev/null; DEEPSHARE_FAULT_SIGNAL_AFTER=comparison.md {bin} " +
           compare("fifo-pooled") + " --force > /dev/null 2>&1; echo $? > {d}/interrupted; " +
           "test -f {d}/out/sjf@1/manifest.json && {bin} " + compare("fifo-pooled") + " --force",
       0,
       "Report written to",
       Outputs::Ignore,
       "",
       [](const fs::path& d) {
         EXPECT_EQ(read(d / "interrupted"), "143\n");
         EXPECT_FALSE(fs::exists(d / "out" / "sjf@1"));
         check_run_folder(d / "out" / "fifo-pooled@1");
       }},
      // A report killed while writing report.html inside a comparison leaves no temporary
      // file there, so `compare --force` still accepts the folder as its own.
      {"SignalWhileWritingAReportDoesNotBlockForce",
       {{"t.csv", two}, {"c.yaml", kCluster}},
       compare("sjf") + " > /dev/null; DEEPSHARE_FAULT_SIGNAL_AFTER=report.html {bin} report " +
           "{d}/out > /dev/null 2>&1; echo $? > {d}/interrupted; {bin} " + compare("sjf") +
           " --force",
       0,
       "Report written to",
       Outputs::Ignore,
       "export DEEPSHARE_WEB_DIR={src}/web;",
       [](const fs::path& d) {
         EXPECT_EQ(read(d / "interrupted"), "143\n");
         check_run_folder(d / "out" / "sjf@1");
       }},
      // Two commands writing one folder: the second is refused at once (the first holds
      // the folder's lock; here a stand-in holds it).
      {"SecondCommandIntoTheSameFolderIsRefused",
       {{"t.csv", two}, {"c.yaml", kCluster}},
       compare("sjf"),
       2,
       "another deepshare command is writing this folder now",
       Outputs::Absent,
       "(flock {d}/.out.lock -c 'touch {d}/held; sleep 2'; touch {d}/released) & "
       "while [ ! -e {d}/held ]; do sleep 0.05; done;",
       [](const fs::path& d) {
         for (int i = 0; i < 600 && !fs::exists(d / "released"); ++i)
           std::this_thread::sleep_for(std::chrono::milliseconds(50));
         fs::remove(d / ".out.lock");  // the stand-in's, not ours
       }},
      // simulate --out over its own input, over a folder with other files, over an earlier run.
      {"SimulateDoesNotReplaceAFolderHoldingItsInput",
       {{"o/jobs.csv", two}, {"o/summary.json", "{}"}, {"c.yaml", kCluster}},
       "simulate --trace {d}/o/jobs.csv --format native --cluster {d}/c.yaml --quiet --out {d}/o",
       2,
       "an input of this command; replacing the folder would delete it",
       Outputs::Ignore,
       "",
       [](const fs::path& d) {
         EXPECT_EQ(read(d / "o" / "jobs.csv"), native("j1,teamA,0,10,1\nj2,teamB,5,20,2\n"));
       }},
      {"SimulateRefusesAFolderWithOtherFiles",
       {{"t.csv", two}, {"c.yaml", kCluster}, {"out/notes.txt", "mine"}},
       simulate(),
       2,
       "the folder holds 'notes.txt', which DeepShare does not write",
       Outputs::Ignore,
       "",
       [](const fs::path& d) { EXPECT_EQ(read(d / "out" / "notes.txt"), "mine"); }},
      {"SimulateReplacesAnEarlierRunWithoutItsStaleFiles",
       {{"t.csv", two}, {"c.yaml", kCluster}},
       simulate() + " > /dev/null && echo old > {d}/out/report.html && {bin} " +
           simulate("", "sjf"),
       0,
       "jobs 2 (completed",
       Outputs::Complete,
       "",
       [](const fs::path& d) {
         EXPECT_FALSE(fs::exists(d / "out" / "report.html"));  // it described the old run
         EXPECT_NE(read(d / "out" / "summary.json").find("\"policy\": \"sjf\""), std::string::npos);
       }},
      {"FailedRunLeavesNoStagingFolder",
       {{"t.csv", two}, {"c.yaml", kCluster}},
       simulate("--set no_such_key=1"),
       2,
       "no_such_key"},
      {"OutputFolderNamedDot",
       {{"t.csv", two}, {"c.yaml", kCluster}},
       "simulate --trace {d}/t.csv --format native --cluster {d}/c.yaml --quiet --out .",
       2,
       "name a folder of its own",
       Outputs::Ignore},
  };
}

// Item 5: `report` refuses folders that are incomplete or not of one run.
std::vector<Case> report_cases() {
  const std::string two = native("j1,teamA,0,10,1\nj2,teamB,5,20,2\n");
  const Files both = {{"t.csv", two},
                      {"t2.csv", native("j1,teamA,0,10,1\nj2,teamB,5,20,4\n")},
                      {"c.yaml", kCluster}};
  return {
      {"ReportOfAnEmptySummary", run_folder("{}", kJobsCsv), "report {d}/r", 2,
       "summary.json: missing key 'policy'"},
      {"ReportOfAnInterruptedComparison",  // a comparison folder without its manifest
       both,
       simulate() + " > /dev/null && mkdir {d}/cmp && mv {d}/out {d}/cmp/fifo-pooled@1 && " +
           "echo policy,load > {d}/cmp/comparison.csv && {bin} report {d}/cmp",
       2, "cmp/manifest.json: missing: the folder is incomplete"},
      {"ReportOfASummaryWhoseCountsWereChanged", both,
       simulate() +
           " > /dev/null && sed -i 's/\"jobs\": 2,/\"jobs\": 3,/' {d}/out/summary.json && " +
           "{bin} report {d}/out",
       2, "summary.json: changed since it was written", Outputs::Ignore},
      {"ReportOfAJobsCsvCutAtARowBoundary", both,
       simulate() + " > /dev/null && sed -i '$d' {d}/out/jobs.csv && {bin} report {d}/out", 2,
       "cut short or changed since it was written", Outputs::Ignore},
      {"ReportOfAComparisonThatLostARun", both,
       compare("sjf,fifo-pooled") + " > /dev/null && rm -r {d}/out/sjf@1 && {bin} report {d}/out",
       2, "out/sjf@1: missing, though", Outputs::Ignore},
      {"ReportOfAComparisonHoldingARunOfAnotherTrace", both,
       compare("sjf,fifo-pooled") + " > /dev/null && {bin} " + compare("sjf", "b", "t2.csv") +
           " > /dev/null && rm -r {d}/out/sjf@1 && cp -r {d}/b/sjf@1 {d}/out/ && {bin} report " +
           "{d}/out",
       2, "this run simulated another workload than the comparison it is in", Outputs::Ignore},
      {"ReportOfAComparisonWithAnExtraRun", both,
       compare("sjf") + " > /dev/null && {bin} " + compare("sjf", "b", "t2.csv") +
           " > /dev/null && cp -r {d}/b/sjf@1 {d}/out/extra && {bin} report {d}/out",
       2, "out/extra: is not part of the results", Outputs::Ignore},
  };
}

// Item 6: the smaller items.
std::vector<Case> smaller_cases() {
  const std::string dup = "nodes:\n  - {count: 1, gpus: 8}\ntenants:\n";
  return {
      {"ColumnsTwoFieldsOneColumn",
       {{"t.csv", native("j1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate("--columns job_id=tenant"),
       2,
       "fields 'job_id' and 'tenant' would both read column 'tenant'"},
      {"ColumnsLeaveAnOptionalFieldOut",
       {{"t.csv", "job_id,tenant,submit_s,duration_s,gpus,user\nj1,x,0,10,1,teamA\n"},
        {"c.yaml", kCluster}},
       simulate("--columns tenant=user,user="),
       0,
       "jobs 1 (completed 1)",
       Outputs::Complete},
      {"OpenbPodScheduledBeforeItsCreation",
       {{"pods.csv", kPodHeader + "p0,1,1,1,1000,,LS,Succeeded,100,200,50\n"},
        {"openb_node_list_gpu_node.csv", kNodes}},
       "simulate --trace {d}/pods.csv --format openb --quiet --out {d}/out",
       2,
       "field 'scheduled_time': pod 'p0' is scheduled at 50 s, before it was created (100 s)"},
      {"ClusterFileWithASecondDocument",
       {{"t.csv", native("j1,teamA,0,10,1\n")},
        {"c.yaml", kCluster + "---\nnodes:\n  - {count: 100, gpus: 8}\n"}},
       simulate(),
       2,
       "c.yaml:8:1: a second YAML document"},
      {"TenantNamesEqualButForCase",
       {{"t.csv", native("j1,teamA,0,10,1\n")},
        {"c.yaml", dup + "  - {name: teamA, quota_gpus: 4}\n  - {name: TEAMA, quota_gpus: 4}\n"}},
       simulate(),
       2,
       "tenant 'TEAMA' and tenant 'teamA' differ only in case or Unicode form"},
      {"TenantNameWithATrailingSpace",
       {{"t.csv", native("j1,teamA,0,10,1\n")},
        {"c.yaml", dup + "  - {name: \"teamA \", quota_gpus: 4}\n"}},
       simulate(),
       2,
       "key 'name': 'teamA ' starts or ends with white space"},
      {"TenantNamesEqualButForUnicodeNormalisation",  // composed and decomposed e-acute
       {{"t.csv", native("j1,caf\xc3\xa9,0,10,1\n")},
        {"c.yaml", dup + "  - {name: \"caf\xc3\xa9\", quota_gpus: 4}\n"
                         "  - {name: \"cafe\xcc\x81\", quota_gpus: 4}\n"}},
       simulate(),
       2,
       "differ only in case or Unicode form"},
      {"TraceTenantThatDiffersOnlyInCase",
       {{"t.csv", native("j1,teama,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "tenant 'teama' (did you mean 'teamA'?) (1 jobs, e.g. job 'j1')"},
      {"StrayQuoteInAnUnquotedField",
       {{"t.csv", native("j\"1,teamA,0,10,1\n")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "t.csv:2:2: a double quote inside an unquoted field"},
      {"HeaderOnlyTrace",
       {{"t.csv", native("")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "t.csv: holds no GPU job to simulate (only a header)"},
      {"TraceOfCpuJobsOnly",
       {{"t.csv", native("j1,teamA,0,10,0\n")}, {"c.yaml", kCluster}},
       simulate(),
       2,
       "holds no GPU job to simulate; native: skipped 1 CPU-only jobs"},
      {"ClusterWithoutGpus",
       {{"pods.csv", kPodHeader + "p0,1,1,1,1000,,LS,Succeeded,0,10,\n"},
        {"openb_node_list_gpu_node.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,1,1,0,T4\n"}},
       "simulate --trace {d}/pods.csv --format openb --quiet --out {d}/out",
       2,
       "the cluster has no GPU"},
      // The venus format holds GPU jobs only (Lucid's preparation dropped CPU jobs): a 0
      // there is an error, as docs/formats.md's range table says, not a skipped row.
      {"VenusJobWithoutGpus",
       {{"t.csv", kVenusHeader + "1,u,teamA,0,COMPLETED,0,5\n"}, {"c.yaml", kCluster}},
       "simulate --trace {d}/t.csv --cluster {d}/c.yaml --quiet --out {d}/out",
       2,
       "field 'gpu_num': expected a GPU count in 1..100000, got '0'"},
  };
}

std::vector<Case> all_cases() {
  std::vector<Case> all;
  for (auto* part : {&mixed_and_generator_cases, &output_cases, &report_cases, &smaller_cases})
    for (auto& c : (*part)()) all.push_back(std::move(c));
  return all;
}

INSTANTIATE_TEST_SUITE_P(Round2, BadInput, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace ds::bad_input
