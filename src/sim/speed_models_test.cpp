#include "sim/speed_models.hpp"

#include <gtest/gtest.h>

#include "model/testing.hpp"

namespace ds {
namespace {

// A fallback that answers 0.5 for every pair, so its use is visible.
struct Half final : InterferenceModel {
  double speed(const JobShape&, const JobShape&) const override { return 0.5; }
};

class SpeedModels : public ::testing::Test {
 protected:
  void SetUp() override {
    w = testing::make_workload(1, 1);
    for (int i = 0; i < 4; ++i) testing::add_job(w, 0, 1, 0, 100, 50, 4096);
    w.finalize();
    a = Profile{"ResNet18", "CIFAR-10", 32, false};
    b = Profile{"VGG", "ImageNet", 64, true};
    w.jobs[0].profile = w.intern_profile(a);
    w.jobs[1].profile = w.intern_profile(b);
    w.jobs[2].profile = w.intern_profile(Profile{"BERT", "SQuAD", 32, false});
    // job 3 has no profile
    table = ColocationTable::from_rows({MeasuredPair{a, b, 0.9, 0.6, 90, 8000}}, {});
  }
  double speed(const SpeedModel& m, int job, std::vector<int> others) {
    std::vector<const JobSpec*> o;
    for (int k : others) o.push_back(&w.jobs[static_cast<std::size_t>(k)]);
    return m(w.jobs[static_cast<std::size_t>(job)], o);
  }
  Workload w;
  Profile a, b;
  ColocationTable table;
  Half half;
};

TEST_F(SpeedModels, MeasuredPairInEitherOrder) {
  const auto m = measured_speed_model(w, &table, half);
  EXPECT_DOUBLE_EQ(speed(m, 0, {1}), 0.9);
  EXPECT_DOUBLE_EQ(speed(m, 1, {0}), 0.6);
}

TEST_F(SpeedModels, UnmeasuredOrUnknownProfilesUseTheFallback) {
  const auto m = measured_speed_model(w, &table, half);
  EXPECT_DOUBLE_EQ(speed(m, 0, {2}), 0.5);  // profile pair not measured
  EXPECT_DOUBLE_EQ(speed(m, 0, {3}), 0.5);  // partner without profile
  const auto no_table = measured_speed_model(w, nullptr, half);
  EXPECT_DOUBLE_EQ(speed(no_table, 0, {1}), 0.5);
}

TEST_F(SpeedModels, ThreeOrMoreJobsMultiplyPairwiseSpeeds) {
  const auto m = measured_speed_model(w, &table, half);
  EXPECT_DOUBLE_EQ(speed(m, 0, {1, 2}), 0.9 * 0.5);
  EXPECT_DOUBLE_EQ(speed(m, 0, {1, 2, 3}), 0.9 * 0.5 * 0.5);
  EXPECT_DOUBLE_EQ(speed(m, 0, {}), 1.0);
}

TEST_F(SpeedModels, MeasuredSpeedAboveOneCountsAsOne) {
  table = ColocationTable::from_rows({MeasuredPair{a, b, 1.2, 0.6, 90, 8000}}, {});
  const auto m = measured_speed_model(w, &table, half);
  EXPECT_DOUBLE_EQ(speed(m, 0, {1}), 1.0);
  EXPECT_DOUBLE_EQ(speed(m, 0, {1, 2}), 0.5);
}

TEST_F(SpeedModels, JobShapeCarriesProfileUtilAndMemory) {
  const JobShape s = job_shape(w, w.jobs[1]);
  ASSERT_NE(s.profile, nullptr);
  EXPECT_EQ(*s.profile, b);
  EXPECT_DOUBLE_EQ(s.gpu_util, 50);
  EXPECT_DOUBLE_EQ(s.gpu_memory_mib, 4096);
  EXPECT_EQ(job_shape(w, w.jobs[3]).profile, nullptr);
}

// The misprediction option: a shared job's slowdown is (1 + E) x the base model's.
TEST_F(SpeedModels, WorseThanPredictedScalesTheSlowdown) {
  const SpeedModel base = model_speed_model(w, half);
  EXPECT_DOUBLE_EQ(speed(base, 0, {1}), 0.5);
  EXPECT_DOUBLE_EQ(speed(worse_than_predicted(base, 0.5), 0, {1}), 0.5 / 1.5);
  EXPECT_DOUBLE_EQ(speed(worse_than_predicted(base, 0), 0, {1}), 0.5);
  EXPECT_DOUBLE_EQ(speed(time_slicing_speed_model(), 0, {1, 2}), 1.0 / 3);
}

}  // namespace
}  // namespace ds
