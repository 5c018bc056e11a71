#include "baselines/qssf.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "baselines/qssf_estimates.hpp"
#include "baselines/queue_test_util.hpp"
#include "core/error.hpp"

namespace ds {
namespace {

namespace fs = std::filesystem;
using testing::add_job;
using testing::make_workload;
using testing::run_policy;
using testing::start_s;

// An aux folder holding Lucid-style estimate files with the given contents.
class AuxDir {
 public:
  explicit AuxDir(const std::string& name)
      : dir_(fs::temp_directory_path() / ("deepshare-qssf-" + name)) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~AuxDir() { fs::remove_all(dir_); }
  AuxDir(const AuxDir&) = delete;
  AuxDir& operator=(const AuxDir&) = delete;
  void write(LucidEstimateFile f, const std::string& text) const {
    std::ofstream(dir_ / file_name(f)) << text;
  }
  [[nodiscard]] std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

// Job names are "0", "1", ... in add_job order.
TEST(Qssf, OrdersByEstimateTimesGpusOnceOlderJobsWait) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 8, 0, 100);  // holds the node until 100
  add_job(w, 0, 2, 1, 10);   // estimate 500 x 2 GPUs = 1000
  add_job(w, 0, 1, 2, 10);   // estimate 900 x 1 GPU = 900: first
  add_job(w, 0, 8, 3, 10);   // estimate 100 x 8 GPUs = 800: before both, alone
  w.finalize();
  AuxDir aux("order");
  aux.write(LucidEstimateFile::Lgb, "job_id,priority\n0,1\n1,500\n2,900\n3,100\n");
  auto r = run_policy(w, &make_qssf, {"fidelity=lucid"}, aux.path());
  EXPECT_EQ(start_s(r, 3), 100);
  EXPECT_EQ(start_s(r, 2), 110);
  EXPECT_EQ(start_s(r, 1), 110);
  // Policies read no files: aux=DIR is not one of their options.
  EXPECT_THROW(run_policy(w, &make_qssf, {"fidelity=lucid", "aux=" + aux.path()}), InputError);
}

TEST(Qssf, AQueueOfNewJobsOnlyIsOrderedByGpus) {
  // Lucid gives priorities only when an older job is queued; before that the queue is
  // sorted by GPU count, so the 1-GPU job goes first and the 8-GPU one blocks.
  auto w = make_workload(1, 1);
  add_job(w, 0, 8, 0, 50);  // shortest estimate, but 8 GPUs
  add_job(w, 0, 1, 0, 30);
  w.finalize();
  AuxDir aux("fresh");
  aux.write(LucidEstimateFile::Lgb, "job_id,priority\n0,1\n1,1000\n");
  auto r = run_policy(w, &make_qssf, {"fidelity=lucid"}, aux.path());
  EXPECT_EQ(start_s(r, 1), 0);
  EXPECT_EQ(start_s(r, 0), 30);
}

TEST(Qssf, EbmEstimatesBelowZeroBecomeOneThousandSeconds) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 8, 0, 100);
  add_job(w, 0, 8, 1, 10);  // -5 -> 1000
  add_job(w, 0, 8, 2, 10);  // 900: first
  w.finalize();
  AuxDir aux("ebm");
  aux.write(LucidEstimateFile::Ebm, "job_id,priority\n0,1\n1,-5\n2,900\n99,7\n");
  auto r = run_policy(w, &make_qssf, {"fidelity=lucid", "estimates=ebm"}, aux.path());
  EXPECT_EQ(start_s(r, 2), 100);
  EXPECT_EQ(start_s(r, 1), 110);
  // Scored like a predictor: the summary carries its accuracy.
  EXPECT_EQ(r.policy_summary.at("predictor_scored"), 3.0);
}

TEST(Qssf, EstimateFileErrorsNameTheFileAndPlace) {
  auto w = make_workload(1, 1);
  add_job(w, 0, 1, 0, 10);
  add_job(w, 0, 1, 0, 10);
  w.finalize();
  AuxDir aux("errors");
  aux.write(LucidEstimateFile::Lgb, "job_id,priority\n0,12\n");
  try {
    run_policy(w, &make_qssf, {"fidelity=lucid"}, aux.path());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Venus_Sept_lgb.csv: no estimate for job '1'"),
              std::string::npos)
        << e.what();
  }
  aux.write(LucidEstimateFile::Lgb, "job_id,priority\n0,12\n1,soon\n");
  try {
    run_policy(w, &make_qssf, {"fidelity=lucid"}, aux.path());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Venus_Sept_lgb.csv:3:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_policy(w, &make_qssf, {"fidelity=lucid"}), InputError);  // no aux folder
  EXPECT_THROW(run_policy(w, &make_qssf, {"estimates=ebm"}), InputError);   // needs fidelity
  EXPECT_THROW(run_policy(w, &make_qssf, {"fidelity=exact"}), InputError);
}

TEST(Qssf, NormalModeLearnsFromFinishedJobsOnly) {
  // One user: short 1-GPU jobs finish first and teach the predictor; a queue of later
  // jobs is then ordered by what it learned, and accuracy is reported.
  auto w = make_workload(1, 1);
  for (int i = 0; i < 4; ++i) add_job(w, 0, 1, i, 20);
  add_job(w, 0, 8, 100, 1000);
  add_job(w, 0, 8, 101, 10);
  add_job(w, 0, 1, 102, 10);
  w.finalize();
  auto r = run_policy(w, &make_qssf);
  for (std::size_t i = 0; i < w.jobs.size(); ++i) EXPECT_EQ(r.jobs[i].status, JobStatus::Done);
  EXPECT_EQ(start_s(r, 4), 100);
  EXPECT_EQ(start_s(r, 6), 1100);  // same estimate per GPU: 1 GPU before 8 GPUs
  EXPECT_EQ(start_s(r, 5), 1110);
  EXPECT_EQ(r.policy_summary.at("predictor_scored"), 7.0);
  EXPECT_GE(r.policy_summary.at("predictor_within_2x"), 0.0);
}

}  // namespace
}  // namespace ds
