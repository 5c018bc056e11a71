// The controller's configuration file (YAML; sample in deploy/deepshare-slurm.yaml). It holds
// DeepShare's own knobs only; tenants and their quotas come from Slurm accounting.
//
//   partition: batch            # the Slurm partition DeepShare schedules (its jobs wait parked)
//   policy: deepshare           # any non-oracle policy (docs/slurm.md §10) and its `--set` keys
//   options: {sharing: "on"}
//   time_scale: 1               # controller time = wall time x scale (replays compress time)
//   poll_ms: 100                # observation period
//   metrics: 127.0.0.1:9464     # Prometheus endpoint (empty: none)
//   journal: /var/lib/deepshare/journal.log   # append-only decision log + clock
//   state_dir: /var/lib/deepshare   # the leader lease (lease.hpp): one active controller per
//                               # cluster, the others wait as hot standbys (empty: no lease)
//   gpu_memory_mib: 24576       # per GPU (Slurm does not report it), of nodes without a model
//   gpu_models: {a100: 81920, v100: 32768}   # GPU models -> memory MiB per GPU: a node whose
//                               # Slurm Features name one of them has GPUs of that model; a
//                               # job's gm= (the gate) then runs only on nodes of its model.
//                               # Empty (the default): nodes untyped, models not enforced
//   start_margin_s: 30          # a start or preemption Slurm has not carried out after
//                               # KillWait (read from Slurm) + this margin has failed
//   tenant_source: slurm        # slurm: every account with an association is a tenant, its
//                               #   quota is the association's GrpTRES=<quota_tres>=N, its
//                               #   weight the association's Fairshare; config: `tenants`
//                               #   below define everything (replays, clusters without slurmdbd)
//   quota_tres: gres/gpu
//   tenants_refresh_s: 5        # how often associations are re-read (sacctmgr modify applies)
//   tenant_defaults: {slo_queue_s: 300, max_slowdown: 1.5, checkpoint_interval_s: 1800}
//   tenants:                    # per-account DeepShare knobs (tenant_source: slurm), or
//     - account: research       # the whole tenant (tenant_source: config):
//       slo_queue_s: 300        #   name, account, quota_gpus, class, weight, trace (replay)
//       max_slowdown: 1.5
//       checkpoint_interval_s: 1800
// Assumptions: accounts are listed once each; unknown keys are errors (typos must not pass);
// with tenant_source: slurm the keys Slurm owns (quota_gpus, class, weight) are errors too.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/cluster.hpp"
#include "model/tenant.hpp"

namespace ds::slurm {

struct TenantConfig {
  Tenant tenant;
  std::string account;
  std::string trace_tenant;
  // Kubernetes: the grace period of its evicted pods, seconds (-1: the configuration's
  // eviction_grace_s); docs/kubernetes.md §8. Slurm preempts with its own GraceTime.
  std::int64_t eviction_grace_s = -1;
};

enum class TenantSource : std::uint8_t { Slurm, Config };

struct ControllerConfig {
  std::string partition = "batch";
  std::string policy = "deepshare";
  std::map<std::string, std::string> options;
  double time_scale = 1.0;
  int poll_ms = 100;
  std::string metrics;  // host:port
  std::string journal;
  std::string state_dir;  // leader lease + epoch; empty: no lease
  std::int64_t gpu_memory_mib = kDefaultGpuMemoryMib;
  std::map<std::string, std::int64_t> gpu_models;  // model (a node Feature) -> MiB per GPU
  double start_margin_s = 30;
  TenantSource tenant_source = TenantSource::Slurm;
  std::string quota_tres = "gres/gpu";
  double tenants_refresh_s = 5;
  std::int64_t eviction_grace_s = 30;  // Kubernetes: tenants without their own (TenantConfig)
  Tenant tenant_defaults;              // DeepShare's knobs for accounts not listed
  std::vector<TenantConfig> tenants;   // config: the tenants; slurm: per-account knobs
  std::string source;                  // file it came from

  // The knobs of `account` (tenant_source: slurm): its listed entry or the defaults.
  [[nodiscard]] Tenant knobs_for(const std::string& account) const;
};

// Throws InputError naming the file and the field.
ControllerConfig load_controller_config(const std::string& path);
// The same for the text of a file named `path` (the fuzz target, tests).
ControllerConfig parse_controller_config(const std::string& path, const std::string& text);

std::string lower(std::string s);

}  // namespace ds::slurm
