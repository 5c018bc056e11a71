// The controller's configuration file (YAML; sample in deploy/deepshare-slurm.yaml).
//
//   partition: batch            # the Slurm partition DeepShare schedules (jobs there wait held)
//   policy: deepshare           # any registered policy; options as `--set` keys
//   options: {sharing: "on"}
//   time_scale: 1               # controller time = wall time x scale (replays compress time)
//   poll_ms: 100                # observation period
//   metrics: 127.0.0.1:9464     # Prometheus endpoint (empty: none)
//   journal: /var/lib/deepshare/journal.log   # append-only decision log + clock
//   gpu_memory_mib: 24576       # per GPU (Slurm does not report it)
//   tenants:
//     - name: research          # tenant name in outputs
//       account: research       # Slurm account mapped to it (default: name; case-insensitive)
//       quota_gpus: 8
//       slo_queue_s: 300        # target queueing delay for entitled jobs
//       max_slowdown: 1.5
//       class: guaranteed       # or best-effort
//       weight: 1
//       checkpoint_interval_s: 1800
//       trace: vc8Gr            # replay only: the trace tenant replayed under this account
// Assumptions: tenants are listed once each; unknown keys are errors (typos must not pass).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/tenant.hpp"

namespace ds::slurm {

struct TenantConfig {
  Tenant tenant;
  std::string account;
  std::string trace_tenant;
};

struct ControllerConfig {
  std::string partition = "batch";
  std::string policy = "deepshare";
  std::map<std::string, std::string> options;
  double time_scale = 1.0;
  int poll_ms = 100;
  std::string metrics;  // host:port
  std::string journal;
  std::int64_t gpu_memory_mib = 24 * 1024;
  std::vector<TenantConfig> tenants;
  std::string source;  // file it came from
};

// Throws InputError naming the file and the field.
ControllerConfig load_controller_config(const std::string& path);

}  // namespace ds::slurm
