// Scale invariance (issue #14; docs/performance.md "Scale invariance"): K independent copies
// of a workload, each with its own tenants, nodes and users (trace/tile.hpp), side by side.
//  - Isolated-scope policies that learn nothing across tenants must treat every copy exactly
//    as they treat the workload alone: each job of each copy starts and ends when its
//    original does (shifted by its copy's arrival jitter, for the policies without a clock).
//  - Pooled policies share the copies' capacity: their queueing delay must not get worse
//    (K lockstep copies offer every job K times the room it had); see check_pooled().
// Lucid is neither: its profiler pool (sized per 1,080 GPUs) and its sharing switch (driven
// by the cluster's arrival forecast) are cluster-wide by design; docs/performance.md shows
// its Venus K series instead.
// Random small workloads (rapidcheck), K = 2..4.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/rng.hpp"
#include "random_workload.hpp"
#include "registry/registry.hpp"
#include "sim/simulator.hpp"
#include "trace/tile.hpp"

namespace ds {
namespace {

RunRecord run(const Workload& w, const std::string& policy,
              const std::vector<std::string>& sets = {}) {
  PolicyOptions options;
  for (const auto& s : sets) options.set(s);
  std::vector<Time> oracle;
  for (const auto& t : w.truth) oracle.push_back(t.work);
  auto p = make_policy(policy, PolicyContext{w.cluster, w.tenants, options, oracle});
  return simulate(w, *p);
}

// The job of `tiled` that is copy `copy` of original job `i`.
std::size_t copy_of(const std::unordered_map<std::string, std::size_t>& by_name, const Workload& w,
                    std::size_t i, int copy) {
  const std::string name =
      copy == 0 ? w.jobs[i].name : w.jobs[i].name + "#" + std::to_string(copy) + ".0";
  return by_name.at(name);
}

// Every job of every copy runs as its original, shifted by its copy's jitter.
void check_isolated(const std::string& policy, const std::vector<std::string>& sets,
                    bool clock_free) {
  const Workload w = testing::random_workload({.max_tenants = 3, .max_jobs = 40});
  TileOptions o;
  o.copies = *rc::gen::inRange(2, 5);
  o.jitter = clock_free ? seconds(*rc::gen::inRange(0, 600)) : 0;
  o.seed = *rc::gen::inRange<std::uint64_t>(1, 1000);
  const Workload tiled = tile_workload(w, o);
  const RunRecord one = run(w, policy, sets);
  const RunRecord many = run(tiled, policy, sets);
  std::unordered_map<std::string, std::size_t> by_name;
  for (std::size_t k = 0; k < tiled.jobs.size(); ++k) by_name.emplace(tiled.jobs[k].name, k);
  for (int c = 0; c < o.copies; ++c)
    for (std::size_t i = 0; i < w.jobs.size(); ++i) {
      const std::size_t k = copy_of(by_name, w, i, c);
      const Time shift = tiled.jobs[k].submit - w.jobs[i].submit;
      const JobOutcome& a = one.jobs[i];
      const JobOutcome& b = many.jobs[k];
      RC_ASSERT(a.status == b.status);
      if (a.status != JobStatus::Done) continue;
      RC_ASSERT(b.first_start == a.first_start + shift);
      RC_ASSERT(b.end == a.end + shift);
      RC_ASSERT(b.queue == a.queue);
      RC_ASSERT(b.preemptions == a.preemptions);
    }
}

double avg_queue(const RunRecord& r) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& j : r.jobs)
    if (j.status == JobStatus::Done) {
      sum += static_cast<double>(j.queue);
      ++n;
    }
  return n ? sum / static_cast<double>(n) : 0;
}

// Pooled policies share the copies' capacity. Per workload, "never worse" does not hold for
// greedy schedulers (list-scheduling anomalies: rapidcheck shrinks a 2-tenant, 18-job
// counterexample for fifo-pooled within ~50 random cases, see docs/performance.md), so the
// property is checked where it does hold, over a fixed seeded set of 200 small workloads
// (jobs that fit one copy, K = 2..4 lockstep copies): the K-copy runs' queueing delay, summed
// over the set, is no worse than the single runs'. The output says on how many workloads
// (and by how much, at most) the copies waited longer.
Workload seeded_workload(std::uint64_t seed) {
  Rng rng(seed);
  const int tenants = 1 + static_cast<int>(rng.below(3));
  Workload w = testing::make_workload(tenants, 1 + static_cast<int>(rng.below(3)), 8);
  const int jobs = 1 + static_cast<int>(rng.below(40));
  static constexpr int kSizes[] = {1, 1, 2, 4, 8, 8, 12, 16, 24, 40};
  for (int i = 0; i < jobs; ++i) {
    const int gpus = kSizes[rng.below(std::size(kSizes))];
    if (gpus > w.cluster.total_gpus()) continue;  // K copies would make it feasible
    testing::add_job(w, static_cast<int>(rng.below(static_cast<std::uint64_t>(tenants))), gpus,
                     static_cast<std::int64_t>(rng.below(2000)),
                     static_cast<std::int64_t>(rng.below(900)));
  }
  w.finalize();
  return w;
}

void check_pooled(const std::string& policy) {
  double sum_one = 0, sum_many = 0, worst = 0;
  int worse = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const Workload w = seeded_workload(seed);
    TileOptions o;
    o.copies = 2 + static_cast<int>(seed % 3);
    o.jitter = 0;
    const double one = avg_queue(run(w, policy));
    const double many = avg_queue(run(tile_workload(w, o), policy));
    sum_one += one;
    sum_many += many;
    worse += many > one ? 1 : 0;
    if (one > 0) worst = std::max(worst, many / one);
  }
  EXPECT_LE(sum_many, sum_one) << policy;
  std::printf(
      "%s: K copies' queueing delay / one copy's, summed over 200 workloads: %.3f "
      "(worse on %d, at most %.2fx)\n",
      policy.c_str(), sum_one > 0 ? sum_many / sum_one : 1.0, worse, worst);
}

TEST(ScaleInvariance, FifoPooledIsNotWorseOverAllWorkloads) {
  check_pooled("fifo-pooled");
}
TEST(ScaleInvariance, KueueIsNotWorseOverAllWorkloads) {
  check_pooled("kueue");
}
TEST(ScaleInvariance, DeepShareIsNotWorseOverAllWorkloads) {
  check_pooled("deepshare");
}

RC_GTEST_PROP(ScaleInvariance, FifoIsolated, ()) {
  check_isolated("fifo-isolated", {}, true);
}
RC_GTEST_PROP(ScaleInvariance, Sjf, ()) {
  check_isolated("sjf", {}, true);
}
RC_GTEST_PROP(ScaleInvariance, Srtf, ()) {
  check_isolated("srtf", {}, true);
}
RC_GTEST_PROP(ScaleInvariance, Tiresias, ()) {
  check_isolated("tiresias", {}, false);  // rounds on the clock: copies in lockstep
}
RC_GTEST_PROP(ScaleInvariance, KueueIsolated, ()) {
  check_isolated("kueue", {"scope=isolated"}, true);
}

}  // namespace
}  // namespace ds
