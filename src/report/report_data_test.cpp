// Tests of the report's data object (read from a small comparison folder written here)
// and of the page writer (placeholders, escaping, missing chart library).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/manifest.hpp"
#include "report/report_data.hpp"
#include "report/report_html.hpp"

namespace ds::report {
namespace {

namespace fs = std::filesystem;
using J = nlohmann::ordered_json;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string summary(const std::string& policy, double avg_queue, double occupancy,
                    const std::string& extra) {
  return R"({"policy": ")" + policy + R"(", "trace": "traces/unit<b>.csv", "format": "native",
    "load_factor": 1, "seed": 5, "options": {}, "jobs": 3, "jobs_completed": 2,
    "avg_queue_s": )" +
         std::to_string(avg_queue) + R"(, "gpu_occupancy_full": )" + std::to_string(occupancy) +
         R"(, "preemptions": 1, "first_submit_s": 100, "version": "0.1.0",
    "wall_seconds": 0.5, "policy_metrics": {)" +
         extra + R"(},
    "tenants": [{"name": "a", "quota_gpus": 8, "avg_queue_s": 10},
                {"name": "b", "quota_gpus": 4, "avg_queue_s": )" +
         std::to_string(avg_queue) + "}]}";
}

const char* kJobs =
    "job_id,tenant,user,gpus,gpu_milli,submit_s,start_s,end_s,queue_s,jct_s,preemptions,"
    "lost_work_s,max_slowdown,entitled,status,trace_state\n"
    "j1,a,u,2,0,100,100,400,0,300,0,0,1,1,completed,\n"
    "j2,b,u,4,0,100,160,1300,60,1200,1,900,1,1,completed,\n"
    "j3,b,u,1,0,200,,,,,0,0,1,0,never_started,\n";

std::string timeseries(bool assurance) {
  std::string s =
      "time_s,scope,gpus,busy_gpus,allocated_gpus,occupancy,sm_util,running_jobs,"
      "pending_jobs,pending_gpus,borrowed_gpus,lent_gpus,reserve_gpus,assurance\n";
  for (int t = 0; t <= 1200; t += 600) {
    const std::string ts = std::to_string(t);
    s += ts + ",cluster,12,6,6,0.5,0.4,1,0,0,,,,\n";
    s += ts + ",a,8,2,2,0.25,,1,0,0,0,2,0," + (assurance ? "0.9" : "") + "\n";
    s += ts + ",b,4,4,4,1,,1,0,0,2,0,0," + (assurance ? "0.7" : "") + "\n";
  }
  return s;
}

// The manifests a command writes last (core/manifest.hpp): the files' sizes and digests and
// the identity the report checks against summary.json and jobs.csv.
void seal_folder(const fs::path& dir, const std::string& kind, nlohmann::json identity,
                 std::vector<std::string> folders = {}) {
  Manifest m;
  m.kind = kind;
  m.command = "test";
  m.version = "0";
  m.identity = std::move(identity);
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (!e.is_regular_file() || n == kManifestName || n == "report.html") continue;
    ManifestEntry f{n, 0, ""};
    f.digest = file_digest(e.path(), &f.bytes);
    m.files.push_back(f);
  }
  m.folders = std::move(folders);
  write(dir / kManifestName, m.json());
}

void seal(const fs::path& d) {
  for (const auto& [run, policy] : {std::pair{"zeta", "fifo"}, std::pair{"alpha", "deepshare"}})
    seal_folder(d / run, "run",
                {{"policy", policy},
                 {"trace", "traces/unit<b>.csv"},
                 {"jobs", 3},
                 {"workload_digest", "w"}});
  seal_folder(d, "comparison", {{"workload_digest", "w"}}, {"zeta", "alpha"});
}

// A folder per test: CTest runs the tests of this binary in parallel processes.
fs::path make_folder() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path d = fs::temp_directory_path() / (std::string("ds_report_data_test_") +
                                                  info->test_suite_name() + "_" + info->name());
  fs::remove_all(d);
  write(d / "comparison.csv", "policy,jobs\nzeta,3\nalpha,3\n");
  write(d / "zeta" / "summary.json", summary("fifo", 20, 0.5, ""));
  write(d / "zeta" / "jobs.csv", kJobs);
  write(d / "zeta" / "timeseries.csv", timeseries(false));
  write(d / "alpha" / "summary.json",
        summary("deepshare", 30, 0.75, R"("predictor_within_2x": 0.8, "reclaims": 2)"));
  write(d / "alpha" / "jobs.csv", kJobs);
  write(d / "alpha" / "timeseries.csv", timeseries(true));
  write(d / "workload.md", "# workload</script>\n");
  seal(d);
  return d;
}

