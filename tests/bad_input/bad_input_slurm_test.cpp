// The bad-input corpus of issue #26, item 2: `excerpt`, `fidelity` and `slurm replay`
// checked no numbers and trusted replay folders. Every option is range-checked now (nan,
// inf, negative values and wrapped integers are errors), `--tolerance` can no longer make a
// gate that cannot fail, and a replay folder is read as a checked input (its contents:
// src/replay/replay_folder_test.cpp, which builds replay folders without Slurm). No case
// needs Slurm. The harness: harness.hpp.
#include "harness.hpp"

namespace ds::bad_input {
namespace {

const std::string kController =
    "partition: batch\npolicy: fifo-pooled\ntenant_source: config\n"
    "tenants:\n  - {name: a, account: a, trace: vcA, quota_gpus: 8}\n";
const std::string kTrace =
    "job_id,user,vc,gpu_num,state,submit_time,duration\n"
    "1,u,vcA,1,COMPLETED,0,300\n2,u,vcA,2,COMPLETED,30,400\n3,u,vcA,4,COMPLETED,60,500\n";
const Files kExcerptInputs = {
    {"t.csv", kTrace}, {"aux/vc_config.csv", "vc,nodes\nvcA,1\n"}, {"c.yaml", kController}};

std::string excerpt(const std::string& extra) {
  return "excerpt --config {d}/c.yaml --trace {d}/t.csv --ensemble 2 " + extra;
}

Case bad_excerpt(const std::string& name, const std::string& extra, const std::string& message) {
  return {name, kExcerptInputs, excerpt(extra), 2, message};
}

std::vector<Case> slurm_cases() {
  return {
      {"ExcerptIsSimulated", kExcerptInputs, excerpt("--excerpt jobs=3"), 0,
       "excerpt from=0,jobs=3,load=1,min=5,max=0: 3 jobs"},
      bad_excerpt("ExcerptJobsMinusOne", "--excerpt jobs=-1",
                  "--excerpt 'jobs=-1': expected a job count in 1..10000000, got '-1'"),
      bad_excerpt("ExcerptFromMinusOne", "--excerpt from=-1",
                  "--excerpt 'from=-1': expected a job index in 0..10000000, got '-1'"),
      bad_excerpt("ExcerptLoadNan", "--excerpt load=nan",
                  "--excerpt 'load=nan': expected a load factor in 0.001..1000, got 'nan'"),
      bad_excerpt("ExcerptLoadInf", "--excerpt load=inf", "got 'inf'"),
      bad_excerpt("ExcerptMinNegative", "--excerpt min=-5",
                  "--excerpt 'min=-5': expected wall seconds in 0..1000000, got '-5'"),
      bad_excerpt("ExcerptMaxBelowMin", "--excerpt min=10,max=5",
                  "--excerpt: max=5 is below min=10"),
      bad_excerpt("ExcerptKeyTwice", "--excerpt jobs=3,jobs=4", "key 'jobs' is given twice"),
      bad_excerpt("ExcerptTrailingJunk", "--excerpt jobs=3x", "got '3x'"),
      bad_excerpt("ExcerptTimeScaleZero", "--time-scale 0",
                  "--time-scale: expected a number in 0.001..1000000, got '0'"),
      bad_excerpt("ExcerptTimeScaleNan", "--time-scale nan", "got 'nan'"),
      bad_excerpt("ExcerptStartLatencyNan", "--start-latency nan",
                  "--start-latency: expected a number in 0..3600, got 'nan'"),
      bad_excerpt("ExcerptJitterInf", "--jitter inf", "--jitter: expected a number in 0..3600"),
      bad_excerpt("ExcerptOverhangNegative", "--overhang -1",
                  "--overhang: expected a number in 0..3600, got '-1'"),
      bad_excerpt("ExcerptEnsembleMinusOne", "--ensemble -1",
                  "--ensemble: expected a whole number in 0..10000, got '-1'"),
      bad_excerpt("ExcerptSeedMinusOne", "--seed -1",
                  "--seed: expected a whole number in 0..18446744073709551615, got '-1'"),
      bad_excerpt("ExcerptNodesNegative", "--nodes -1x4", "--nodes '-1x4': expected NODESxGPUS"),
      bad_excerpt("ExcerptNodesOfNoGpus", "--nodes 4x0", "--nodes '4x0': expected NODESxGPUS"),
      bad_excerpt("ExcerptNodesTooMany", "--nodes 100000x64", "at most 100000 GPUs"),
      {"ExcerptOutIsARunFolder", kExcerptInputs, excerpt("--excerpt jobs=3 --out {d}/out"), 0,
       "3 jobs", Outputs::Complete},
      {"ExcerptOutOverItsConfig",
       {{"t.csv", kTrace},
        {"aux/vc_config.csv", "vc,nodes\nvcA,1\n"},
        {"out/summary.json", "{}"},
        {"out/jobs.csv", "x"}},
       "excerpt --config {d}/out/jobs.csv --trace {d}/t.csv --out {d}/out",
       2,
       "",  // the config is no YAML; either refusal is fine, the folder must stay
       Outputs::Ignore,
       "",
       [](const fs::path& d) { EXPECT_EQ(read(d / "out" / "jobs.csv"), "x"); }},
      // fidelity: a gate that cannot fail is no longer accepted.
      {"FidelityToleranceNan",
       {},
       "fidelity --replay {d}/r --tolerance nan",
       2,
       "--tolerance: expected a number in 0..10, got 'nan'"},
      {"FidelityToleranceNegative",
       {},
       "fidelity --replay {d}/r --tolerance -1",
       2,
       "--tolerance: expected a number in 0..10, got '-1'"},
      {"FidelityToleranceInf",
       {},
       "fidelity --replay {d}/r --tolerance inf",
       2,
       "--tolerance: expected a number in 0..10, got 'inf'"},
      {"FidelityStartLatencyNan",
       {},
       "fidelity --replay {d}/r --start-latency nan",
       2,
       "--start-latency: expected a number in 0..3600"},
      {"FidelityEnsembleMinusOne",
       {},
       "fidelity --replay {d}/r --ensemble -1",
       2,
       "--ensemble: expected a whole number in 0..10000, got '-1'"},
      // fidelity reads a replay folder as a checked input and creates nothing before.
      {"FidelityOfAMissingReplayFolderCreatesNothing",
       {},
       "fidelity --replay {d}/r --out {d}/out",
       2,
       "r: not a folder (the --out of `deepshare slurm replay`)"},
      {"FidelityOfAFolderWithoutManifest",
       {{"r/replay.json", "{}"}, {"r/observed.csv", "job\n"}},
       "fidelity --replay {d}/r",
       2,
       "r/manifest.json: missing: the folder is incomplete",
       Outputs::Absent,
       "",
       [](const fs::path& d) { EXPECT_FALSE(fs::exists(d / "r" / "fidelity")); }},
      {"FidelityOfARunFolderInsteadOfAReplay", kExcerptInputs,
       excerpt("--excerpt jobs=3 --out {d}/r") + " > /dev/null && {bin} fidelity --replay {d}/r", 2,
       "r/manifest.json: describes a 'run' folder, not the outputs of `slurm replay`",
       Outputs::Absent, "",
       [](const fs::path& d) { EXPECT_FALSE(fs::exists(d / "r" / "fidelity")); }},
  };
}

INSTANTIATE_TEST_SUITE_P(Round2Slurm, BadInput, ::testing::ValuesIn(slurm_cases()), case_name);

}  // namespace
}  // namespace ds::bad_input
