// A thin C++ wrapper over libslurm (Slurm 22.05, Debian libslurm-dev): the ports of
// ports.hpp (ClusterSource, Actuator) for a real cluster, and job submission for replays.
//
// Why libslurm and not the CLIs: one in-process RPC per call (no fork of squeue/scontrol
// every 100 ms) and typed fields (gres_detail_str, restart_cnt, admin_comment). Measured
// in ../shared/research/slurm-on-one-machine.md §5.
// Assumptions: slurm_init() reads $SLURM_CONF; the state-to-string helpers are exported by
// libslurm.so.38 but not declared in its headers, so they are declared in api.cpp.
// Jobs are named by their id string ("123", or "123_4" for task 4 of array 123, split off
// or not), which every call here accepts. Not thread-safe: one SlurmApi per thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/prometheus.hpp"
#include "slurm/gres.hpp"
#include "slurm/ports.hpp"

namespace ds::slurm {

class SlurmApi final : public ClusterSource, public Actuator {
 public:
  SlurmApi();
  ~SlurmApi();
  SlurmApi(const SlurmApi&) = delete;
  SlurmApi& operator=(const SlurmApi&) = delete;

  // Every job Slurm still lists; nullopt (and last_error) on an RPC failure.
  std::optional<std::vector<JobInfo>> jobs();
  // ClusterSource: slurm_load_jobs(since): SLURM_NO_CHANGE_IN_DATA -> unchanged.
  std::optional<JobTable> read_jobs(std::int64_t since) override;
  std::optional<std::vector<NodeInfo>> nodes() override;
  std::optional<SlurmConfig> config() override;
  std::optional<std::vector<Association>> associations(const std::string& tres) override;
  std::optional<std::uint32_t> submit(const SubmitRequest& r);
  // Actuator
  bool update(const Update& u) override;
  bool release(const std::string& job);
  // JOB_RUNNING: a job already ending, e.g. cancelled by its user, is left alone.
  bool requeue_hold(const std::string& job) override;
  bool cancel(const std::string& job) override;
  [[nodiscard]] const std::string& last_error() const override { return error_; }
  [[nodiscard]] int last_errno() const { return errno_; }
  [[nodiscard]] bool last_failure_done() const override;
  // Records every RPC's latency and outcome there (deepshare_slurm_rpc_*); null: none.
  void set_stats(driver::RpcStats* stats) { stats_ = stats; }

 private:
  friend class RpcScope;
  bool fail(const char* what);
  std::string error_;
  int errno_ = 0;
  driver::RpcStats* stats_ = nullptr;
  bool failed_ = false;  // in the current RPC
};

}  // namespace ds::slurm