TEST(ReportData, ReadsAComparisonFolderInComparisonOrder) {
  const auto j = build_report_data(make_folder().string());
  EXPECT_EQ(j["schema"], 1);
  EXPECT_EQ(j["policies"], J::array({"zeta", "alpha"}));
  EXPECT_EQ(j["meta"]["gpus"], 12);
  EXPECT_EQ(j["meta"]["origin_s"], 0);  // the first sample precedes the first submit
  EXPECT_EQ(j["workload_md"], "# workload</script>\n");

  const auto& h = j["headline"];
  ASSERT_EQ(h["metrics"][0]["key"], "avg_queue_s");
  EXPECT_EQ(h["values"][0], J::array({20.0, 30.0}));
  EXPECT_EQ(h["best"][0], J::array({0}));  // lower delay is better
  for (std::size_t i = 0; i < h["metrics"].size(); ++i) {
    if (h["metrics"][i]["key"] == "gpu_occupancy_full") {
      EXPECT_EQ(h["best"][i], J::array({1}));  // higher occupancy is better
    }
    if (h["metrics"][i]["key"] == "preemptions") {
      EXPECT_TRUE(h["best"][i].empty());  // a tie
    }
    EXPECT_NE(h["metrics"][i]["key"], "p99_jct_s");  // not in any summary: left out
  }
}

TEST(ReportData, CdfsSeriesAndEvents) {
  const auto j = build_report_data(make_folder().string());
  const auto& q = j["cdf_queue"][0];
  EXPECT_EQ(q["n"], 2);
  EXPECT_EQ(q["points"], J::array({{1.0, 0.5}, {60.0, 1.0}}));  // 0 s drawn at 1 s
  EXPECT_EQ(j["cdf_jct"][0]["points"], J::array({{300.0, 0.5}, {1200.0, 1.0}}));
  EXPECT_EQ(j["cluster"][0]["occupancy"].size(), 3u);
  // Only the run with an assurance signal has per-tenant series.
  ASSERT_EQ(j["assurance"].size(), 1u);
  EXPECT_EQ(j["assurance"][0]["policy"], "alpha");
  EXPECT_EQ(j["assurance"][0]["tenants"][1]["name"], "b");
  EXPECT_EQ(j["assurance"][0]["tenants"][1]["quota_gpus"], 4);
  EXPECT_EQ(j["assurance"][0]["tenants"][1]["borrowed"][0], J::array({0, 2}));
  // One preemption, 900 s x 4 GPUs lost, counted at the job's end.
  const auto& p = j["preemption"][0];
  EXPECT_EQ(p["preemptions"].back()[1], 1);
  EXPECT_EQ(p["lost_gpu_hours"].back()[1], 1);
  EXPECT_EQ(j["tenant_queue"]["names"], J::array({"a", "b"}));
  EXPECT_EQ(j["tenant_queue"]["series"][1]["avg_queue_s"], J::array({10.0, 30.0}));
  EXPECT_EQ(j["policy_metrics"]["keys"], J::array({"predictor_within_2x", "reclaims"}));
  EXPECT_EQ(j["config"][1]["seed"], 5);
}

