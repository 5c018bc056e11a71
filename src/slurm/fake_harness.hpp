// Test support: the Slurm controller on the in-process fake cluster (fake_cluster.hpp), as
// controller_fake_test.cpp and the contract suite (tests/contract_test.cpp) drive it: build a
// controller (restarts retry while "Slurm" is unreachable), cycle it, submit multi-tenant
// waves, and list what a run did wrong. Never linked into the `deepshare` binary.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "driver/lease.hpp"
#include "driver/log.hpp"
#include "slurm/controller.hpp"
#include "slurm/fake_cluster.hpp"

namespace ds::slurm {

// A tenant of the fake cluster's controller configuration (tenant_source: config).
TenantConfig fake_tenant(const std::string& name, int quota);
// alpha (8 GPUs), beta (8), scav (best effort) on the fake's 16 GPUs; `policy` with the
// options that make DeepShare lend at once (other policies: none).
ControllerConfig fake_config(const std::string& policy = "deepshare");

class FakeHarness {
 public:
  explicit FakeHarness(FakeOptions o = {});
  ~FakeHarness();
  FakeHarness(const FakeHarness&) = delete;
  FakeHarness& operator=(const FakeHarness&) = delete;

  // A controller on the fake (controller time = Unix ms, as `slurm run`).
  std::unique_ptr<Controller> start(driver::Lease* lease = nullptr, Actuator* act = nullptr);
  // Cycles every `poll` ms for `ms`.
  void run(Controller& c, std::int64_t ms, std::int64_t poll = 100);
  // A multi-tenant load with borrowing and reclaims: scav borrows idle quota, alpha and beta
  // come back for it.
  void submit_wave(std::mt19937_64& rng, int jobs);
  // What went wrong: a job that did not end (completed, or cancelled by DeepShare with a
  // reason when `refusals_ok`), Slurm running (or trying to: the PrologSlurmctld refused it)
  // a job without DeepShare's pin for that run or on other GPUs, a rewritten GRES request, and
  // (unless `conflicts_ok`) two jobs pinned to the same GPUs.
  [[nodiscard]] std::vector<std::string> unsound(bool conflicts_ok = false,
                                                 bool refusals_ok = false) const;

  FakeCluster fc;
  Controller::PolicyFactory policy;  // unset: the registry's (cfg.policy)
  ControllerConfig cfg;

 private:
  std::FILE* out_;

 public:
  driver::Log log;
};

}  // namespace ds::slurm
