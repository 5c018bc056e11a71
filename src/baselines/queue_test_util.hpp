// Helpers for the baselines' hand-made scenario tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/testing.hpp"
#include "policy/policy.hpp"
#include "sim/simulator.hpp"
#include "trace/aux_files.hpp"

namespace ds::testing {

using MakePolicy = std::unique_ptr<Policy> (*)(const PolicyContext&);

// Simulates `w` under make(...) with the given `--set` options, the true run times
// as oracle and the files of the aux folder `aux_dir` (read as the CLI does).
inline RunRecord run_policy(const Workload& w, MakePolicy make,
                            const std::vector<std::string>& sets = {},
                            const std::string& aux_dir = "") {
  PolicyOptions options;
  for (const auto& s : sets) options.set(s);
  std::vector<Time> oracle;
  for (const auto& t : w.truth) oracle.push_back(t.work);
  const AuxData aux = load_aux(aux_dir);
  auto p = make(PolicyContext{w.cluster, w.tenants, options, oracle, &aux});
  return simulate(w, *p);
}

// Every tenant checkpoints at preemption (Lucid's assumption).
inline void checkpoint_at_preemption(Workload& w) {
  for (auto& t : w.tenants) t.checkpoint_interval = 0;
}

inline std::int64_t start_s(const RunRecord& r, int job) {
  return r.jobs[static_cast<std::size_t>(job)].first_start / kSecond;
}
inline std::int64_t end_s(const RunRecord& r, int job) {
  return r.jobs[static_cast<std::size_t>(job)].end / kSecond;
}

}  // namespace ds::testing
