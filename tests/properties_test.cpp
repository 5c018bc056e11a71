// Property tests (rapidcheck) of the isolated scope and of load scaling. What every
// registered policy must keep (validity, determinism, no starvation, waiting reasons) is
// the policy contract: tests/contract_test.cpp.
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
  return testing::random_workload({.max_jobs = 80});
}

RC_GTEST_PROP(Properties, IsolatedTenantsOnlyUseTheirOwnNodes, ()) {
  Workload w = random_workload();
  PolicyOptions o;
  auto inner = make_policy("fifo-isolated", PolicyContext{w.cluster, w.tenants, o});
  struct Spy final : Policy {
    Policy* inner;
    const Workload* w;
    Decisions decide(const ClusterSnapshot& s) override {
      Decisions d = inner->decide(s);
      for (const auto& st : d.start)
        for (const auto& a : st.placement)
          RC_ASSERT(w->cluster.nodes[a.node.index()].owner == s.jobs[st.job.index()].tenant);
      return d;
    }
  } spy;
  spy.inner = inner.get();
  spy.w = &w;
  simulate(w, spy);
}

RC_GTEST_PROP(Properties, LoadFactorKeepsOrderAndFirstSubmit, ()) {
  Workload w = random_workload();
  const double f = *rc::gen::element(0.5, 1.0, 1.25, 1.5, 3.0);
  Workload s = w;
  s.scale_load(f);
  RC_ASSERT(s.jobs.front().submit == w.jobs.front().submit);
  for (std::size_t i = 1; i < s.jobs.size(); ++i)
    RC_ASSERT(s.jobs[i - 1].submit <= s.jobs[i].submit);
}

}  // namespace
}  // namespace ds
