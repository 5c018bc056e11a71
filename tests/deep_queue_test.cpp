// Deep queues (issue #27): the baselines whose cycles follow changes (ordered structures
// kept across cycles, one look per request class, reasons stated only where they change,
// wake-ups only where something can change) give the same run as a straightforward
// reference that re-sorts and re-scans everything in every cycle (reference_policies.hpp;
// Kueue's and Lucid's job-by-job scans, KueueConfig/LucidSetup::reference_scan; Slurm's
// queue re-sorted at every decay tick and backfill answers computed anew,
// SlurmConfig::reference_scan).
//
// Random deep queues (rapidcheck): one or two tenants on 1-3 small nodes (sometimes of mixed
// sizes: no uniform node set), tens to a couple of hundred jobs arriving within minutes
// (the queue holds most of them), 1-16 GPUs and some fractional ones, GPU profiles (Lucid
// shares), checkpoints at 0, 5 or 30 minutes, ~10 % of jobs cancelled while they wait and a
// controller restart now and then. Same run = every job's outcome (start, end, queue, lost
// work, preemptions, longest waiting reason, rejection), the queueing time by reason, the
// cluster's step series and samples, and the policy's summary.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "baselines/kueue.hpp"
#include "baselines/lucid.hpp"
#include "baselines/slurm.hpp"
#include "model/testing.hpp"
#include "reference_policies.hpp"
#include "registry/registry.hpp"
#include "sim/simulator.hpp"

