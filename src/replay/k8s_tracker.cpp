#include "replay/k8s_tracker.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/error.hpp"
#include "model/execution.hpp"
#include "replay/k8s_objects.hpp"

namespace ds::k8s {
namespace {

std::string str_at(const json& o, std::initializer_list<const char*> path) {
  const json* p = &o;
  for (const char* k : path) {
    if (!p->is_object() || !p->contains(k)) return "";
    p = &(*p)[k];
  }
  return p->is_string() ? p->get<std::string>() : "";
}

std::int64_t wall_to_scaled(Time trace_ms, double scale) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(trace_ms) / scale));
}

// PodScheduled's lastTransitionTime when it is True.
std::string scheduled_at(const json& pod) {
  const json conds = pod.value("status", json::object()).value("conditions", json::array());
  for (const auto& c : conds)
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "True")
      return c.value("lastTransitionTime", "");
  return "";
}

std::string finished_at(const json& pod) {
  const json cs = pod.value("status", json::object()).value("containerStatuses", json::array());
  for (const auto& c : cs) {
    const std::string t = str_at(c, {"state", "terminated", "finishedAt"});
    if (!t.empty()) return t;
  }
  return "";
}

}  // namespace

std::string rfc3339_ms(std::int64_t unix_ms) {
  const std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(unix_ms % 1000));
  return buf;
}

PodTracker::PodTracker(const Workload& w, std::vector<std::string> label_of, double scale,
                       driver::DriverClock clock)
    : w_(w), clock_(clock) {
  const std::size_t n = w.jobs.size();
  if (label_of.size() != n) throw InputError("PodTracker: one label per job");
  jobs_.resize(n);
  obs_.resize(n);
  api_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!by_label_.emplace(label_of[i], i).second)
      throw InputError("two trace jobs map to the pod label '" + label_of[i] + "'");
    const JobSpec& j = w.jobs[i];
    jobs_[i].work_ms = wall_to_scaled(w.truth[i].work, scale);
    jobs_[i].ckpt_ms = wall_to_scaled(w.tenants[j.tenant.index()].checkpoint_interval, scale);
    jobs_[i].over_ms = wall_to_scaled(restart_overhead(j.gpus), scale);
  }
  node_used_.assign(w.cluster.nodes.size(), 0);
  tenant_gpus_.assign(w.tenants.size(), 0);
}

void PodTracker::submitted(std::size_t job, std::int64_t wall_ms, std::int64_t api_created_s) {
  obs_.at(job).submit = clock_.at(wall_ms);
  api_.at(job).created = api_created_s;
}

int PodTracker::node_index(const std::string& name) const {
  for (const auto& n : w_.cluster.nodes)
    if (n.name == name) return static_cast<int>(n.id.index());
  return -1;
}

std::optional<RunEnd> PodTracker::observe(const json& pod, bool gone, std::int64_t wall_ms) {
  const json& meta = pod.value("metadata", json::object());
  const auto it = by_label_.find(str_at(meta, {"labels", kTraceJobLabel}));
  if (it == by_label_.end()) return std::nullopt;
  const std::size_t i = it->second;
  Job& job = jobs_[i];
  if (obs_[i].completed) return std::nullopt;
  const std::string uid = meta.value("uid", "");
  const std::string phase = str_at(pod, {"status", "phase"});
  const bool ending = gone || meta.contains("deletionTimestamp") || phase == "Failed";
  if (job.live.uid != uid) {
    if (ending) return std::nullopt;  // an old pod's late news, or one that never ran
    if (job.live.running) end_run(i, wall_ms, false);  // a new pod: the old one's end was missed
    job.live = Live{};
    job.live.uid = uid;
    job.live.ns = meta.value("namespace", "");
    job.live.pod = meta.value("name", "");
  }
  Live& live = job.live;
  const std::string node = str_at(pod, {"spec", "nodeName"});
  if (!node.empty() && live.bound_wall < 0) live.bound_wall = wall_ms;
  if (obs_[i].runs.empty() && api_[i].scheduled < 0)
    api_[i].scheduled = rfc3339_seconds(scheduled_at(pod));
  if (!live.running && live.start_wall < 0 && !ending && phase == "Running") {
    if (obs_[i].runs.empty())
      api_[i].started = rfc3339_seconds(str_at(pod, {"status", "startTime"}));
    start_run(i, pod, wall_ms);
    return RunEnd{live.ns, live.pod, live.until_wall};
  }
  if (!live.running) return std::nullopt;
  if (phase == "Succeeded") {
    api_[i].finished = rfc3339_seconds(finished_at(pod));
    end_run(i, wall_ms, true);
    return std::nullopt;
  }
  if (ending) {
    end_run(i, wall_ms, false);
    return std::nullopt;
  }
  if (str_at(meta, {"annotations", kRunUntil}).empty())  // a patch that did not land
    return RunEnd{live.ns, live.pod, live.until_wall};
  return std::nullopt;
}

