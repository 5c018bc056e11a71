// Fitting and cross-validating the interference model.
//
// Algorithm:
//  1. No table or no pairs: the built-in util/memory model (model.hpp), cv_mae = -1.
//  2. k-fold CV: shuffle the pairs with ds::Rng(seed) (Fisher-Yates), pair i of the
//     shuffled order goes to fold i mod k; both speeds of a pair stay in one fold, so a
//     pair is never half-seen. Fit on k-1 folds, predict both speeds of each held-out
//     pair with the profile model, the util/memory model and the training mean; MAE.
//  3. Leave-one-family-out: for each model family M (sorted), fit on the pairs without
//     M, predict the pairs with M (their profiles are unknown, so the util/memory model
//     answers): the error an unseen workload should expect.
//  4. Refit on every pair: the returned model.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "core/rng.hpp"
#include "policy/interference/model.hpp"

namespace ds {
namespace {

struct Errors {
  double sum = 0;
  std::size_t n = 0;
  void add(double predicted, double actual) {
    sum += std::abs(predicted - actual);
    ++n;
  }
  [[nodiscard]] double mae() const { return n ? sum / static_cast<double>(n) : -1; }
};

double mean_speed(const std::vector<const MeasuredPair*>& pairs) {
  double s = 0;
  for (const MeasuredPair* p : pairs) s += p->speed_a + p->speed_b;
  return pairs.empty() ? 1.0 : s / (2.0 * static_cast<double>(pairs.size()));
}

}  // namespace

std::unique_ptr<InterferenceModel> builtin_interference_model() {
  return std::make_unique<FittedInterference>(kBuiltinUtilCoefficients);
}

InterferenceFit fit_interference(const ColocationTable* table) {
  return fit_interference(table, InterferenceOptions{});
}

InterferenceFit fit_interference(const ColocationTable* table, const InterferenceOptions& o) {
  InterferenceFit fit;
  if (!table || table->pairs().empty()) {
    fit.model = builtin_interference_model();
    fit.util_coefficients.assign(kBuiltinUtilCoefficients.begin(), kBuiltinUtilCoefficients.end());
    return fit;
  }
  const auto& all = table->pairs();
  fit.pairs = all.size();
  std::vector<const MeasuredPair*> ptrs;
  for (const auto& p : all) ptrs.push_back(&p);

  if (o.folds >= 2 && all.size() >= o.folds) {
    std::vector<std::size_t> order(all.size());
    std::iota(order.begin(), order.end(), 0);
    Rng rng(o.seed);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    std::vector<std::size_t> fold(all.size());
    for (std::size_t i = 0; i < order.size(); ++i) fold[order[i]] = i % o.folds;
    Errors full, util, mean;
    for (std::size_t f = 0; f < o.folds; ++f) {
      std::vector<const MeasuredPair*> train, test;
      for (std::size_t i = 0; i < all.size(); ++i) (fold[i] == f ? test : train).push_back(&all[i]);
      const FittedInterference m(train, *table, o.ridge);
      const double mu = mean_speed(train);
      for (const MeasuredPair* p : test) {
        const JobShape a{&p->a}, b{&p->b};
        full.add(m.speed(a, b), p->speed_a);
        full.add(m.speed(b, a), p->speed_b);
        util.add(m.util_speed(a, b), p->speed_a);
        util.add(m.util_speed(b, a), p->speed_b);
        mean.add(mu, p->speed_a);
        mean.add(mu, p->speed_b);
      }
    }
    fit.folds = o.folds;
    fit.cv_mae = full.mae();
    fit.cv_mae_util_only = util.mae();
    fit.cv_mae_mean = mean.mae();

    std::set<std::string> families;
    for (const auto& p : all) families.insert({p.a.model, p.b.model});
    Errors unseen, unseen_mean;
    for (const std::string& fam : families) {
      std::vector<const MeasuredPair*> train, test;
      for (const auto& p : all) (p.a.model == fam || p.b.model == fam ? test : train).push_back(&p);
      if (train.empty()) continue;
      const FittedInterference m(train, *table, o.ridge);
      const double mu = mean_speed(train);
      for (const MeasuredPair* p : test) {
        const JobShape a{&p->a}, b{&p->b};
        unseen.add(m.speed(a, b), p->speed_a);
        unseen.add(m.speed(b, a), p->speed_b);
        unseen_mean.add(mu, p->speed_a);
        unseen_mean.add(mu, p->speed_b);
      }
    }
    fit.cv_mae_unseen_model = unseen.mae();
    fit.cv_mae_unseen_model_mean = unseen_mean.mae();
  }
  auto model = std::make_unique<FittedInterference>(ptrs, *table, o.ridge);
  fit.util_coefficients = model->util_coefficients();
  fit.model = std::move(model);
  return fit;
}

JobShape shape_of(std::span<const Profile> profiles, const JobSpec& job) {
  JobShape s;
  if (job.profile >= 0 && static_cast<std::size_t>(job.profile) < profiles.size())
    s.profile = &profiles[static_cast<std::size_t>(job.profile)];
  s.gpu_util = job.gpu_util;
  s.gpu_memory_mib = job.gpu_memory_mib;
  return s;
}

double combined_speed(const InterferenceModel& model, const JobShape& job,
                      std::span<const JobShape> others) {
  double s = 1.0;
  for (const JobShape& o : others) s *= std::min(1.0, model.speed(job, o));
  return std::max(s, 1e-3);
}

}  // namespace ds
