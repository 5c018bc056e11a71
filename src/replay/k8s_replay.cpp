#include "replay/k8s_replay.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "k8s/client.hpp"
#include "k8s/list_watch.hpp"
#include "k8s/objects.hpp"
#include "replay/k8s_tracker.hpp"
#include "replay/replay_files.hpp"

namespace ds::k8s {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Polls `pred` every 200 ms until it holds or `limit_s` passes.
bool wait_for(const std::function<bool()>& pred, double limit_s) {
  const auto end = SteadyClock::now() + std::chrono::milliseconds(static_cast<long>(limit_s * 1e3));
  while (!pred()) {
    if (SteadyClock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return true;
}

// The GPU nodes, in natural name order (gpu-node-2 before gpu-node-10).
std::vector<slurm::NodeShape> gpu_nodes(Client& c, const std::string& selector) {
  ListOptions lo;
  lo.label_selector = selector;
  const auto list = c.list(nodes_path(), lo);
  if (!list) throw InputError("cannot list the cluster's nodes: " + list.error().str());
  std::vector<slurm::NodeShape> out;
  for (const auto& n : (*list)["items"]) {
    const json alloc = n.value("status", json::object()).value("allocatable", json::object());
    const int gpus = std::atoi(alloc.value("nvidia.com/gpu", "0").c_str());
    if (gpus > 0) out.push_back({n["metadata"]["name"].get<std::string>(), gpus});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.name.size() != b.name.size() ? a.name.size() < b.name.size() : a.name < b.name;
  });
  if (out.empty())
    throw InputError("no node with allocatable nvidia.com/gpu" +
                     (selector.empty() ? std::string() : " matches '" + selector + "'"));
  return out;
}

// POST to `collection`; when the object exists, PUT it over (keeps a re-run's configuration
// the one asked for).
void apply(Client& c, const std::string& collection, const std::string& item, const json& body) {
  const auto made = c.post(collection, body);
  if (made) return;
  if (!made.error().already_exists())
    throw InputError("creating " + item + ": " + made.error().str());
  const auto cur = c.get(item);
  if (!cur) throw InputError("reading " + item + ": " + cur.error().str());
  json b = body;
  b["metadata"]["resourceVersion"] = (*cur)["metadata"]["resourceVersion"];
  const auto put = c.put(item, b);
  if (!put) throw InputError("replacing " + item + ": " + put.error().str());
}

// One namespace per tenant (dns_label of its name), ready for pods (its default
// ServiceAccount exists, as ServiceAccount admission requires).
std::vector<std::string> tenant_namespaces(Client& c, const Workload& w, const std::string& run) {
  std::vector<std::string> out;
  for (const auto& t : w.tenants) {
    const std::string ns = dns_label(t.name);
    if (ns.rfind("kube-", 0) == 0 || ns == "default")
      throw InputError("tenant '" + t.name + "': namespace " + ns + " is reserved");
    const auto made = c.post("/api/v1/namespaces", namespace_object(ns, run));
    if (!made && !made.error().already_exists())
      throw InputError("creating namespace " + ns + ": " + made.error().str());
    const std::string sa = "/api/v1/namespaces/" + ns + "/serviceaccounts/default";
    if (!wait_for([&] { return c.get(sa).ok(); }, 120))
      throw InputError("namespace " + ns + ": no default ServiceAccount after 120 s");
    out.push_back(ns);
  }
  return out;
}

std::string kueue_path(const char* resource, const std::string& ns = "",
                       const std::string& name = "") {
  return resource_path("kueue.x-k8s.io", "v1beta2", resource, ns, name);
}

bool cluster_queue_active(Client& c, const std::string& name) {
  const auto q = c.get(kueue_path("clusterqueues", "", name));
  if (!q) return false;
  for (const auto& cond : q->value("status", json::object()).value("conditions", json::array()))
    if (cond.value("type", "") == "Active") return cond.value("status", "") == "True";
  return false;
}

// The Kueue objects (k8s_objects.hpp) for the tenants; returns what was applied.
json setup_kueue(Client& c, const Workload& w, const std::vector<std::string>& ns) {
  if (const auto api = c.get("/apis/kueue.x-k8s.io/v1beta2"); !api)
    throw InputError("Kueue's API (kueue.x-k8s.io/v1beta2) is not served: " + api.error().str() +
                     " (start Kueue: scripts/k8s/start-kueue.sh)");
  KueueSetup s;
  for (std::size_t t = 0; t < w.tenants.size(); ++t)
    s.queues.push_back({ns[t], ns[t], w.tenants[t].quota_gpus});
  json applied = json::array();
  const json flavor = resource_flavor(s);
  apply(c, kueue_path("resourceflavors"), kueue_path("resourceflavors", "", s.flavor), flavor);
  applied.push_back(flavor);
  for (const auto& q : s.queues) {
    const json cq = cluster_queue(s, q), lq = local_queue(q);
    apply(c, kueue_path("clusterqueues"), kueue_path("clusterqueues", "", q.name), cq);
    apply(c, kueue_path("localqueues", q.ns), kueue_path("localqueues", q.ns, q.name), lq);
    applied.push_back(cq);
    applied.push_back(lq);
  }
  for (const auto& q : s.queues)
    if (!wait_for([&] { return cluster_queue_active(c, q.name); }, 120))
      throw InputError(
          "ClusterQueue " + q.name +
          " is not Active after 120 s: is Kueue running? (scripts/k8s/start-kueue.sh)");
  return applied;
}

// What the watch thread hands to the replay loop, stamped when it was delivered.
struct Seen {
  json pod;
  bool gone = false;
  bool relist = false;  // pod: the List; the loop checks who vanished
  std::int64_t wall_ms = 0;
};

class Inbox {
 public:
  void push(Seen s) {
    {
      const std::lock_guard lock(mu_);
      items_.push_back(std::move(s));
    }
    cv_.notify_one();
  }
  std::deque<Seen> take(std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, wait, [&] { return !items_.empty(); });
    std::deque<Seen> out;
    out.swap(items_);
    return out;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Seen> items_;
};

ListWatcher::Handlers inbox_handlers(Inbox& inbox, driver::Log& log) {
  return {[&](const json& list) {
            inbox.push({list, false, true, driver::wall_now_ms()});
          },
          [&](const WatchEvent& e) {
            inbox.push({e.object, e.type == WatchEventType::Deleted, false, driver::wall_now_ms()});
          },
          [&](const ApiError& e) {
            log.warn("pod_watch", {{"error", e.str()}});
          }};
}

}  // namespace

namespace {

// The engine's columns of observed.csv and the API-vs-watch comparison of replay.json.
void engine_columns(slurm::ReplayFiles& f, const PodTracker& tracker,
                    const std::vector<std::string>& job_ids) {
  f.id_header = "k8s_job";
  f.tail_header = "api_created_s,api_scheduled_s,api_started_s,api_finished_s";
  std::vector<double> diff;
  for (std::size_t i = 0; i < job_ids.size(); ++i) {
    const ApiTimes& a = tracker.api_times()[i];
    f.ids.push_back(job_ids[i]);
    f.tails.push_back({std::to_string(a.created), std::to_string(a.scheduled),
                       std::to_string(a.started), std::to_string(a.finished)});
    if (a.started >= 0 && a.watch_start_wall_s >= 0)
      diff.push_back(a.watch_start_wall_s - static_cast<double>(a.started));
  }
  json d = {{"n", diff.size()}};
  if (!diff.empty()) {
    double sum = 0;
    for (double x : diff) sum += x;
    d["mean"] = sum / static_cast<double>(diff.size());
    d["min"] = *std::min_element(diff.begin(), diff.end());
    d["max"] = *std::max_element(diff.begin(), diff.end());
  }
  // The API's startTime is whole seconds (truncated): the watch's time lies in [0, 1) s
  // after it plus the watch's own delay when both describe the same moment.
  f.extra["api_vs_watch_start_s"] = d;
}

// The excerpt's jobs as Kubernetes names: the pod label, the Job's name in its tenant's
// namespace, and NAMESPACE/NAME (observed.csv's k8s_job), by job index.
struct ReplayJobs {
  std::vector<std::string> labels, names, job_ids;
};

ReplayJobs replay_jobs(const Workload& w, const std::vector<std::string>& ns) {
  ReplayJobs out;
  for (const auto& j : w.jobs) {
    out.labels.push_back(dns_label(j.name));
    out.names.push_back(dns_label("job-" + j.name));
    out.job_ids.push_back(ns[j.tenant.index()] + "/" + out.names.back());
  }
  return out;
}

// What the replay loop's steps read: all of it is set up before the loop starts.
struct ReplaySetup {
  Client& client;
  driver::Log& log;
  const ReplayRequest& req;
  const slurm::ExcerptSpec& spec;
  const Workload& w;
  const std::vector<std::string>& ns;  // by tenant index
  const ReplayJobs& jobs;
  const std::string& run_id;
  const driver::DriverClock& clock;
};

// Annotates a pod with the wall time its stand-in must run until.
void write_run_end(const ReplaySetup& s, const RunEnd& e) {
  const json body = {{"metadata", {{"annotations", {{kRunUntil, rfc3339_ms(e.until_wall_ms)}}}}}};
  const auto r = s.client.patch(pods_path(e.ns, e.pod), body, PatchType::Merge);
  if (!r && !r.error().not_found())
    s.log.warn("run_until", {{"pod", e.ns + "/" + e.pod}, {"error", r.error().str()}});
}

// Creates the Jobs from `next` on whose submit time has come at wall time `wall`; returns
// the index of the first one not submitted.
std::size_t submit_due(const ReplaySetup& s, std::int64_t wall, PodTracker& tracker,
                       std::size_t next) {
  const std::size_t n = s.w.jobs.size();
  while (next < n && s.w.jobs[next].submit <= s.clock.at(wall)) {
    const JobSpec& j = s.w.jobs[next];
    const std::string& space = s.ns[j.tenant.index()];
    const JobRequest jr{s.jobs.names[next], space, j.name, s.run_id, j.gpus,
                        s.req.scheduler,    space};
    // submitted when sent: its pod may be running before the answer comes back
    const std::int64_t sent = driver::wall_now_ms();
    const auto made = s.client.post(resource_path("batch", "v1", "jobs", space), job(jr));
    if (!made) throw InputError("creating Job " + s.jobs.job_ids[next] + ": " + made.error().str());
    tracker.submitted(next, sent,
                      rfc3339_seconds((*made)["metadata"].value("creationTimestamp", "")));
    ++next;
  }
  return next;
}

// How long the loop waits for pod events: until the next submission, 1..50 ms.
std::int64_t wait_before_next(const ReplaySetup& s, std::int64_t wall, std::size_t next) {
  std::int64_t wait_ms = 50;
  if (next < s.w.jobs.size()) {
    const double to_next =
        static_cast<double>(s.w.jobs[next].submit - s.clock.at(wall)) / s.spec.time_scale;
    wait_ms = std::clamp<std::int64_t>(static_cast<std::int64_t>(to_next), 1, 50);
  }
  return wait_ms;
}

// Hands what the watch delivered within `wait_ms` to the tracker (a List: every pod, then
// who vanished), and annotates the pods whose run end became known.
void observe_pods(const ReplaySetup& s, Inbox& inbox, std::int64_t wait_ms, PodTracker& tracker) {
  for (Seen& seen : inbox.take(std::chrono::milliseconds(wait_ms))) {
    if (!seen.relist) {
      if (const auto end = tracker.observe(seen.pod, seen.gone, seen.wall_ms))
        write_run_end(s, *end);
      continue;
    }
    std::vector<std::string> uids;
    for (const auto& p : seen.pod["items"]) {
      uids.push_back(p["metadata"].value("uid", ""));
      if (const auto end = tracker.observe(p, false, seen.wall_ms)) write_run_end(s, *end);
    }
    tracker.relisted(uids, seen.wall_ms);
  }
}

// Submits the jobs on time and follows their pods until all completed or the request's
// timeout passed; returns how many jobs were submitted.
std::size_t replay_loop(const ReplaySetup& s, Inbox& inbox, PodTracker& tracker) {
  const std::size_t n = s.w.jobs.size();
  std::size_t next = 0;
  const auto deadline =
      SteadyClock::now() + std::chrono::milliseconds(static_cast<long>(s.req.timeout_s * 1000));
  while (tracker.completed() < n && SteadyClock::now() < deadline) {
    const std::int64_t wall = driver::wall_now_ms();
    next = submit_due(s, wall, tracker, next);
    observe_pods(s, inbox, wait_before_next(s, wall, next), tracker);
  }
  return next;
}

// observed.csv, replay.json and the rest (replay/replay_files.hpp), and the outcome.
ReplayOutcome write_outputs(const ReplaySetup& s, const PodTracker& tracker,
                            const std::vector<slurm::NodeShape>& shapes, const ListWatcher& watcher,
                            const json& kueue, double wall_s, std::size_t submitted) {
  slurm::ReplayFiles files =
      slurm::replay_files(s.w, tracker.observed(), s.spec, s.req.config, s.req.config_path, shapes);
  files.wall_seconds = wall_s;
  files.submitted = submitted;
  files.version = "k8s-replay";
  files.command = "k8s replay";
  engine_columns(files, tracker, s.jobs.job_ids);
  const ListWatchStats ws = watcher.stats();
  files.extra["engine"] = "kubernetes";
  files.extra["scheduler"] = scheduler_name(s.req.scheduler);
  files.extra["run_id"] = s.run_id;
  files.extra["restarts"] = tracker.restarts_patched();
  files.extra["kueue_objects"] = kueue;
  files.extra["pod_watch"] = {{"lists", ws.lists},
                              {"watches", ws.watches},
                              {"events", ws.events},
                              {"gone", ws.gone},
                              {"errors", ws.errors}};
  const slurm::ReplayResult written = slurm::write_replay_files(s.req.out_dir, files);
  ReplayOutcome out;
  out.metrics = written.metrics;
  out.wall_seconds = wall_s;
  out.submitted = submitted;
  out.completed = written.completed;
  out.restarts = tracker.restarts_patched();
  out.start_latency_wall_s = written.start_latency_wall_s;
  return out;
}

}  // namespace

ReplayOutcome run_replay(const ReplayRequest& req, driver::Log& log) {
  if (req.config.tenant_source != slurm::TenantSource::Config)
    throw InputError(req.config.source +
                     ": a replay defines its tenants (tenant_source: config, with quota_gpus and "
                     "trace per tenant)");
  const auto t_begin = SteadyClock::now();
  Client client(load_kubeconfig(req.kubeconfig));
  const auto shapes = gpu_nodes(client, req.node_selector);
  const slurm::ExcerptSpec spec = req.excerpt;
  const Workload w = slurm::make_excerpt(spec, req.config, shapes);
  for (const auto& note : w.notes) log.info("note", {{"text", note}});
  const std::string run_id = "r" + std::to_string(driver::wall_now_ms());
  const auto ns = tenant_namespaces(client, w, run_id);
  json kueue = json::array();
  if (req.scheduler == Scheduler::Kueue || req.kueue_objects) kueue = setup_kueue(client, w, ns);
  const std::size_t n = w.jobs.size();
  const ReplayJobs jobs = replay_jobs(w, ns);

  Inbox inbox;
  ListWatchOptions lwo;
  lwo.label_selector = std::string(kReplayLabel) + "=" + run_id;
  ListWatcher watcher(client, pods_path(""), lwo, inbox_handlers(inbox, log));
  std::jthread watch_thread([&](std::stop_token st) { watcher.run(st); });
  if (!wait_for([&] { return watcher.stats().lists > 0; }, 60))
    throw InputError("the pod watch did not start within 60 s");
  driver::DriverClock clock;
  clock.wall0_ms = driver::wall_now_ms() + 1000;  // lead time before the first submission
  clock.scale = spec.time_scale;
  PodTracker tracker(w, jobs.labels, spec.time_scale, clock);
  log.info("replay_start", {{"run", run_id},
                            {"scheduler", scheduler_name(req.scheduler)},
                            {"jobs", n},
                            {"nodes", shapes.size()}});

  const ReplaySetup setup{client, log, req, spec, w, ns, jobs, run_id, clock};
  const std::size_t submitted = replay_loop(setup, inbox, tracker);
  watch_thread.request_stop();
  watch_thread.join();
  const double wall_s = std::chrono::duration<double>(SteadyClock::now() - t_begin).count();
  if (tracker.completed() < n)
    log.warn("replay_timeout", {{"completed", tracker.completed()}, {"jobs", n}});
  return write_outputs(setup, tracker, shapes, watcher, kueue, wall_s, submitted);
}

}  // namespace ds::k8s
