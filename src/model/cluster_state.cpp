#include "model/cluster_state.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>

namespace ds {
namespace {

// GPU memory of a request as a whole number of MiB (inputs are range-checked at the
// edges; the clamp keeps a bad value from being undefined behaviour here).
std::int64_t memory_mib(double mib) {
  return static_cast<std::int64_t>(std::llround(std::clamp(mib, 0.0, 1e15)));
}

// Distinct ids for the states of one process (ClusterSnapshot::gpu_source), so that a
// policy's free map never applies one state's deltas to another's copy.
std::uint64_t next_source_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void ClusterState::IdSet::insert(JobId id) {
  if (pos_.size() <= id.index()) pos_.resize(std::size_t{id.index()} + 1, -1);
  pos_[id.index()] = static_cast<std::int32_t>(ids_.size());
  ids_.push_back(id);
}

void ClusterState::IdSet::erase(JobId id) {
  const auto p = static_cast<std::size_t>(pos_[id.index()]);
  ids_[p] = ids_.back();
  pos_[ids_[p].index()] = static_cast<std::int32_t>(p);
  ids_.pop_back();
  pos_[id.index()] = -1;
}

ClusterState::ClusterState(const Cluster& cluster, std::span<const Tenant> tenants)
    : cluster_(&cluster),
      tenants_(tenants),
      gpus_(static_cast<std::size_t>(cluster.total_gpus())),
      gpu_free_(gpus_.size(), static_cast<std::int16_t>(kMilliPerGpu)),
      gpu_jobs_(gpus_.size()),
      blocked_(gpus_.size(), 0),
      held_(gpus_.size(), 0),
      usable_(cluster.nodes.size(), 1),
      node_free_(cluster.nodes.size()),
      no_sharing_(cluster.nodes.size(), 0),
      memory_pad_(gpus_.size(), 0),
      usage_(tenants.size()),
      totals_(tenants.size()),
      touched_(tenants.size(), kNever),
      node_mark_(cluster.nodes.size(), 0),
      source_id_(next_source_id()) {
  for (const auto& n : cluster.nodes) node_free_[n.id.index()] = n.gpus;
}

void ClusterState::grow(std::size_t jobs) {
  if (rt_.size() >= jobs) return;
  rt_.resize(jobs);
  longest_.resize(jobs);
  presented_.resize(jobs, 0);
  notice_.resize(jobs, 0);
}

void ClusterState::set_jobs(std::vector<JobSpec> jobs, std::span<const Profile> profiles) {
  jobs_ = std::move(jobs);
  profiles_ = profiles;
  grow(jobs_.size());
}

JobId ClusterState::add_job(JobSpec spec) {
  const JobId id(static_cast<std::uint32_t>(jobs_.size()));
  spec.id = id;
  jobs_.push_back(std::move(spec));
  grow(jobs_.size());
  return id;
}

void ClusterState::reuse_job(JobId id, JobSpec spec) {
  recycle(id);
  spec.id = id;
  jobs_[id.index()] = std::move(spec);
}

void ClusterState::clear_job(JobId id) {
  const JobStatus st = rt_[id.index()].status;
  if (st == JobStatus::Pending || st == JobStatus::Running)
    fail(id, "is given back but has not left");
  jobs_[id.index()] = JobSpec{};
  jobs_[id.index()].id = id;
}

void ClusterState::set_colocatable(JobId id, bool colocatable) {
  jobs_[id.index()].colocatable = colocatable;
}

void ClusterState::set_tenants(std::span<const Tenant> tenants) {
  tenants_ = tenants;
  usage_.resize(tenants.size());
  totals_.resize(tenants.size());
  touched_.resize(tenants.size(), kNever);
}

void ClusterState::fail(JobId id, const std::string& what) const {
  const std::string who =
      id.valid() && id.index() < jobs_.size() ? "job '" + jobs_[id.index()].name + "' " : "";
  throw DecisionError(who + what);
}

// --- accounting -------------------------------------------------------------------

void ClusterState::touch(TenantId id, Time now) {
  const std::size_t t = id.index();
  if (touched_[t] == kNever) touched_[t] = now;  // the first event starts the integrals
  if (now <= touched_[t]) return;
  const double dt = static_cast<double>(now - touched_[t]);
  const TenantUsage& u = usage_[t];
  const std::int64_t quota = std::int64_t{tenants_[t].quota_gpus} * kMilliPerGpu;
  totals_[t].received_gpu_ms += dt * static_cast<double>(u.held) / kMilliPerGpu;
  totals_[t].entitled_gpu_ms += dt * static_cast<double>(std::min(quota, u.demand)) / kMilliPerGpu;
  touched_[t] = now;
}

void ClusterState::touch_all(Time now) {
  for (std::size_t t = 0; t < usage_.size(); ++t)
    touch(TenantId(static_cast<std::uint32_t>(t)), now);
}

void ClusterState::enter_pending(JobId id, Time now) {
  const JobSpec& j = spec(id);
  JobRuntime& r = rt_[id.index()];
  TenantUsage& u = usage_[j.tenant.index()];
  pending_.insert(id);
  r.status = JobStatus::Pending;
  r.queued_since = now;
  r.wait = WaitReason::None;
  r.wait_since = now;
  ++u.pending_jobs;
  u.pending_gpus += j.gpus;
  pending_gpus_ += j.gpus;
  if (r.entitled) u.queued_entitled += milli(j);
}

void ClusterState::leave_pending(JobId id) {
  const JobSpec& j = spec(id);
  const JobRuntime& r = rt_[id.index()];
  TenantUsage& u = usage_[j.tenant.index()];
  pending_.erase(id);
  --u.pending_jobs;
  u.pending_gpus -= j.gpus;
  pending_gpus_ -= j.gpus;
  if (r.entitled) u.queued_entitled -= milli(j);
}

// --- waiting reasons --------------------------------------------------------------

void ClusterState::switch_wait(JobId id, WaitReason reason, Time now) {
  JobRuntime& r = rt_[id.index()];
  if (reason == r.wait) return;
  const Time length = now - r.wait_since;
  wait_ms_[static_cast<std::size_t>(r.wait)] += static_cast<double>(length);
  Stretch& best = longest_[id.index()];
  if (length > best.length) best = {r.wait, length};
  r.wait = reason;
  r.wait_since = now;
}

void ClusterState::note_waits(std::span<const WaitNote> notes, Time now) {
  for (const WaitNote& n : notes)
    if (n.job.index() < rt_.size() && rt_[n.job.index()].status == JobStatus::Pending)
      switch_wait(n.job, n.reason, now);
}

void ClusterState::set_wait(JobId id, WaitReason reason, Time now) {
  if (rt_[id.index()].status == JobStatus::Pending) switch_wait(id, reason, now);
}

void ClusterState::note_outside(JobId id, WaitReason reason) {
  if (rt_[id.index()].status == JobStatus::Future) rt_[id.index()].wait = reason;
}

void ClusterState::close_waits(Time now) {
  for (JobId id : pending_.view()) {
    JobRuntime& r = rt_[id.index()];
    const Time length = now - r.wait_since;
    wait_ms_[static_cast<std::size_t>(r.wait)] += static_cast<double>(length);
    Stretch& best = longest_[id.index()];
    if (length > best.length) best = {r.wait, length};
    r.wait_since = now;
  }
}

// --- GPUs ------------------------------------------------------------------------

void ClusterState::occupy(JobId id) {
  const JobSpec& j = spec(id);
  for_each_gpu(rt_[id.index()].placement, [&](std::size_t g, NodeId n) {
    node_changed(n);
    GpuState& s = gpus_[g];
    if (s.jobs == blocked_[g]) {  // no job on it yet
      ++busy_;
      if (!blocked_[g]) --node_free_[n.index()];
    }
    ++s.jobs;
    s.milli_used = static_cast<std::int16_t>(s.milli_used + j.gpu_milli);
    s.memory_used_mib += memory_mib(j.gpu_memory_mib);
    gpu_free_[g] = static_cast<std::int16_t>(std::max(0, kMilliPerGpu - s.milli_used));
    gpu_jobs_[g].push_back(id);
    show_memory(g, n);
  });
  allocated_ += j.gpus;
}

void ClusterState::release(JobId id) {
  const JobSpec& j = spec(id);
  for_each_gpu(rt_[id.index()].placement, [&](std::size_t g, NodeId n) {
    node_changed(n);
    GpuState& s = gpus_[g];
    --s.jobs;
    if (s.jobs == blocked_[g]) {  // its last job left
      --busy_;
      if (!blocked_[g]) ++node_free_[n.index()];
    }
    s.milli_used = static_cast<std::int16_t>(s.milli_used - j.gpu_milli);
    s.memory_used_mib -= memory_mib(j.gpu_memory_mib);
    gpu_free_[g] = static_cast<std::int16_t>(std::max(0, kMilliPerGpu - s.milli_used));
    auto& v = gpu_jobs_[g];
    v.erase(std::find(v.begin(), v.end(), id));
    show_memory(g, n);
  });
  allocated_ -= j.gpus;
}

// The node of GPU g (nodes are ordered by first_gpu).
const Node& ClusterState::node_of(std::size_t g) const {
  auto it = std::upper_bound(
      cluster_->nodes.begin(), cluster_->nodes.end(), g,
      [](std::size_t gpu, const Node& n) { return gpu < static_cast<std::size_t>(n.first_gpu); });
  return *(it - 1);
}

void ClusterState::refresh_block(std::size_t g) {
  set_blocked(g, held_[g] || !usable_[node_of(g).id.index()]);
}

void ClusterState::set_node_usable(NodeId n, bool usable) {
  if (static_cast<bool>(usable_[n.index()]) == usable) return;
  usable_[n.index()] = usable ? 1 : 0;
  const Node& node = cluster_->nodes[n.index()];
  for (int k = 0; k < node.gpus; ++k) refresh_block(static_cast<std::size_t>(node.first_gpu + k));
}

void ClusterState::set_held_outside(std::vector<std::size_t> gpus) {
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  std::vector<std::size_t> changed;
  std::set_symmetric_difference(held_list_.begin(), held_list_.end(), gpus.begin(), gpus.end(),
                                std::back_inserter(changed));
  for (std::size_t g : held_list_) held_[g] = 0;
  for (std::size_t g : gpus) held_[g] = 1;
  held_list_ = std::move(gpus);
  for (std::size_t g : changed) refresh_block(g);
}

bool ClusterState::gpus_idle(NodeId n, std::uint64_t mask) const {
  const Node& node = cluster_->nodes[n.index()];
  if (node.gpus < 64 && (mask >> node.gpus) != 0) return false;
  for (std::uint64_t m = mask; m; m &= m - 1)
    if (gpus_[static_cast<std::size_t>(node.first_gpu + __builtin_ctzll(m))].jobs != 0)
      return false;
  return true;
}

void ClusterState::set_blocked(std::size_t g, bool blocked) {
  if (static_cast<bool>(blocked_[g]) == blocked) return;
  GpuState& s = gpus_[g];
  const int sign = blocked ? 1 : -1;
  const Node& node = node_of(g);
  node_changed(node.id);
  if (s.jobs == blocked_[g]) node_free_[node.id.index()] -= sign;  // had no job
  blocked_[g] = blocked ? 1 : 0;
  s.jobs = static_cast<std::uint16_t>(s.jobs + sign);
  s.milli_used = static_cast<std::int16_t>(s.milli_used + sign * kMilliPerGpu);
  s.memory_used_mib += sign * node.gpu_memory_mib;
  gpu_free_[g] = static_cast<std::int16_t>(std::max(0, kMilliPerGpu - s.milli_used));
  show_memory(g, node.id);
}

// On a node without sharing a busy GPU shows its memory full (a pad on top of its use).
void ClusterState::show_memory(std::size_t g, NodeId n) {
  if (!no_sharing_[n.index()] && memory_pad_[g] == 0) return;
  GpuState& s = gpus_[g];
  const std::int64_t used = s.memory_used_mib - memory_pad_[g];
  const std::int64_t full = cluster_->nodes[n.index()].gpu_memory_mib;
  memory_pad_[g] =
      no_sharing_[n.index()] && s.jobs > 0 ? std::max<std::int64_t>(0, full - used) : 0;
  s.memory_used_mib = used + memory_pad_[g];
}

void ClusterState::set_no_sharing(NodeId n, bool no_sharing) {
  if (static_cast<bool>(no_sharing_[n.index()]) == no_sharing) return;
  no_sharing_[n.index()] = no_sharing ? 1 : 0;
  node_changed(n);
  const Node& node = cluster_->nodes[n.index()];
  for (int k = 0; k < node.gpus; ++k) show_memory(static_cast<std::size_t>(node.first_gpu + k), n);
}

// --- transitions -------------------------------------------------------------------

void ClusterState::submit(JobId id, Time now) {
  if (id.index() >= rt_.size() || rt_[id.index()].status != JobStatus::Future)
    fail(id, "is submitted twice (or is unknown)");
  rt_[id.index()] = JobRuntime{};
  longest_[id.index()] = Stretch{};
  presented_[id.index()] = 0;
  unpark(id, now);
}

void ClusterState::unpark(JobId id, Time now) {
  if (id.index() >= rt_.size() || rt_[id.index()].status != JobStatus::Future)
    fail(id, "becomes a candidate but is not waiting outside the queue");
  const JobSpec& j = spec(id);
  touch(j.tenant, now);
  TenantUsage& u = usage_[j.tenant.index()];
  if (!presented_[id.index()]) {
    const std::int64_t quota = std::int64_t{tenants_[j.tenant.index()].quota_gpus} * kMilliPerGpu;
    rt_[id.index()].entitled = entitled_at_submit(u.guaranteed, u.queued_entitled, milli(j), quota);
  }
  u.demand += milli(j);
  enter_pending(id, now);
  if (!presented_[id.index()]) {
    presented_[id.index()] = 1;
    arrived_.push_back(id);
  } else {
    note_requeued(id, false);
  }
}

void ClusterState::recycle(JobId id) {
  if (id.index() >= rt_.size() || rt_[id.index()].status == JobStatus::Pending ||
      rt_[id.index()].status == JobStatus::Running)
    fail(id, "takes the slot of a job that has not left (or is unknown)");
  rt_[id.index()] = JobRuntime{};
  longest_[id.index()] = Stretch{};
  presented_[id.index()] = notice_[id.index()] = 0;
}

void ClusterState::park(JobId id, Time now) {
  leave_without_running(id, now, JobStatus::Future, "is parked but is not pending");
  note_withdrawn(id);
}

void ClusterState::drop(JobId id, Time now) {
  if (id.index() >= rt_.size() || rt_[id.index()].status != JobStatus::Future)
    fail(id, "is dropped but is not waiting outside the queue");
  rt_[id.index()].status = JobStatus::Done;
  rt_[id.index()].end = now;
}

const char* to_string(Refusal r) {
  switch (r) {
    case Refusal::UnknownJob:
      return "unknown-job";
    case Refusal::NotPending:
      return "not-pending";
    case Refusal::NotRunning:
      return "not-running";
    case Refusal::NoReason:
      return "no-reason";
    case Refusal::BadPlacement:
      return "bad-placement";
    case Refusal::BorrowedNotPreemptible:
      return "borrowed-not-preemptible";
    case Refusal::NotPreemptible:
      return "not-preemptible";
    case Refusal::GpuUnavailable:
      return "gpu-unavailable";
    case Refusal::GpuBusy:
      return "gpu-busy";
    case Refusal::MemoryFull:
      return "memory-full";
  }
  return "?";
}

std::string ClusterState::describe(const Refused& r) const {
  const bool known = r.job.valid() && r.job.index() < jobs_.size();
  return (known ? "job '" + jobs_[r.job.index()].name + "' " : std::string("a job ")) + r.what;
}

std::optional<Refused> ClusterState::reject_error(const RejectJob& d) const {
  if (!d.job.valid() || d.job.index() >= rt_.size())
    return Refused{Refusal::UnknownJob, d.job, "is rejected but is unknown"};
  if (rt_[d.job.index()].status != JobStatus::Pending)
    return Refused{Refusal::NotPending, d.job, "is rejected but is not pending"};
  if (d.reason.empty()) return Refused{Refusal::NoReason, d.job, "is rejected without a reason"};
  return std::nullopt;
}

std::optional<Refused> ClusterState::preempt_error(JobId id) const {
  if (!id.valid() || id.index() >= rt_.size())
    return Refused{Refusal::UnknownJob, id, "is preempted but is unknown"};
  if (rt_[id.index()].status != JobStatus::Running)
    return Refused{Refusal::NotRunning, id, "is preempted but is not running"};
  if (!jobs_[id.index()].preemptible)
    return Refused{Refusal::NotPreemptible, id, "is preempted but cannot be preempted"};
  return std::nullopt;
}

std::optional<Refused> ClusterState::placement_error(const StartJob& d) const {
  const JobId id = d.job;
  if (!id.valid() || id.index() >= rt_.size())
    return Refused{Refusal::UnknownJob, id, "is started but is unknown"};
  if (rt_[id.index()].status != JobStatus::Pending)
    return Refused{Refusal::NotPending, id, "is started but is not pending"};
  int total = 0;
  for (const auto& a : d.placement) {
    if (!a.node.valid() || a.node.index() >= cluster_->nodes.size())
      return Refused{Refusal::BadPlacement, id, "is placed on an unknown node"};
    const Node& node = cluster_->nodes[a.node.index()];
    if (node.gpus < 64 && (a.gpu_mask >> node.gpus) != 0)
      return Refused{Refusal::BadPlacement, id, "is placed on a GPU index beyond its node"};
    if (!accepts_gpu_model(spec(id), node.gpu_type))
      return Refused{Refusal::BadPlacement, id,
                     "is placed on node '" + node.name + "' of GPU model '" + node.gpu_type +
                         "', but it needs '" + spec(id).gpu_type + "'"};
    if (!accepts_node(spec(id), a.node, node.gpu_type))
      return Refused{Refusal::BadPlacement, id,
                     "is placed on node '" + node.name + "', which its node mask excludes"};
    total += a.gpus();
  }
  if (total != spec(id).gpus)
    return Refused{Refusal::BadPlacement, id,
                   "is placed on a different number of GPUs than it asks for"};
  if (d.borrowed && !spec(id).preemptible)
    return Refused{Refusal::BorrowedNotPreemptible, id,
                   "runs on borrowed GPUs but cannot be preempted"};
  return std::nullopt;
}

std::optional<Refused> ClusterState::usage_error(const StartJob& d) const {
  const JobSpec& j = spec(d.job);
  std::optional<Refused> error;
  for_each_gpu(d.placement, [&](std::size_t g, NodeId n) {
    if (error) return;
    if (blocked_[g]) {
      error = Refused{Refusal::GpuUnavailable, d.job,
                      "is placed on GPU " + std::to_string(g) + ", which is not available"};
      return;
    }
    if (d.shared) {
      const std::int64_t mem = gpus_[g].memory_used_mib + memory_mib(j.gpu_memory_mib);
      if (mem <= cluster_->nodes[n.index()].gpu_memory_mib) return;
      std::string on;
      for (JobId other : gpu_jobs_[g]) on += " '" + spec(other).name + "'";
      error = Refused{Refusal::MemoryFull, d.job,
                      "shares GPU " + std::to_string(g) + " (with" + on + ", " +
                          std::to_string(gpus_[g].memory_used_mib) + " MiB used) but needs " +
                          std::to_string(memory_mib(j.gpu_memory_mib)) +
                          " MiB more: its memory would overflow"};
    } else if (gpu_free_[g] < j.gpu_milli || (j.gpu_milli >= kMilliPerGpu && gpus_[g].jobs != 0)) {
      error = Refused{Refusal::GpuBusy, d.job, "is placed on a GPU that is not free"};
    }
  });
  return error;
}

std::optional<Refused> ClusterState::start_error(const StartJob& d) const {
  if (auto e = placement_error(d)) return e;
  return usage_error(d);
}

void ClusterState::start(const StartJob& d, Time now, Time running_at) {
  if (auto e = start_error(d)) fail(d.job, e->what);
  start_checked(d, now, running_at);
}

void ClusterState::start_checked(const StartJob& d, Time now, Time running_at) {
  const JobId id = d.job;
  const JobSpec& j = spec(id);
  touch(j.tenant, now);
  switch_wait(id, WaitReason::Starting, now);
  switch_wait(id, WaitReason::None, running_at);  // the start latency is spent starting
  leave_pending(id);
  JobRuntime& r = rt_[id.index()];
  if (r.first_start == kNever) r.first_start = running_at;
  r.last_start = running_at;
  r.status = JobStatus::Running;
  r.borrowed = d.borrowed;
  r.shared = d.shared;
  r.placement = d.placement;
  r.speed = 1.0;
  count_running(id, 1);
  running_.insert(id);
  occupy(id);
}

void ClusterState::set_borrowed(JobId id) {
  if (id.index() >= rt_.size() || rt_[id.index()].status != JobStatus::Running)
    fail(id, "is lent out but is not running");
  if (!spec(id).preemptible) fail(id, "is lent out but cannot be preempted");
  if (rt_[id.index()].borrowed) return;
  count_running(id, -1);
  rt_[id.index()].borrowed = true;
  count_running(id, 1);
}

void ClusterState::count_running(JobId id, int sign) {
  const JobSpec& j = spec(id);
  const JobRuntime& r = rt_[id.index()];
  TenantUsage& u = usage_[j.tenant.index()];
  u.held += sign * milli(j);
  u.running_jobs += sign;
  (r.borrowed ? u.borrowed : u.guaranteed) += sign * milli(j);
  if (r.shared) {
    u.colocated += sign * milli(j);
    u.colocated_jobs += sign;
  }
}

void ClusterState::stop_running(JobId id, Time now, bool ran) {
  JobRuntime& r = rt_[id.index()];
  if (ran) r.attained += std::max<Time>(0, now - r.last_start);  // 0 if stopped while starting
  release(id);
  count_running(id, -1);
  running_.erase(id);
  r.placement.clear();
}

void ClusterState::finish(JobId id, Time now) {
  if (id.index() >= rt_.size() || rt_[id.index()].status != JobStatus::Running)
    fail(id, "finishes but is not running");
  const JobSpec& j = spec(id);
  touch(j.tenant, now);
  stop_running(id, now);
  JobRuntime& r = rt_[id.index()];
  usage_[j.tenant.index()].demand -= milli(j);
  r.status = JobStatus::Done;
  r.end = now;
  finished_.push_back({id, r.attained});
}

void ClusterState::requeue(JobId id, Time now, bool by_policy) {
  if (id.index() >= rt_.size() || rt_[id.index()].status != JobStatus::Running)
    fail(id, "is preempted but is not running");
  touch(spec(id).tenant, now);
  stop_running(id, now);
  JobRuntime& r = rt_[id.index()];
  ++r.preemptions;
  r.borrowed = r.shared = false;
  enter_pending(id, now);
  note_requeued(id, by_policy);
}

void ClusterState::unstart(JobId id, Time now) {
  if (id.index() >= rt_.size() || rt_[id.index()].status != JobStatus::Running)
    fail(id, "is rolled back but is not running");
  touch(spec(id).tenant, now);
  JobRuntime& r = rt_[id.index()];
  if (r.first_start == r.last_start) r.first_start = kNever;  // it never ran
  stop_running(id, now, false);
  r.borrowed = r.shared = false;
  enter_pending(id, now);
  note_requeued(id, false);
}

void ClusterState::relocate(JobId id, Placement placement) {
  JobRuntime& r = rt_[id.index()];
  if (r.status != JobStatus::Running) fail(id, "is moved but is not running");
  if (r.placement == placement) return;
  release(id);
  r.placement = std::move(placement);
  occupy(id);
}

void ClusterState::confirm_start(JobId id, Time now) {
  JobRuntime& r = rt_[id.index()];
  if (r.status != JobStatus::Running) fail(id, "is confirmed running but is not running");
  if (r.first_start == r.last_start || r.first_start > now) r.first_start = now;
  r.last_start = now;
}

void ClusterState::start_not_applied(JobId id) {
  if (rt_[id.index()].status != JobStatus::Pending) fail(id, "was not started but is not pending");
  // A job the policy preempted in this cycle and placed again at once has a "requeued"
  // entry, which the policy takes as its preemption's confirmation: a second entry says
  // the start did not happen either.
  if (notice_[id.index()] && std::find(requeued_.begin(), requeued_.end(), id) != requeued_.end())
    requeued_.push_back(id);
  else
    note_requeued(id, false);
}

void ClusterState::preempt_not_applied(JobId id) {
  if (rt_[id.index()].status != JobStatus::Running)
    fail(id, "was not preempted but is not running");
  adopted_.push_back(id);  // it runs on
  note_requeued(id, true);
}

void ClusterState::note_requeued(JobId id, bool notice) {
  if (std::find(requeued_.begin(), requeued_.end(), id) == requeued_.end()) requeued_.push_back(id);
  if (notice) notice_[id.index()] = 1;
}

void ClusterState::note_withdrawn(JobId id) {
  if (auto it = std::find(arrived_.begin(), arrived_.end(), id); it != arrived_.end()) {
    arrived_.erase(it);  // the policy never saw it
    presented_[id.index()] = 0;
    return;
  }
  if (auto it = std::find(requeued_.begin(), requeued_.end(), id); it != requeued_.end()) {
    // The policy's own preemption is still confirmed to it; a second entry (a start that
    // was not applied) is dropped: the job leaves.
    if (!notice_[id.index()])
      requeued_.erase(it);
    else if (auto again = std::find(std::next(it), requeued_.end(), id); again != requeued_.end())
      requeued_.erase(again);
  }
  if (std::find(withdrawn_.begin(), withdrawn_.end(), id) == withdrawn_.end())
    withdrawn_.push_back(id);
}

void ClusterState::withdraw(JobId id, Time now) {
  leave_without_running(id, now, JobStatus::Done, "is withdrawn but is not pending");
  rt_[id.index()].end = now;
  note_withdrawn(id);
}

void ClusterState::reject(JobId id, Time now) {
  leave_without_running(id, now, JobStatus::Rejected, "is rejected but is not pending");
}

void ClusterState::leave_without_running(JobId id, Time now, JobStatus to, const char* what) {
  if (id.index() >= rt_.size() || rt_[id.index()].status != JobStatus::Pending) fail(id, what);
  const JobSpec& j = spec(id);
  touch(j.tenant, now);
  switch_wait(id, WaitReason::None, now);
  leave_pending(id);
  usage_[j.tenant.index()].demand -= milli(j);
  rt_[id.index()].status = to;
}

void ClusterState::adopt(JobId id, Time now, Placement placement, bool borrowed, bool shared,
                         Time last_start, int restarts) {
  if (id.index() >= rt_.size()) fail(id, "is adopted but is unknown");
  JobRuntime& r = rt_[id.index()];
  const JobSpec& j = spec(id);
  touch(j.tenant, now);
  if (r.status == JobStatus::Running) fail(id, "is adopted but runs already");
  if (r.status == JobStatus::Pending) {
    switch_wait(id, WaitReason::None, now);
    leave_pending(id);
  } else if (r.status == JobStatus::Future) {
    const std::int64_t quota = std::int64_t{tenants_[j.tenant.index()].quota_gpus} * kMilliPerGpu;
    const TenantUsage& u = usage_[j.tenant.index()];
    r.entitled = entitled_at_submit(u.guaranteed, u.queued_entitled, milli(j), quota);
    usage_[j.tenant.index()].demand += milli(j);
  } else {
    fail(id, "is adopted but has ended");
  }
  r.status = JobStatus::Running;
  r.borrowed = borrowed;
  r.shared = shared;
  r.placement = std::move(placement);
  r.last_start = last_start;
  if (r.first_start == kNever) r.first_start = last_start;
  if (restarts >= 0) r.preemptions = static_cast<std::uint16_t>(std::min(restarts, 0xffff));
  r.speed = 1.0;
  count_running(id, 1);
  running_.insert(id);
  occupy(id);
  presented_[id.index()] = 1;
  adopted_.push_back(id);
}

// --- snapshots ---------------------------------------------------------------------

ClusterSnapshot ClusterState::snapshot(Time now) const {
  ClusterSnapshot s;
  s.now = now;
  s.cluster = cluster_;
  s.tenants = tenants_;
  s.jobs = jobs_;
  s.profiles = profiles_;
  s.runtime = rt_;
  s.gpus = gpus_;
  s.gpu_free_milli = gpu_free_;
  s.node_free_gpus = node_free_;
  s.pending = pending_.view();
  s.running = running_.view();
  s.arrived = arrived_;
  s.requeued = requeued_;
  s.finished = finished_;
  s.adopted = adopted_;
  s.withdrawn = withdrawn_;
  s.changed_nodes = changed_nodes_;
  s.gpu_source = source_id_;
  s.gpu_epoch = epoch_;
  return s;
}

void ClusterState::present_all() {
  clear_deltas();
  arrived_.assign(pending_.view().begin(), pending_.view().end());
  adopted_.assign(running_.view().begin(), running_.view().end());
  std::sort(arrived_.begin(), arrived_.end());
  std::sort(adopted_.begin(), adopted_.end());
  for (JobId id : arrived_) presented_[id.index()] = 1;
  for (JobId id : adopted_) presented_[id.index()] = 1;
}

void ClusterState::order_arrivals() {
  std::stable_sort(arrived_.begin(), arrived_.end(),
                   [&](JobId a, JobId b) { return spec(a).submit < spec(b).submit; });
}

std::size_t ClusterState::delta_count() const {
  return arrived_.size() + requeued_.size() + finished_.size() + adopted_.size() +
         withdrawn_.size();
}

std::vector<JobId> ClusterState::listed() const {
  std::vector<JobId> out;
  out.reserve(delta_count());
  for (const auto* v : {&arrived_, &requeued_, &adopted_, &withdrawn_})
    out.insert(out.end(), v->begin(), v->end());
  for (const auto& f : finished_) out.push_back(f.job);
  return out;
}

void ClusterState::clear_deltas() {
  for (JobId id : requeued_) notice_[id.index()] = 0;
  arrived_.clear();
  requeued_.clear();
  finished_.clear();
  adopted_.clear();
  withdrawn_.clear();
  changed_nodes_.clear();
  ++epoch_;
}

}  // namespace ds