void PodTracker::start_run(std::size_t i, const json& pod, std::int64_t wall_ms) {
  Job& job = jobs_[i];
  Live& live = job.live;
  const JobSpec& spec = w_.jobs[i];
  const std::size_t t = spec.tenant.index();
  live.running = true;
  live.start_wall = wall_ms;
  if (live.bound_wall < 0) live.bound_wall = wall_ms;
  const bool restart = !obs_[i].runs.empty();
  restarts_ += restart;
  live.until_wall = wall_ms + (restart ? job.over_ms : 0) + (job.work_ms - job.progress_ms);
  slurm::ObservedRun run;
  run.start = clock_.at(wall_ms);
  run.decided = clock_.at(live.bound_wall);
  run.borrowed = tenant_gpus_[t] + spec.gpus > w_.tenants[t].quota_gpus;
  live.node = node_index(str_at(pod, {"spec", "nodeName"}));
  if (live.node >= 0) {
    const Node& n = w_.cluster.nodes[static_cast<std::size_t>(live.node)];
    std::uint64_t& used = node_used_[static_cast<std::size_t>(live.node)];
    for (int g = 0, need = spec.gpus; g < n.gpus && need > 0; ++g)
      if (!(used >> g & 1U)) live.mask |= std::uint64_t{1} << g, --need;
    used |= live.mask;
    run.placement.push_back({n.id, live.mask});
  }
  tenant_gpus_[t] += spec.gpus;
  if (obs_[i].runs.empty()) api_[i].watch_start_wall_s = static_cast<double>(wall_ms) / 1000.0;
  obs_[i].runs.push_back(run);
}

void PodTracker::end_run(std::size_t i, std::int64_t wall_ms, bool completed) {
  Job& job = jobs_[i];
  Live& live = job.live;
  slurm::ObservedRun& run = obs_[i].runs.back();
  run.end = clock_.at(wall_ms);
  run.preempted = !completed;
  if (!completed) {
    const bool restart = obs_[i].runs.size() > 1;
    const std::int64_t done = wall_ms - live.start_wall - (restart ? job.over_ms : 0);
    if (done > 0)
      job.progress_ms = std::min(job.work_ms, job.progress_ms + checkpoint_kept(done, job.ckpt_ms));
  } else {
    obs_[i].completed = true;
    ++completed_;
  }
  if (live.node >= 0) node_used_[static_cast<std::size_t>(live.node)] &= ~live.mask;
  tenant_gpus_[w_.jobs[i].tenant.index()] -= w_.jobs[i].gpus;
  live.running = false;
}

void PodTracker::relisted(const std::vector<std::string>& uids, std::int64_t wall_ms) {
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const Live& live = jobs_[i].live;
    if (live.running && std::find(uids.begin(), uids.end(), live.uid) == uids.end())
      end_run(i, wall_ms, false);
  }
}

}  // namespace ds::k8s
