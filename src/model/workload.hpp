// Everything one simulation needs: the cluster, tenants, jobs and their hidden truth.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "model/cluster.hpp"
#include "model/job.hpp"
#include "model/tenant.hpp"

namespace ds {

struct Workload {
  std::string name;     // where it came from (file or generator), for reports
  std::string format;   // importer that produced it
  std::string aux_dir;  // folder of auxiliary inputs found beside the trace (Venus aux/), if any
  Cluster cluster;
  std::vector<Tenant> tenants;
  std::vector<JobSpec> jobs;    // ordered by (submit, importer's tie order); id == index
  std::vector<JobTruth> truth;  // parallel to jobs
  std::vector<std::string> users;
  std::unordered_map<std::string, std::uint32_t> user_index;  // name -> UserId
  std::vector<Profile> profiles;
  // What the importer skipped or assumed (e.g. "skipped 12 CPU-only jobs"), one line
  // each; the CLI prints them so that nothing is dropped silently.
  std::vector<std::string> notes;

  TenantId tenant_by_name(const std::string& name) const;  // invalid when absent
  // Interns a user or profile name; returns its dense id.
  UserId intern_user(const std::string& name);
  int intern_profile(const Profile& p);

  // Stable-sorts jobs by submit time (keeping the importer's order among equal
  // times), assigns dense ids and checks invariants; throws InputError on
  // inconsistent input (unknown tenant, non-positive GPUs, negative work, ...).
  void finalize();
  // Compresses inter-arrival times by `factor` (> 1 means more load), keeping
  // the first submit time and the order.
  void scale_load(double factor);
  // Delays every job's submission by a seeded random 0..`max_delay` (whole seconds), then
  // by as much as the job before it was delayed beyond it, so that the order and the ids
  // stay as they are (`--jitter`): the same workload observed again, for ensembles of runs.
  void jitter_submits(Time max_delay, std::uint64_t seed);
  // "fnv1a64:..." over what a simulation of this workload depends on (tenants, nodes, jobs
  // and their truth, profiles), in order: two runs with equal digests ran the same workload.
  // Output manifests record it (core/manifest.hpp), so that `report` can tell a run of
  // another trace inside a comparison folder.
  [[nodiscard]] std::string digest() const;
  // Offered load: sum of GPUs x share x run time / (cluster GPUs x submission span).
  [[nodiscard]] double offered_load() const;
  // Resizes the cluster so that the offered load is about `target`: every owner's
  // nodes (and the shared pool's) are cut, or repeated, to the same GPU factor, keeping
  // at least one node each; a cut keeps an evenly spread subset of the nodes (a mixed
  // node list keeps its mix). Quotas of tenants that own nodes become their GPUs,
  // others scale by the factor. Adds a note saying so.
  void fit_cluster_to_load(double target);
};

}  // namespace ds
