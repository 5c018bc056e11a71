#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "policy/predict/history.hpp"
#include "policy/predict/predictor.hpp"

namespace ds {
namespace {

JobSpec job(std::uint32_t tenant, std::uint32_t user, int gpus, int profile = -1) {
  JobSpec j;
  j.tenant = TenantId(tenant);
  j.user = UserId(user);
  j.gpus = gpus;
  j.profile = profile;
  return j;
}

// No decay and round strengths, so every estimate can be written down by hand.
PredictorConfig plain() {
  PredictorConfig c;
  c.strength = {1, 1, 1, 1, 1};
  c.decay = {1, 1, 1, 1, 1};
  c.prior_runtime = seconds(64);  // log2 = 6
  return c;
}

TEST(HistoryPredictor, PredictsThePriorWithoutHistory) {
  HistoryPredictor p(plain());
  EXPECT_EQ(p.predict(job(0, 0, 1)), seconds(64));
}

TEST(HistoryPredictor, ShrinksEachLevelTowardItsParent) {
  HistoryPredictor p(plain());
  p.observe(job(0, 0, 1), seconds(1024));  // log2 = 10
  // Every level holds one observation x = 10 and k = 1:
  // global (10 + 6) / 2 = 8, tenant (10 + 8) / 2 = 9, user 9.5, user+gpus 9.75;
  // the job has no profile, so the last level repeats its parent.
  const auto mu = p.estimates(job(0, 0, 1));
  EXPECT_DOUBLE_EQ(mu[0], 8);
  EXPECT_DOUBLE_EQ(mu[1], 9);
  EXPECT_DOUBLE_EQ(mu[2], 9.5);
  EXPECT_DOUBLE_EQ(mu[3], 9.75);
  EXPECT_DOUBLE_EQ(mu[4], 9.75);
  EXPECT_EQ(p.predict(job(0, 0, 1)), std::llround(std::exp2(9.75) * 1000));
  // Another user of the same tenant only inherits the tenant estimate.
  const auto other = p.estimates(job(0, 1, 1));
  EXPECT_DOUBLE_EQ(other[4], 9);
  // Another tenant only the global one.
  EXPECT_DOUBLE_EQ(p.estimates(job(1, 0, 1))[4], 8);
  // Same user, other GPU count: the user level.
  EXPECT_DOUBLE_EQ(p.estimates(job(0, 0, 8))[4], 9.5);
}

TEST(HistoryPredictor, MoreDataMovesAwayFromTheParent) {
  PredictorConfig c = plain();
  c.strength = {0, 0, 0, 2, 1};  // coarse levels are the plain means
  HistoryPredictor p(c);
  p.observe(job(0, 0, 1), seconds(16));   // x = 4
  p.observe(job(0, 1, 2), seconds(16));   // x = 4 (other user: keeps the user mean at 4)
  p.observe(job(0, 0, 2), seconds(256));  // x = 8
  // user (0,0): mean (4 + 8) / 2 = 6; user+gpus (0,0,2): (8 + 2 * 6) / (1 + 2) = 20/3
  EXPECT_DOUBLE_EQ(p.estimates(job(0, 0, 2))[3], 20.0 / 3);
  p.observe(job(0, 0, 2), seconds(256));
  p.observe(job(0, 0, 2), seconds(256));
  // user: (4 + 8 + 8 + 8) / 4 = 7; user+gpus: (24 + 2 * 7) / (3 + 2) = 7.6
  EXPECT_DOUBLE_EQ(p.estimates(job(0, 0, 2))[3], 7.6);
}

TEST(HistoryPredictor, DecayFavoursRecentJobs) {
  PredictorConfig c = plain();
  c.strength = {0, 0, 0, 0, 0};
  c.decay = {0.5, 0.5, 0.5, 0.5, 0.5};
  HistoryPredictor p(c);
  p.observe(job(0, 0, 1), seconds(4));    // x = 2
  p.observe(job(0, 0, 1), seconds(256));  // x = 8
  // W = 0.5 + 1, S = 0.5 * 2 + 8: mean 9 / 1.5 = 6
  EXPECT_DOUBLE_EQ(p.estimates(job(0, 0, 1))[3], 6);
}

TEST(HistoryPredictor, ProfileLevelOnlyForJobsWithProfiles) {
  HistoryPredictor p(plain());
  p.observe(job(0, 0, 1, 3), seconds(1024));
  const auto with = p.estimates(job(0, 0, 1, 3));
  EXPECT_DOUBLE_EQ(with[4], (10 + 9.75) / 2);
  // Another profile: its cell is empty, so the level repeats user+gpus.
  EXPECT_DOUBLE_EQ(p.estimates(job(0, 0, 1, 4))[4], 9.75);
}

TEST(HistoryPredictor, FloorsZeroRunTimes) {
  HistoryPredictor p(plain());
  p.observe(job(0, 0, 1), 0);  // learned as 1 s: x = 0
  EXPECT_DOUBLE_EQ(p.estimates(job(0, 0, 1))[0], 3);
  EXPECT_GT(p.predict(job(0, 0, 1)), 0);
}

// The predictor has no clock: "only the past" is the caller's contract, and what it was
// not told cannot change a prediction. An unfinished job is never observed.
TEST(HistoryPredictor, PredictionDependsOnlyOnObservedJobs) {
  auto a = make_predictor(PredictorConfig{});
  auto b = make_predictor(PredictorConfig{});
  a->observe(job(0, 0, 1), seconds(100));
  b->observe(job(0, 0, 1), seconds(100));
  const Time before = a->predict(job(0, 0, 1));
  // A job of the same user is running (submitted, predicted) but not finished: it
  // must not move the prediction; only its completion may.
  EXPECT_EQ(a->predict(job(0, 0, 1)), b->predict(job(0, 0, 1)));
  a->observe(job(0, 0, 1), seconds(10000));
  EXPECT_GT(a->predict(job(0, 0, 1)), before);
  EXPECT_EQ(b->predict(job(0, 0, 1)), before);
}

TEST(HistoryPredictor, BaselineKindsUseFewerLevels) {
  PredictorConfig c = plain();
  c.kind = "global";
  auto g = make_predictor(c);
  g->observe(job(0, 0, 1), seconds(1024));
  EXPECT_EQ(g->predict(job(5, 5, 4)), seconds(256));  // (10 + 6) / 2 = 8
  c.kind = "tenant";
  auto t = make_predictor(c);
  t->observe(job(0, 0, 1), seconds(1024));
  EXPECT_EQ(t->predict(job(0, 7, 4)), seconds(512));  // tenant level: 9
  c.kind = "user";
  auto u = make_predictor(c);
  u->observe(job(0, 0, 1, 3), seconds(1024));
  EXPECT_EQ(u->predict(job(0, 0, 1, 3)), std::llround(std::exp2(9.75) * 1000));  // no profile
  c.kind = "nope";
  EXPECT_THROW(make_predictor(c), InputError);
}

TEST(AccuracyTracker, MedianAndWithin2x) {
  AccuracyTracker a;
  EXPECT_EQ(a.scored(), 0u);
  EXPECT_EQ(a.median_abs_log2_error(), -1);
  a.predicted(JobId(0), 100);   // actual 100: error 0
  a.predicted(JobId(1), 400);   // actual 100: error 2
  a.predicted(JobId(2), 50);    // actual 100: error 1 (exactly 2x counts as within)
  a.predicted(JobId(5), 1000);  // actual 125: error 3
  a.finished(JobId(0), 100);
  a.finished(JobId(1), 100);
  a.finished(JobId(2), 100);
  EXPECT_EQ(a.scored(), 3u);
  EXPECT_DOUBLE_EQ(a.median_abs_log2_error(), 1);
  a.finished(JobId(5), 125);
  EXPECT_EQ(a.scored(), 4u);
  EXPECT_DOUBLE_EQ(a.median_abs_log2_error(), 1.5);  // mean of the middle two, 1 and 2
  EXPECT_DOUBLE_EQ(a.mean_abs_log2_error(), 1.5);
  EXPECT_DOUBLE_EQ(a.within_2x(), 0.5);
}

TEST(AccuracyTracker, FirstPredictionCountsAndUnscorableJobsAreSkipped) {
  AccuracyTracker a;
  a.predicted(JobId(0), 100);
  a.predicted(JobId(0), 800);  // a later re-prediction is ignored
  a.finished(JobId(0), 100);
  a.finished(JobId(1), 100);  // never predicted
  a.predicted(JobId(2), 100);
  a.finished(JobId(2), 0);   // ran for 0 ms: no ratio
  a.finished(JobId(0), 50);  // already scored
  EXPECT_EQ(a.scored(), 1u);
  EXPECT_DOUBLE_EQ(a.median_abs_log2_error(), 0);
  std::map<std::string, double> out;
  a.summarize(out);
  EXPECT_EQ(out["predictor_scored"], 1);
  EXPECT_EQ(out["predictor_within_2x"], 1);
}

// Past kExactSamples the tracker keeps a fixed-size histogram: the mean and the share
// within 2x stay exact, the median lands in its bin, and memory stops growing.
TEST(AccuracyTracker, LongRunsKeepBoundedMemory) {
  AccuracyTracker a, small;
  const std::size_t n = AccuracyTracker::kExactSamples + 40'000;
  std::vector<double> errors;
  double sum = 0;
  std::size_t within = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const JobId id(static_cast<std::uint32_t>(i % 1000));  // ids are reused, as on Slurm
    const Time actual = 1000, predicted = 1000 + static_cast<Time>((i * 7919) % 5000);
    a.predicted(id, predicted);
    a.finished(id, actual);
    const double e = std::log2(static_cast<double>(predicted) / static_cast<double>(actual));
    errors.push_back(e);
    sum += e;
    within += e <= 1.0;
    if (i + 1 == AccuracyTracker::kExactSamples - 1) {
      EXPECT_TRUE(a.exact());
    }
  }
  EXPECT_FALSE(a.exact());
  EXPECT_EQ(a.scored(), n);
  EXPECT_NEAR(a.mean_abs_log2_error(), sum / static_cast<double>(n), 1e-12);
  EXPECT_DOUBLE_EQ(a.within_2x(), static_cast<double>(within) / static_cast<double>(n));
  std::nth_element(errors.begin(), errors.begin() + (n - 1) / 2, errors.end());
  const double median = errors[(n - 1) / 2];  // n is even: the lower middle
  EXPECT_NEAR(a.median_abs_log2_error(), median, 0.5 / AccuracyTracker::kBinsPerUnit + 1e-12);
  // Huge errors land in the last bin; the summary keys stay the same.
  small.predicted(JobId(0), 1);
  small.finished(JobId(0), Time{1} << 40);
  EXPECT_DOUBLE_EQ(small.median_abs_log2_error(), 40);  // exact while few
  std::map<std::string, double> out;
  a.summarize(out);
  EXPECT_EQ(out["predictor_scored"], static_cast<double>(n));
}

}  // namespace
}  // namespace ds