TEST(ReportData, SingleRunFolderAndErrors) {
  const fs::path d = make_folder();
  const auto j = build_report_data((d / "alpha").string());
  EXPECT_EQ(j["policies"], J::array({"alpha"}));
  const fs::path empty = d / "empty";
  fs::create_directories(empty);
  EXPECT_THROW(build_report_data(empty.string()), InputError);
  fs::remove(empty);  // else the comparison holds a folder its manifest does not list
  fs::remove(d / "zeta" / "jobs.csv");
  try {
    build_report_data(d.string());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("jobs.csv"), std::string::npos) << e.what();
  }
}

std::string error_of(const fs::path& dir) {
  try {
    build_report_data(dir.string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ReportData, WrongTypesInSummaryAreInputErrorsNamingTheKey) {
  const fs::path d = make_folder();
  write(d / "zeta" / "summary.json", R"({"policy": "fifo", "trace": 7})");
  EXPECT_NE(error_of(d).find("zeta/summary.json: key 'trace': expected a string, got a number"),
            std::string::npos)
      << error_of(d);
  write(d / "zeta" / "summary.json", R"({"tenants": [{"name": ["x"]}]})");
  EXPECT_NE(error_of(d).find("tenants[0]: key 'name': expected a string, got an array"),
            std::string::npos)
      << error_of(d);
  write(d / "zeta" / "summary.json", R"({"jobs": 1e300})");
  EXPECT_NE(error_of(d).find("key 'jobs': expected a count >= 0"), std::string::npos);
  write(d / "zeta" / "summary.json", "[1, 2]");
  EXPECT_NE(error_of(d).find("expected a JSON object, got an array"), std::string::npos);
  write(d / "zeta" / "summary.json", summary("fifo", 20, 0.5, ""));
  write(d / "zeta" / "jobs.csv", std::string(kJobs) + "j4,b,u,1,0,200,,,,,0,0,1,0,never_started\n");
  EXPECT_NE(error_of(d).find("row has 15 fields, the header has 16"), std::string::npos)
      << error_of(d);
}

// A folder that is incomplete, changed or mixed from two runs is refused (item 5 of
// issue #26; the end-to-end cases are in tests/bad_input).
TEST(ReportData, FoldersThatDisagreeWithTheirManifestsAreRefused) {
  const fs::path d = make_folder();
  write(d / "zeta" / "jobs.csv", std::string(kJobs).replace(0, 6, "job_iX"));  // one byte
  EXPECT_NE(error_of(d).find("zeta/jobs.csv: changed since it was written"), std::string::npos)
      << error_of(d);
  write(d / "zeta" / "jobs.csv", kJobs);
  EXPECT_EQ(error_of(d), "(no error)");
  write(d / "stray" / "notes.txt", "x");
  EXPECT_NE(error_of(d).find("stray: is not part of the results"), std::string::npos);
  fs::remove_all(d / "stray");
  write(d / "comparison.csv", "policy,jobs\nzeta,3\n");
  seal_folder(d, "comparison", {{"workload_digest", "w"}}, {"zeta", "alpha"});
  EXPECT_NE(error_of(d).find("its rows do not name the run folders"), std::string::npos);
  write(d / "comparison.csv", "policy,jobs\nzeta,3\nalpha,3\n");
  seal(d);
  seal_folder(d / "alpha", "run",
              {{"policy", "deepshare"},
               {"trace", "traces/unit<b>.csv"},
               {"jobs", 3},
               {"workload_digest", "another"}});
  EXPECT_NE(error_of(d).find("simulated another workload"), std::string::npos);
  seal(d);
  seal_folder(d / "alpha", "run",
              {{"policy", "deepshare"},
               {"trace", "traces/unit<b>.csv"},
               {"jobs", 4},
               {"workload_digest", "w"}});
  EXPECT_NE(error_of(d).find("3 rows, summary.json counts 3 jobs and manifest.json 4"),
            std::string::npos)
      << error_of(d);
  fs::remove(d / "manifest.json");
  EXPECT_NE(error_of(d).find("manifest.json: missing: the folder is incomplete"),
            std::string::npos);
}

TEST(ReportData, RejectedJobsAreCountedByReason) {
  const fs::path d = make_folder();
  const std::string header =
      "job_id,tenant,user,gpus,gpu_milli,submit_s,start_s,end_s,queue_s,jct_s,preemptions,"
      "lost_work_s,max_slowdown,entitled,status,trace_state,reason\n";
  write(d / "zeta" / "jobs.csv",
        header +
            "j1,a,u,2,0,100,100,400,0,300,0,0,1,1,completed,,\n"
            "j2,b,u,64,0,100,,,,,0,0,1,0,rejected,,\"needs 64 GPUs; the cluster has 12\"\n"
            "j3,b,u,64,0,100,,,,,0,0,1,0,rejected,,\"needs 64 GPUs; the cluster has 12\"\n");
  seal(d);
  const auto j = build_report_data(d.string());
  EXPECT_EQ(j["rejections"][0]["jobs"], 2);
  EXPECT_EQ(j["rejections"][0]["reasons"][0][0], "needs 64 GPUs; the cluster has 12");
  EXPECT_EQ(j["config"][0]["rejected"], "2 jobs: needs 64 GPUs; the cluster has 12 (2)");
  EXPECT_EQ(j["config"][1]["rejected"], "none");
}

TEST(ReportHtml, FillsPlaceholdersAndEscapesScripts) {
  const auto data = build_report_data(make_folder().string());
  WebAssets a;
  a.page_template =
      "<title>@@TITLE@@</title><script>@@CHART_LIBRARY@@</script>"
      "<script type=\"application/json\">@@REPORT_DATA@@</script><p>@@VERSION@@</p>";
  a.chart_library = "var s = '</SCRIPT>@@REPORT_DATA@@';";
  const std::string html = render_report_html(data, a, "9.9");
  EXPECT_NE(html.find("<title>DeepShare report: unit&lt;b&gt;.csv</title>"), std::string::npos);
  EXPECT_NE(html.find("var s = '<\\/SCRIPT>@@REPORT_DATA@@';"), std::string::npos);
  EXPECT_NE(html.find("workload\\u003c/script>"), std::string::npos);
  EXPECT_NE(html.find("<p>9.9</p>"), std::string::npos);
  // Only the template's two closing script tags remain.
  std::size_t closes = 0;
  for (std::size_t p = 0; (p = html.find("</script>", p)) != std::string::npos; ++p) ++closes;
  EXPECT_EQ(closes, 2u);
  a.page_template = "<html>@@TITLE@@ @@CHART_LIBRARY@@</html>";
  EXPECT_THROW(render_report_html(data, a, "1"), InputError);
}

TEST(ReportHtml, MissingChartLibrarySaysHowToInstallIt) {
  const fs::path d = fs::temp_directory_path() / "ds_report_web_missing";
  fs::remove_all(d);
  write(d / "report_template.html", "@@TITLE@@@@CHART_LIBRARY@@@@REPORT_DATA@@");
  try {
    load_web_assets(d.string());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scripts/setup.sh"), std::string::npos) << e.what();
  }
}

TEST(ReportHtml, ProjectTemplateHasEveryPlaceholder) {
  const char* src = std::getenv("DEEPSHARE_SOURCE_DIR");
  if (!src) GTEST_SKIP() << "DEEPSHARE_SOURCE_DIR not set";
  WebAssets a;
  std::ifstream in(fs::path(src) / "web" / "report_template.html", std::ios::binary);
  ASSERT_TRUE(in);
  a.page_template.assign(std::istreambuf_iterator<char>(in), {});
  a.chart_library = "/* chart library */";
  const std::string html = render_report_html(build_report_data(make_folder().string()), a, "1");
  EXPECT_EQ(html.find("@@"), std::string::npos);
}

}  // namespace
}  // namespace ds::report
