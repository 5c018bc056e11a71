#include <gtest/gtest.h>

#include <cmath>

#include "policy/interference/interference.hpp"
#include "policy/interference/model.hpp"
#include "policy/interference/ridge.hpp"

namespace ds {
namespace {

TEST(Ridge, RecoversAnExactLine) {
  RidgeProblem r(2);
  for (double x : {0.0, 1.0, 2.0, 3.0}) r.add({1.0, x}, 1 + 2 * x);
  const auto b = r.solve({0, 0});
  EXPECT_NEAR(b[0], 1, 1e-9);
  EXPECT_NEAR(b[1], 2, 1e-9);
}

TEST(Ridge, PenaltyShrinksTowardZero) {
  // One column, y = 2x on x = 1 (twice): b = sum xy / (sum xx + lambda) = 4 / (2 + 2).
  RidgeProblem r(1);
  r.add({1.0}, 2);
  r.add({1.0}, 2);
  EXPECT_NEAR(r.solve({2.0})[0], 1.0, 1e-12);
}

TEST(Ridge, UnseenUnpenalizedColumnIsZero) {
  RidgeProblem r(2);
  r.add({1.0, 0.0}, 3);
  const auto b = r.solve({0, 0});
  EXPECT_NEAR(b[0], 3, 1e-9);
  EXPECT_EQ(b[1], 0);
}

TEST(BuiltinModel, MoreLoadMeansSlower) {
  const auto m = builtin_interference_model();
  const JobShape light{nullptr, 20, 2048};
  const JobShape heavy{nullptr, 100, 16384};
  const double ll = m->speed(light, light);
  const double lh = m->speed(light, heavy);
  const double hh = m->speed(heavy, heavy);
  EXPECT_GT(ll, lh);
  EXPECT_GT(lh, hh);
  EXPECT_GT(hh, 0.4);
  EXPECT_LE(ll, 1.5);
  // Unknown util is treated as a saturating job (pessimistic).
  EXPECT_DOUBLE_EQ(m->speed(JobShape{}, heavy), m->speed(JobShape{nullptr, 100, 0}, heavy));
}

TEST(FitInterference, NoDataGivesTheBuiltinModel) {
  const auto fit = fit_interference(nullptr);
  ASSERT_NE(fit.model, nullptr);
  EXPECT_EQ(fit.cv_mae, -1);
  EXPECT_EQ(fit.pairs, 0u);
  const JobShape a{nullptr, 50, 4096};
  EXPECT_DOUBLE_EQ(fit.model->speed(a, a), builtin_interference_model()->speed(a, a));
}

TEST(CombinedSpeed, ProductOfPairwiseSpeedsCappedAtOne) {
  // A model that says 0.8 for every pair.
  struct Constant final : InterferenceModel {
    double speed(const JobShape&, const JobShape&) const override { return 0.8; }
  } c;
  const JobShape j;
  const std::vector<JobShape> two(2), none;
  EXPECT_DOUBLE_EQ(combined_speed(c, j, none), 1.0);
  EXPECT_DOUBLE_EQ(combined_speed(c, j, std::span<const JobShape>(two.data(), 1)), 0.8);
  EXPECT_DOUBLE_EQ(combined_speed(c, j, two), 0.64);
  struct Fast final : InterferenceModel {
    double speed(const JobShape&, const JobShape&) const override { return 1.2; }
  } f;
  EXPECT_DOUBLE_EQ(combined_speed(f, j, two), 1.0);
}

// Synthetic pairs: profile "slow" loses 0.3 with any partner, "fast" loses nothing.
// The profile model must learn the difference that util alone cannot see.
TEST(FitInterference, LearnsPerProfileEffects) {
  std::vector<SingleProfile> singles;
  std::vector<Profile> ps;
  for (int i = 0; i < 6; ++i) {
    Profile p{i % 2 ? "slow" : "fast", "d", 32 * (i + 1), false};
    ps.push_back(p);
    singles.push_back(SingleProfile{p, 100, 50, 10, 4096, 0});
  }
  std::vector<MeasuredPair> pairs;
  for (std::size_t i = 0; i < ps.size(); ++i)
    for (std::size_t k = i; k < ps.size(); ++k)
      pairs.push_back(MeasuredPair{ps[i], ps[k], ps[i].model == "slow" ? 0.7 : 1.0,
                                   ps[k].model == "slow" ? 0.7 : 1.0, 80, 8192});
  const auto table = ColocationTable::from_rows(pairs, singles);
  InterferenceOptions o;
  o.folds = 3;
  o.ridge = 0.01;
  const auto fit = fit_interference(&table, o);
  EXPECT_EQ(fit.pairs, pairs.size());
  EXPECT_LT(fit.cv_mae, 0.02);
  EXPECT_GT(fit.cv_mae_mean, 0.1);
  const JobShape slow{&ps[1]}, fast{&ps[0]};
  EXPECT_NEAR(fit.model->speed(slow, fast), 0.7, 0.02);
  EXPECT_NEAR(fit.model->speed(fast, slow), 1.0, 0.02);
  // An unknown profile with the same util: the util model, which sees no difference.
  const Profile other{"other", "d", 32, false};
  const JobShape unknown{&other, 50, 4096};
  EXPECT_NEAR(fit.model->speed(unknown, fast), 0.85, 0.05);
}

TEST(FitInterference, DeterministicForASeed) {
  const std::string aux = std::string(DEEPSHARE_SHARED_DIR) + "/traces/venus-sept/aux";
  if (!ColocationTable::available(aux)) GTEST_SKIP() << "no Venus aux/ data at " << aux;
  const auto table = ColocationTable::load(aux);
  const auto a = fit_interference(&table);
  const auto b = fit_interference(&table);
  EXPECT_EQ(a.cv_mae, b.cv_mae);
}

// The real measured pairs: held-out error well below the trivial baseline, and the
// built-in fallback coefficients are what this data gives (update them if it changes).
TEST(FitInterference, BeatsTheMeanOnLucidPairs) {
  const std::string aux = std::string(DEEPSHARE_SHARED_DIR) + "/traces/venus-sept/aux";
  if (!ColocationTable::available(aux)) GTEST_SKIP() << "no Venus aux/ data at " << aux;
  const auto table = ColocationTable::load(aux);
  const auto fit = fit_interference(&table);
  EXPECT_EQ(fit.pairs, 1388u);
  EXPECT_EQ(fit.folds, 5u);
  EXPECT_GT(fit.cv_mae, 0);
  EXPECT_LT(fit.cv_mae, fit.cv_mae_mean);
  EXPECT_LT(fit.cv_mae, fit.cv_mae_util_only);
  EXPECT_LT(fit.cv_mae_util_only, fit.cv_mae_mean);
  EXPECT_LT(fit.cv_mae_unseen_model, fit.cv_mae_unseen_model_mean);
  ASSERT_EQ(fit.util_coefficients.size(), kBuiltinUtilCoefficients.size());
  for (std::size_t i = 0; i < kBuiltinUtilCoefficients.size(); ++i)
    EXPECT_NEAR(fit.util_coefficients[i], kBuiltinUtilCoefficients[i], 1e-5) << i;
  // A measured pair's prediction is close to its measurement on average (in-sample).
  double err = 0;
  for (const auto& p : table.pairs()) {
    err += std::abs(fit.model->speed(JobShape{&p.a}, JobShape{&p.b}) - p.speed_a);
    err += std::abs(fit.model->speed(JobShape{&p.b}, JobShape{&p.a}) - p.speed_b);
  }
  EXPECT_LT(err / static_cast<double>(2 * table.pairs().size()), fit.cv_mae);
}

}  // namespace
}  // namespace ds
