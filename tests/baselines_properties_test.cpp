// Property tests (rapidcheck) of the scopes of the Lucid baselines sjf, srtf, qssf and
// tiresias on random workloads: a job is rejected exactly when it is larger than its
// scope (a tenant's nodes when isolated, the cluster when pooled), time accounting is
// exact, and the non-preemptive ones never preempt. What every policy must keep is the
// policy contract (tests/contract_test.cpp).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "model/testing.hpp"
#include "random_workload.hpp"
#include "registry/registry.hpp"
#include "sim/simulator.hpp"

namespace ds {
namespace {

Workload random_workload() {
  return testing::random_workload({.max_jobs = 60});
}

RunRecord run(const Workload& w, const std::string& policy, const std::string& scope) {
  PolicyOptions options;
  options.set("scope=" + scope);
  std::vector<Time> oracle;
  for (const auto& t : w.truth) oracle.push_back(t.work);
  auto p = make_policy(policy, PolicyContext{w.cluster, w.tenants, options, oracle});
  return simulate(w, *p);
}

void check(const std::string& policy, bool preemptive) {
  const Workload w = random_workload();
  const std::string scope = *rc::gen::element<std::string>("isolated", "pooled");
  const RunRecord r = run(w, policy, scope);
  const int tenant_gpus = w.tenants.front().quota_gpus;  // equal for every tenant here
  const int capacity = scope == "pooled" ? w.cluster.total_gpus() : tenant_gpus;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    const JobSpec& j = w.jobs[i];
    const JobOutcome& o = r.jobs[i];
    RC_ASSERT((o.status == JobStatus::Rejected) == (j.gpus > capacity));
    if (o.status == JobStatus::Rejected) continue;
    RC_ASSERT(o.status == JobStatus::Done);
    RC_ASSERT(o.first_start >= j.submit);
    // Exact accounting: waiting + work + work redone + restart overheads.
    RC_ASSERT(o.end == j.submit + o.queue + w.truth[i].work + o.lost_work + o.overhead);
    if (!preemptive) RC_ASSERT(o.preemptions == 0);
  }
}

RC_GTEST_PROP(BaselinesProperties, Sjf, ()) {
  check("sjf", false);
}
RC_GTEST_PROP(BaselinesProperties, Qssf, ()) {
  check("qssf", false);
}
RC_GTEST_PROP(BaselinesProperties, Srtf, ()) {
  check("srtf", true);
}
RC_GTEST_PROP(BaselinesProperties, Tiresias, ()) {
  check("tiresias", true);
}

}  // namespace
}  // namespace ds
