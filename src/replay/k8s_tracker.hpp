// What a Kubernetes replay saw happen to each job's pods, and when each run must end: the
// part of `deepshare k8s replay` without I/O (docs/kubernetes.md §7).
//
// Times: a pod's state is timestamped when the replay's watch delivers it (wall ms; the
// API's own timestamps are whole seconds, 120 trace seconds at time scale 120). The
// Kubernetes pod-startup SLO is measured the same way ("observed via watch"). The API's
// records (the Job's creationTimestamp, PodScheduled's lastTransitionTime, status.startTime,
// the container's finishedAt) are kept beside them, per job, to check the two agree.
//
// Per job, in wall time, as the Slurm replay's stand-in does it (replay.hpp):
//  1. A run starts when its pod is seen Running; it was decided when the pod was first seen
//     bound (spec.nodeName set). The run's end is start + the work left after the job's last
//     checkpoint, plus the restart overhead (model/execution.hpp) for every run but the
//     first: the replay writes it to the pod as deepshare.io/run-until and KWOK ends the pod
//     then (scripts/k8s/stages/pod-run-for.yaml). The replay plays the job's checkpoint store.
//  2. A run ends completed when its pod is seen Succeeded; preempted when the pod is seen
//     terminating (deletionTimestamp), Failed or deleted before that. The progress kept is
//     what the job had checkpointed: whole checkpoint intervals of the work done after the
//     run's overhead (the simulator's rule, observed.hpp).
//  3. Placement: the run's node, and the lowest GPUs of that node no other observed run holds
//     (nvidia.com/gpu names no device). Borrowed: the tenant's running GPUs, with this run,
//     exceed its quota (a job runs guaranteed while its tenant stays within quota, DESIGN §3).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "driver/clock.hpp"
#include "k8s/objects.hpp"
#include "model/workload.hpp"
#include "replay/excerpt.hpp"
#include "replay/observed.hpp"

namespace ds::k8s {

using nlohmann::json;

// A run that started and the end the replay gives it (to write on the pod).
struct RunEnd {
  std::string ns, pod;
  std::int64_t until_wall_ms = 0;
};

// The API's own record of a job, Unix seconds (-1: not seen).
struct ApiTimes {
  std::int64_t created = -1;       // the Job's creationTimestamp
  std::int64_t scheduled = -1;     // first pod: PodScheduled lastTransitionTime
  std::int64_t started = -1;       // first pod: status.startTime
  std::int64_t finished = -1;      // last pod: its container's finishedAt
  double watch_start_wall_s = -1;  // the first run's start as the watch saw it (Unix s)
};

// Unix ms as RFC 3339 with milliseconds, UTC ("2026-12-01T21:00:05.250Z").
std::string rfc3339_ms(std::int64_t unix_ms);

class PodTracker {
 public:
  // `label_of[i]`: the value of deepshare.io/trace-job on job i's pods (unique).
  PodTracker(const Workload& w, std::vector<std::string> label_of, double time_scale,
             driver::DriverClock clock);

  void submitted(std::size_t job, std::int64_t wall_ms, std::int64_t api_created_s);
  // One state of a pod as the watch delivered it at wall_ms (gone: a DELETED event). Returns
  // the end to write on the pod when a run starts (or when a running pod lacks it).
  std::optional<RunEnd> observe(const json& pod, bool gone, std::int64_t wall_ms);
  // After a relist: pods the tracker thinks alive but the list does not hold are gone.
  void relisted(const std::vector<std::string>& uids, std::int64_t wall_ms);

  [[nodiscard]] const std::vector<slurm::ObservedJob>& observed() const { return obs_; }
  [[nodiscard]] const std::vector<ApiTimes>& api_times() const { return api_; }
  [[nodiscard]] std::size_t completed() const { return completed_; }
  [[nodiscard]] std::size_t restarts_patched() const { return restarts_; }

 private:
  struct Live {
    std::string uid, ns, pod;
    std::int64_t bound_wall = -1, start_wall = -1, until_wall = -1;
    int node = -1;
    std::uint64_t mask = 0;
    bool running = false;
  };
  struct Job {
    std::int64_t work_ms = 0, ckpt_ms = 0, over_ms = 0;  // wall ms
    std::int64_t progress_ms = 0;                        // checkpointed
    Live live;
  };
  void start_run(std::size_t i, const json& pod, std::int64_t wall_ms);
  void end_run(std::size_t i, std::int64_t wall_ms, bool completed);
  [[nodiscard]] int node_index(const std::string& name) const;

  const Workload& w_;
  driver::DriverClock clock_;
  std::map<std::string, std::size_t> by_label_;
  std::vector<Job> jobs_;
  std::vector<slurm::ObservedJob> obs_;
  std::vector<ApiTimes> api_;
  std::vector<std::uint64_t> node_used_;
  std::vector<int> tenant_gpus_;
  std::size_t completed_ = 0, restarts_ = 0;
};

}  // namespace ds::k8s