namespace ds {
namespace {

using Make = std::function<std::unique_ptr<Policy>(const PolicyContext&)>;

struct Scenario {
  Workload workload;
  SimConfig config;
};

Scenario deep_queue() {
  Scenario sc;
  Workload& w = sc.workload;
  const int tenants = *rc::gen::inRange(1, 3);
  w = testing::make_workload(tenants, *rc::gen::inRange(1, 4), 8);
  // Sometimes a smaller node: tenant 0's nodes differ in size. Jobs then stay within one
  // node (consolidate placement across nodes of mixed sizes never places a job that needs
  // the smaller node too, e.g. 12 GPUs on 8 + 4: it would wait forever under every policy).
  const bool mixed = *rc::gen::inRange(0, 4) == 0;
  if (mixed) w.cluster.add_nodes(1, 4, kDefaultGpuMemoryMib, "", TenantId(0));
  for (auto& t : w.tenants) t.checkpoint_interval = seconds(*rc::gen::element(0, 300, 1800));
  const int jobs = *rc::gen::inRange(20, 200);
  const int window = *rc::gen::inRange(1, 900);  // submissions within this many seconds
  for (int i = 0; i < jobs; ++i) {
    const int gpus = mixed ? *rc::gen::element(1, 1, 2, 3, 4, 8)
                           : *rc::gen::element(1, 1, 1, 2, 2, 3, 4, 4, 8, 8, 12, 16);
    testing::add_job(w, *rc::gen::inRange(0, tenants), gpus, *rc::gen::inRange(0, window),
                     *rc::gen::inRange(1, 3000), *rc::gen::inRange(5, 100),
                     *rc::gen::inRange(500, 16000));
    if (gpus == 1 && *rc::gen::inRange(0, 6) == 0)
      w.jobs.back().gpu_milli = *rc::gen::element(250, 500, 750);
  }
  w.finalize();
  for (const auto& j : w.jobs)
    if (*rc::gen::inRange(0, 10) == 0)
      sc.config.cancellations.push_back({j.id, j.submit + seconds(*rc::gen::inRange(0, 2000))});
  if (*rc::gen::inRange(0, 4) == 0)
    sc.config.restart_policy_at.push_back(seconds(*rc::gen::inRange(1, 4000)));
  // Every job ends well within this (200 jobs of at most 3,000 s on 8 GPUs or more): a run
  // past it has a job that waits forever, an error (InputError) instead of a hang.
  sc.config.max_time = seconds(200 * 3000 * 2);
  return sc;
}

RunRecord run(const Scenario& sc, const Make& make, const std::vector<std::string>& sets) {
  PolicyOptions options;
  for (const auto& s : sets) options.set(s);
  std::vector<Time> oracle;
  for (const auto& t : sc.workload.truth) oracle.push_back(t.work);
  const PolicyFactory factory = [&]() {
    return make(PolicyContext{sc.workload.cluster, sc.workload.tenants, options, oracle});
  };
  return simulate(sc.workload, factory, sc.config);
}

// The same run, field by field (the first difference is reported). `trailing_wake`: the run
// `a` may end later than `b` with nothing running or waiting in between (Tiresias: a wake-up
// asked for a threshold crossing that no job reached, after the last event; its samples run
// on with an idle cluster; docs/performance.md "Deep queues").
void expect_same(const RunRecord& a, const RunRecord& b, bool trailing_wake = false) {
  RC_ASSERT(a.jobs.size() == b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    const JobOutcome &x = a.jobs[i], &y = b.jobs[i];
    RC_ASSERT(x.status == y.status);
    RC_ASSERT(x.first_start == y.first_start);
    RC_ASSERT(x.end == y.end);
    RC_ASSERT(x.queue == y.queue);
    RC_ASSERT(x.lost_work == y.lost_work);
    RC_ASSERT(x.preemptions == y.preemptions);
    RC_ASSERT(x.max_slowdown == y.max_slowdown);
    RC_ASSERT(x.wait_reason == y.wait_reason);
    RC_ASSERT(x.reject_reason == y.reject_reason);
  }
  RC_ASSERT(a.wait_ms_by_reason == b.wait_ms_by_reason);
  RC_ASSERT(a.policy_summary == b.policy_summary);
  RC_ASSERT(a.end == b.end || (trailing_wake && a.end > b.end));
  RC_ASSERT(a.steps.size() == b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    RC_ASSERT(a.steps[i].t == b.steps[i].t);
    RC_ASSERT(a.steps[i].busy_gpus == b.steps[i].busy_gpus);
    RC_ASSERT(a.steps[i].sm_sum == b.steps[i].sm_sum);
  }
  RC_ASSERT(a.samples.size() == b.samples.size() ||
            (a.end > b.end && a.samples.size() > b.samples.size()));
  for (std::size_t i = 0; i < a.samples.size(); ++i) {
    if (i >= b.samples.size()) {  // after the reference's end: idle
      RC_ASSERT(a.samples[i].running_jobs == 0 && a.samples[i].pending_jobs == 0);
      continue;
    }
    RC_ASSERT(a.samples[i].t == b.samples[i].t);
    RC_ASSERT(a.samples[i].busy_gpus == b.samples[i].busy_gpus);
    RC_ASSERT(a.samples[i].pending_jobs == b.samples[i].pending_jobs);
    RC_ASSERT(a.samples[i].preemptions == b.samples[i].preemptions);
  }
}

Make registered(const std::string& name) {
  return [name](const PolicyContext& ctx) { return make_policy(name, ctx); };
}

void check(const Make& policy, const Make& reference, std::vector<std::string> sets = {},
           bool trailing_wake = false) {
  const Scenario sc = deep_queue();
  const auto attempt = [&](const Make& make, const char* which) {
    try {
      return run(sc, make, sets);
    } catch (const std::exception& e) {
      std::string d;
      for (const auto& j : sc.workload.jobs)
        d += " [" + std::to_string(j.tenant.index()) + " g" + std::to_string(j.gpus) + " m" +
             std::to_string(j.gpu_milli) + " s" + std::to_string(j.submit) + " w" +
             std::to_string(sc.workload.truth[j.id.index()].work) + " u" +
             std::to_string(j.gpu_util) + " mem" + std::to_string(j.gpu_memory_mib) + "]";
      for (const auto& n : sc.workload.cluster.nodes) d += " node" + std::to_string(n.gpus);
      for (const auto& c : sc.config.cancellations)
        d += " cancel" + std::to_string(c.job.index()) + "@" + std::to_string(c.at);
      for (Time t : sc.config.restart_policy_at) d += " restart@" + std::to_string(t);
      RC_FAIL(std::string(which) + ": " + e.what() + d);
    }
  };
  const RunRecord a = attempt(policy, "policy");
  expect_same(a, attempt(reference, "reference"), trailing_wake);
}

Scope scope_of(const PolicyContext& ctx) {
  return read_scope(ctx.options, Scope::Isolated);
}

RC_GTEST_PROP(DeepQueue, FifoPooledBackfill, ()) {
  check(registered("fifo-pooled"), [](const PolicyContext& ctx) {
    return std::make_unique<testing::ReferenceOrdered>(ctx, Scope::Pooled, StartRule::Backfill,
                                                       false);
  });
}

RC_GTEST_PROP(DeepQueue, SjfBackfill, ()) {
  const std::string scope = *rc::gen::element<std::string>("isolated", "pooled");
  check(registered("sjf"),
        [](const PolicyContext& ctx) {
          return std::make_unique<testing::ReferenceOrdered>(ctx, scope_of(ctx),
                                                             StartRule::Backfill, true);
        },
        {"scope=" + scope, "backfill=on"});
}

RC_GTEST_PROP(DeepQueue, Srtf, ()) {
  const std::string scope = *rc::gen::element<std::string>("isolated", "pooled");
  check(registered("srtf"),
        [](const PolicyContext& ctx) {
          return std::make_unique<testing::ReferenceGreedy>(
              ctx, testing::ReferenceGreedy::Kind::Srtf, scope_of(ctx));
        },
        {"scope=" + scope});
}

RC_GTEST_PROP(DeepQueue, Tiresias, ()) {
  const std::string scope = *rc::gen::element<std::string>("isolated", "pooled");
  // Short rounds and a low threshold: jobs pass into the low queue while they run.
  const int interval = *rc::gen::element(3, 7, 60);
  const int threshold = *rc::gen::element(100, 2000, 18000);
  check(
      registered("tiresias"),
      [&](const PolicyContext& ctx) {
        return std::make_unique<testing::ReferenceGreedy>(
            ctx, testing::ReferenceGreedy::Kind::Tiresias, scope_of(ctx), threshold, interval);
      },
      {"scope=" + scope, "interval=" + std::to_string(interval),
       "threshold=" + std::to_string(threshold)},
      true);
}

RC_GTEST_PROP(DeepQueue, Kueue, ()) {
  KueueConfig cfg;
  cfg.fair_sharing = *rc::gen::arbitrary<bool>();
  cfg.pooled = *rc::gen::inRange(0, 4) != 0;
  cfg.reclaim = *rc::gen::element(ReclaimPolicy::Any, ReclaimPolicy::LowerPriority);
  KueueConfig ref = cfg;
  ref.reference_scan = true;
  check([cfg](const PolicyContext& ctx) { return make_kueue(ctx, cfg); },
        [ref](const PolicyContext& ctx) { return make_kueue(ctx, ref); });
}

RC_GTEST_PROP(DeepQueue, Lucid, ()) {
  const std::string scope = *rc::gen::element<std::string>("isolated", "pooled");
  const std::string sharing = *rc::gen::element<std::string>("pas", "always", "never");
  const auto make = [](bool reference) {
    return [reference](const PolicyContext& ctx) {
      LucidSetup setup = lucid_setup(ctx);
      setup.reference_scan = reference;
      return make_lucid(ctx, std::move(setup));
    };
  };
  check(make(false), make(true), {"scope=" + scope, "sharing=" + sharing});
}

RC_GTEST_PROP(DeepQueue, Slurm, ()) {
  // Short decay ticks and backfill intervals (the jobs arrive within minutes), sometimes no
  // requeue delay, scavenger jobs that reserve, or another preemption order.
  SlurmConfig cfg;
  cfg.priority.calc_period = seconds(*rc::gen::element(7, 60, 300));
  cfg.priority.max_age = seconds(*rc::gen::element(60, 600, 604800));
  cfg.priority.half_life = seconds(*rc::gen::element(0, 300, 604800));
  cfg.bf_interval = seconds(*rc::gen::element(1, 30));
  cfg.requeue_delay = seconds(*rc::gen::element(0, 5, 121));
  cfg.scavenger_reserve = *rc::gen::arbitrary<bool>();
  cfg.preempt_youngest_first = *rc::gen::arbitrary<bool>();
  cfg.bf_max_job_test = *rc::gen::element(3, 500);
  SlurmConfig ref = cfg;
  ref.reference_scan = true;
  check([cfg](const PolicyContext& ctx) { return make_slurm(ctx, cfg); },
        [ref](const PolicyContext& ctx) { return make_slurm(ctx, ref); });
}

}  // namespace
}  // namespace ds
