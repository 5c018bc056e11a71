#include "slurm/fake_cluster.hpp"

#include <algorithm>
#include <sstream>

#include "core/error.hpp"
#include "slurm/record.hpp"

namespace ds::slurm {
namespace {

constexpr std::uint32_t kInfinite = 0xffffffff;

std::string node_name(int n) {
  return "node" + std::to_string(n + 1);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) out.push_back(part);
  return out;
}

}  // namespace

FakeCluster::FakeCluster(FakeOptions o)
    : o_(std::move(o)), now_(o_.start_ms), next_pass_(o_.start_ms), rng_(o_.seed) {
  node_up_.assign(static_cast<std::size_t>(o_.nodes), true);
  last_change_s_ = now_ / 1000;
}

bool FakeCluster::fail(const std::string& why, bool done) {
  error_ = why;
  done_ = done;
  return false;
}

bool FakeCluster::rpc(bool write) {
  if (now_ < outage_until_) return fail("Unable to contact slurm controller (connect failure)");
  std::uniform_real_distribution<double> u(0, 1);
  if (u(rng_) < (write ? o_.p_write_fail : o_.p_read_fail))
    return fail("Socket timed out on send/recv operation");
  return true;
}

FakeCluster::Job* FakeCluster::find(const std::string& ref) {
  std::uint32_t id = 0;
  try {
    id = static_cast<std::uint32_t>(std::stoul(ref));
  } catch (const std::exception&) {
    return nullptr;
  }
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

std::uint32_t FakeCluster::submit(const std::string& account, int gpus, std::int64_t run_ms,
                                  bool requeue, const std::string& gpu_model) {
  const auto id = static_cast<std::uint32_t>(stats_.size() + 1);
  Job j;
  JobInfo& i = j.info;
  i.id = id;
  i.name = "job" + std::to_string(id);
  i.account = account;
  i.user = "u_" + account;
  i.uid = 1000;
  i.partition = o_.partition;
  i.state = JobState::Pending;
  i.reason = "BeginTime";
  i.priority = 1;
  i.requeue = requeue;
  i.submit_s = now_ / 1000;
  i.eligible_s = kParkedBegin;
  i.admin_comment =
      "ds:v=1;gpus=" + std::to_string(gpus) + ";n=1;nr=" + (requeue ? "0" : "1") + ";u=40;mem=4000";
  if (!gpu_model.empty()) i.admin_comment += ";gm=" + gpu_model;
  j.run_ms = run_ms;
  jobs_[id] = j;
  stats_.push_back({account, gpus, 0, 0, 0, false, false, {}, {}});
  changed();
  return id;
}

std::uint32_t FakeCluster::run_outside(int node, std::uint32_t cpus, std::uint64_t mem_mib,
                                       std::int64_t run_ms) {
  const auto id = static_cast<std::uint32_t>(stats_.size() + 1);
  Job j;
  JobInfo& i = j.info;
  i.id = id;
  i.name = "outside" + std::to_string(id);
  i.account = "other";
  i.user = "u_other";
  i.uid = 1001;
  i.partition = o_.partition + "-cpu";
  i.state = JobState::Running;
  i.reason = "None";
  i.submit_s = i.start_s = now_ / 1000;
  i.nodes = {node_name(node)};
  i.cpus_per_node = cpus;
  i.mem_per_node_mib = mem_mib;
  j.started_ms = now_;
  j.run_ms = run_ms;
  jobs_[id] = j;
  stats_.push_back({"other", 0, 0, 0, 0, false, false, {}, {}});
  changed();
  return id;
}

void FakeCluster::advance(std::int64_t ms) {
  const std::int64_t target = now_ + ms;
  constexpr std::int64_t kQuantum = 50;
  while (now_ < target) {
    now_ = std::min(target, now_ + kQuantum);
    tick();
  }
}

void FakeCluster::end_run(Job& j, JobState to, bool requeue, bool held) {
  JobInfo& i = j.info;
  i.state = to;
  i.end_s = now_ / 1000;
  j.end_ms = now_;
  if (requeue) {
    ++i.restarts;
    ++stats_[i.id - 1].requeues;
    i.held = held;
    if (held) i.priority = 0;
    i.reason = held ? "JobHeldAdmin" : "BeginTime";
  }
  changed();
}

void FakeCluster::complete(Job& j) {
  end_run(j, JobState::Completed, false, false);
  j.info.completing = true;
  j.completing_until = now_ + o_.epilog_ms;
  stats_[j.info.id - 1].completed = true;
  ++finished_;
}

void FakeCluster::tick() {
  std::vector<std::uint32_t> purge;
  for (auto& [id, j] : jobs_) {
    JobInfo& i = j.info;
    if (i.state == JobState::Running && !i.completing && now_ >= j.started_ms + j.run_ms)
      complete(j);
    if (i.completing && now_ >= j.completing_until) {
      i.completing = false;
      i.alloc.clear();
      if (i.state == JobState::Pending) i.nodes.clear();
      changed();
    }
    if (i.terminal() && !i.completing && now_ - j.end_ms >= o_.min_job_age_ms) purge.push_back(id);
  }
  for (auto id : purge) jobs_.erase(id);
  if (!purge.empty()) changed();
  if (now_ >= next_pass_) {
    next_pass_ = now_ + o_.sched_interval_ms;
    schedule();
  }
}

// DeepShare's pin for the job's current run (what the PrologSlurmctld checks).
bool FakeCluster::pinned(const Job& j) const {
  try {
    const std::optional<Record> r = parse_record(j.info.admin_comment);
    return r && r->pin && r->pin->restart == j.info.restarts;
  } catch (const InputError&) {
    return false;
  }
}

void FakeCluster::check_pin(const Job& j) {
  if (!pinned(j)) {
    ++unpinned_starts_;
    return;
  }
  const std::optional<Record> r = parse_record(j.info.admin_comment);
  std::map<std::string, std::uint64_t> alloc;
  for (const auto& [node, a] : j.info.alloc) alloc[node] = a.gpus | a.slots;
  if (alloc != r->pin->gpus) ++pin_mismatches_;
}

// Node index `k`'s Features: its entry of node_features, comma-separated.
std::vector<std::string> FakeCluster::node_features(std::size_t k) const {
  std::vector<std::string> out;
  std::stringstream in(k < o_.node_features.size() ? o_.node_features[k] : std::string());
  for (std::string f; std::getline(in, f, ',');)
    if (!f.empty()) out.push_back(f);
  return out;
}

// Slurm's test of a constraint on a node, for the forms the tests use: "A", "A&B", "A|B".
bool FakeCluster::features_met(const std::string& constraint, std::size_t n) const {
  if (constraint.empty()) return true;
  const auto has = node_features(n);
  const bool any = constraint.find('|') != std::string::npos;
  std::stringstream in(constraint);
  int met = 0, names = 0;
  for (std::string f; std::getline(in, f, any ? '|' : '&'); ++names)
    met += std::count(has.begin(), has.end(), f) > 0 ? 1 : 0;
  return any ? met > 0 : met == names;
}

// Whether Slurm may start `i` on node index `n` at all: not excluded, enough CPUs and memory,
// the Features its constraint asks.
bool FakeCluster::can_hold(const JobInfo& i, std::size_t n) const {
  const std::string name = node_name(static_cast<int>(n));
  if (std::find(i.excluded_nodes.begin(), i.excluded_nodes.end(), name) != i.excluded_nodes.end())
    return false;
  if (!features_met(i.features, n)) return false;
  if (n < o_.node_cpus.size() && o_.node_cpus[n] != 0 && i.cpus_per_node > o_.node_cpus[n])
    return false;
  for (const FakeReservation& r : reservations) {
    if (std::find(r.nodes.begin(), r.nodes.end(), static_cast<int>(n)) == r.nodes.end()) continue;
    if (now_ >= r.end_ms) continue;
    if (i.time_limit_s < 0 || now_ + i.time_limit_s * 1000 > r.start_ms) return false;
  }
  if (n < o_.node_tmp_mib.size() && o_.node_tmp_mib[n] != 0 &&
      i.tmp_per_node_mib > o_.node_tmp_mib[n])
    return false;
  return !(n < o_.node_memory_mib.size() && o_.node_memory_mib[n] != 0 &&
           i.mem_per_node_mib > o_.node_memory_mib[n]);
}

void FakeCluster::constrain(std::uint32_t id, std::string features) {
  jobs_.at(id).info.features = std::move(features);
  changed();
}

void FakeCluster::hidden_requirement(std::uint32_t id, std::vector<int> nodes) {
  jobs_.at(id).hidden_refusals = std::move(nodes);
  changed();
}

void FakeCluster::time_limit(std::uint32_t id, std::int64_t seconds) {
  jobs_.at(id).info.time_limit_s = seconds;
  changed();
}

void FakeCluster::require(std::uint32_t id, std::vector<std::string> excluded,
                          std::uint32_t cpus_per_node, std::uint64_t mem_per_node_mib,
                          std::uint64_t tmp_per_node_mib) {
  JobInfo& i = jobs_.at(id).info;
  i.tmp_per_node_mib = tmp_per_node_mib;
  i.excluded_nodes = std::move(excluded);
  i.cpus_per_node = cpus_per_node;
  i.mem_per_node_mib = mem_per_node_mib;
  changed();
}

// Slurm's scheduling pass: released jobs in priority order, each on its requested nodes
// with exactly its GRES, when they are free.
void FakeCluster::schedule() {
  std::map<std::string, NodeUse> use;
  std::map<std::string, std::pair<std::uint64_t, std::uint32_t>> held;  // memory, CPUs
  for (const auto& [id, j] : jobs_)
    if (j.info.running() || j.info.completing) {
      for (const auto& [node, a] : j.info.alloc) {
        use[node].gpus |= a.gpus;
        use[node].slots |= a.slots;
      }
      for (const auto& node : j.info.nodes) {  // with or without GPUs there
        held[node].first += j.info.mem_per_node_mib;
        held[node].second += j.info.cpus_per_node;
      }
    }
  // What the jobs running on `node` leave of its CPUs and memory for `i` (consumable).
  const auto room = [&](const JobInfo& i, const std::string& node) {
    if (!o_.consumable) return true;
    const auto n = static_cast<std::size_t>(std::stoi(node.substr(4)) - 1);
    const auto h = held.count(node) ? held[node] : std::pair<std::uint64_t, std::uint32_t>{};
    const bool mem = n >= o_.node_memory_mib.size() || o_.node_memory_mib[n] == 0 ||
                     h.first + i.mem_per_node_mib <= o_.node_memory_mib[n];
    const bool cpus = n >= o_.node_cpus.size() || o_.node_cpus[n] == 0 ||
                      h.second + i.cpus_per_node <= o_.node_cpus[n];
    return mem && cpus;
  };
  std::vector<Job*> ready;
  for (auto& [id, j] : jobs_) {
    const JobInfo& i = j.info;
    if (i.state == JobState::Pending && !i.completing && !i.held && i.eligible_s * 1000 <= now_)
      ready.push_back(&j);
  }
  std::stable_sort(ready.begin(), ready.end(),
                   [](const Job* a, const Job* b) { return a->info.priority > b->info.priority; });
  for (Job* j : ready) {
    JobInfo& i = j->info;
    const GresRequest g = parse_gres_request(i.tres_per_node);
    std::vector<std::string> nodes = split(j->req_nodes);
    auto fits = [&](const std::string& node) {
      const auto n = static_cast<std::size_t>(std::stoi(node.substr(4)) - 1);
      if (n >= node_up_.size() || !node_up_[n]) return false;
      const NodeUse u = use.count(node) ? use[node] : NodeUse{};
      return g.kind == GresKind::Slot ? (u.slots & g.mask) == 0 : (u.gpus & g.mask) == 0;
    };
    auto holds = [&](const std::string& node) {
      return can_hold(i, static_cast<std::size_t>(std::stoi(node.substr(4)) - 1));
    };
    if (nodes.empty())
      for (int n = 0; n < o_.nodes && nodes.size() < i.num_nodes; ++n)
        if (fits(node_name(n)) && holds(node_name(n)) && room(i, node_name(n)))
          nodes.push_back(node_name(n));
    const auto hidden = [&](const std::string& node) {
      const auto& h = j->hidden_refusals;
      return std::find(h.begin(), h.end(), std::stoi(node.substr(4)) - 1) != h.end();
    };
    if (std::any_of(nodes.begin(), nodes.end(), hidden)) {
      i.reason = "BadConstraints";  // not counted: DeepShare cannot see this requirement
      continue;
    }
    if (!std::all_of(nodes.begin(), nodes.end(), holds)) {
      // Pinned where Slurm can never start it: it stays pending (feasible.hpp,
      // reservations.hpp).
      i.reason = "Resources";
      if (j->unstartable_run != i.restarts) {
        j->unstartable_run = i.restarts;
        ++unstartable_;
      }
      continue;
    }
    if (nodes.size() != i.num_nodes || !std::all_of(nodes.begin(), nodes.end(), fits)) {
      i.reason = "Resources";
      if (!j->req_nodes.empty() && j->conflict_run != i.restarts) {
        j->conflict_run = i.restarts;
        ++conflicts_;
      }
      continue;
    }
    if (!std::all_of(nodes.begin(), nodes.end(),
                     [&](const std::string& n) { return room(i, n); })) {
      i.reason = "Resources";  // other jobs hold the node's CPUs or memory
      if (j->held_run != i.restarts) {
        j->held_run = i.restarts;
        ++held_refusals_;
      }
      continue;
    }
    if (o_.prolog && !pinned(*j)) {  // PrologSlurmctld: refused, requeued by Slurm
      ++prolog_refusals_;
      ++i.restarts;
      i.eligible_s = now_ / 1000 + 1;
      i.reason = "BeginTime";
      changed();
      continue;
    }
    i.state = JobState::Running;
    i.reason = "None";
    i.start_s = now_ / 1000;
    j->started_ms = now_;
    i.nodes = nodes;
    i.alloc.clear();
    for (const auto& node : nodes) {
      GresAlloc a;
      (g.kind == GresKind::Slot ? a.slots : a.gpus) = g.mask;
      i.alloc[node] = a;
      use[node].gpus |= a.gpus;
      use[node].slots |= a.slots;
      held[node].first += i.mem_per_node_mib;
      held[node].second += i.cpus_per_node;
    }
    if (stats_[i.id - 1].starts++ == 0) stats_[i.id - 1].first_start_ms = now_;
    for (const auto& node : nodes) stats_[i.id - 1].ran_on.push_back(node);
    check_pin(*j);
    changed();
  }
}

std::optional<JobTable> FakeCluster::read_jobs(std::int64_t since) {
  if (!rpc(false)) return std::nullopt;
  std::uniform_real_distribution<double> u(0, 1);
  if (last_answer_ && u(rng_) < o_.p_stale_read) return last_answer_;  // a late duplicate
  JobTable t;
  t.update_s = now_ / 1000;
  if (since != 0 && since - 1 >= last_change_s_) {  // slurmctld's own test
    t.unchanged = true;
    return t;
  }
  t.jobs.reserve(jobs_.size());
  for (const auto& [id, j] : jobs_) t.jobs.push_back(j.info);
  last_answer_ = t;
  return t;
}

std::optional<std::vector<NodeInfo>> FakeCluster::nodes() {
  if (!rpc(false)) return std::nullopt;
  std::vector<NodeInfo> out;
  for (int n = 0; n < o_.nodes; ++n) {
    NodeInfo i;
    i.name = node_name(n);
    i.gpus = o_.gpus_per_node;
    i.usable = node_up_[static_cast<std::size_t>(n)];
    i.state = i.usable ? "IDLE" : "DOWN";
    i.partitions = {o_.partition};
    const auto k = static_cast<std::size_t>(n);
    if (k < o_.node_features.size()) i.features = node_features(k);
    if (k < o_.node_cpus.size()) i.cpus = o_.node_cpus[k];
    if (k < o_.node_memory_mib.size()) i.memory_mib = o_.node_memory_mib[k];
    if (k < o_.node_tmp_mib.size()) i.tmp_disk_mib = o_.node_tmp_mib[k];
    for (const FakeReservation& r : reservations)
      if (now_ < r.end_ms && std::find(r.nodes.begin(), r.nodes.end(), n) != r.nodes.end())
        i.reservations.push_back({r.name, r.start_ms / 1000, r.end_ms / 1000});
    out.push_back(i);
  }
  return out;
}

std::optional<SlurmConfig> FakeCluster::config() {
  if (!rpc(false)) return std::nullopt;
  SlurmConfig c;
  c.kill_wait_s = o_.kill_wait_s;
  c.job_submit_plugins = "lua";
  c.cluster = "fake";
  c.accounting = c.enforce_associations = !accounts.empty();
  c.memory_consumable = c.cpus_consumable = o_.consumable;
  return c;
}

std::optional<std::vector<Association>> FakeCluster::associations(const std::string&) {
  if (!rpc(false)) return std::nullopt;
  return accounts;
}

bool FakeCluster::update(const Update& u) {
  if (!rpc(true)) return false;
  Job* j = find(u.job);
  if (!j) return fail("Invalid job id specified");
  JobInfo& i = j->info;
  if (i.terminal()) return fail("Job/step already completing or completed", true);
  const bool pending = i.state == JobState::Pending;
  if (!pending && (u.req_nodes || u.tres_per_node || u.begin_s))
    return fail("Job is no longer pending execution");
  if (u.tres_per_node && !i.tres_per_node.empty() && *u.tres_per_node != i.tres_per_node) {
    ++gres_changes_;  // Slurm would merge the requests: the controller must never do this
    return fail("Invalid generic resource (gres) specification");
  }
  if (u.admin_comment) i.admin_comment = *u.admin_comment;
  if (u.req_nodes) j->req_nodes = *u.req_nodes;
  if (u.tres_per_node) i.tres_per_node = *u.tres_per_node;
  if (u.begin_s) i.eligible_s = *u.begin_s;
  if (u.priority) {
    if (*u.priority == kInfinite) {
      i.held = false;
      if (i.priority == 0) i.priority = 1;
    } else if (*u.priority == 0) {
      i.held = true;
      i.priority = 0;
    } else if (!i.held) {
      i.priority = *u.priority;
    }
  }
  changed();
  ++applied_;
  std::uniform_real_distribution<double> p(0, 1);
  if (p(rng_) < o_.p_reply_lost) return fail("Socket timed out on send/recv operation");
  return true;
}

bool FakeCluster::requeue_hold(const std::string& ref) {
  if (!rpc(true)) return false;
  Job* j = find(ref);
  if (!j) return fail("Invalid job id specified");
  std::uniform_real_distribution<double> p(0, 1);
  if (j->info.running() && o_.p_ends_first > 0 && p(rng_) < o_.p_ends_first) complete(*j);
  if (j->info.terminal()) return fail("Job has already finished", true);
  if (!j->info.running()) return true;  // JOB_RUNNING: a no-op for a job that is not running
  end_run(*j, JobState::Pending, true, true);
  j->info.completing = true;
  j->completing_until = now_ + o_.kill_ms;
  ++applied_;
  if (p(rng_) < o_.p_reply_lost) return fail("Socket timed out on send/recv operation");
  return true;
}

bool FakeCluster::cancel(const std::string& ref) {
  if (!rpc(true)) return false;
  Job* j = find(ref);
  if (!j) return fail("Invalid job id specified");
  if (j->info.terminal()) return fail("Job/step already completing or completed");
  const bool was_running = j->info.running();
  end_run(*j, JobState::Cancelled, false, false);
  stats_[j->info.id - 1].cancelled = true;
  const RecordFields fields = parse_fields(j->info.admin_comment);
  if (auto x = fields.find("x"); x != fields.end()) stats_[j->info.id - 1].refusal = x->second;
  if (was_running) {
    j->info.completing = true;
    j->completing_until = now_ + o_.kill_ms;
  }
  ++applied_;
  return true;
}

void FakeCluster::user_cancel(std::uint32_t id) {
  if (Job* j = find(std::to_string(id)); j && !j->info.terminal()) {
    const bool was_running = j->info.running();
    end_run(*j, JobState::Cancelled, false, false);
    stats_[id - 1].cancelled = true;
    if (was_running) {
      j->info.completing = true;
      j->completing_until = now_ + o_.kill_ms;
    }
  }
}

void FakeCluster::user_requeue(std::uint32_t id) {
  Job* j = find(std::to_string(id));
  if (!j || j->info.state == JobState::Pending || j->info.completing) return;
  JobInfo& i = j->info;
  if (i.running()) {
    end_run(*j, JobState::Pending, true, false);
    i.completing = true;
    j->completing_until = now_ + o_.kill_ms;
  } else {  // finished: pending again at once
    i.state = JobState::Pending;
    ++i.restarts;
    ++stats_[id - 1].requeues;
    i.reason = "BeginTime";
    i.alloc.clear();
    i.nodes.clear();
    stats_[id - 1].completed = stats_[id - 1].cancelled = false;
  }
  i.submit_s = now_ / 1000;
  i.eligible_s = now_ / 1000 + 1;
  changed();
}

void FakeCluster::user_hold(std::uint32_t id, bool hold) {
  Job* j = find(std::to_string(id));
  if (!j || j->info.state != JobState::Pending) return;
  JobInfo& i = j->info;
  i.held = hold;
  i.priority = hold ? 0 : 1;
  i.reason = hold ? "JobHeldUser" : "BeginTime";
  i.eligible_s = kParkedBegin;  // the gate parks it on a hold and on a release
  changed();
}

void FakeCluster::set_node_up(int node, bool up) {
  node_up_[static_cast<std::size_t>(node)] = up;
  changed();
  if (up) return;
  const std::string name = node_name(node);
  for (auto& [id, j] : jobs_) {
    JobInfo& i = j.info;
    if (!i.running() || std::find(i.nodes.begin(), i.nodes.end(), name) == i.nodes.end()) continue;
    end_run(j, JobState::Pending, true, false);  // requeued by Slurm (node failure)
    i.alloc.clear();
    i.nodes.clear();
    i.eligible_s = now_ / 1000 + 1;
  }
}

void FakeCluster::outage(std::int64_t ms) {
  outage_until_ = now_ + ms;
}

std::string FakeCluster::describe(std::uint32_t id) const {
  const FakeJobStats& s = stats(id);
  std::string out = "job " + std::to_string(id) + " (" + s.account + ", " + std::to_string(s.gpus) +
                    " GPUs): starts " + std::to_string(s.starts) + ", requeues " +
                    std::to_string(s.requeues) + (s.completed ? ", completed" : "") +
                    (s.cancelled ? ", cancelled" : "");
  if (auto it = jobs_.find(id); it != jobs_.end())
    out += ", state " + std::to_string(static_cast<int>(it->second.info.state)) +
           (it->second.info.held ? " held" : "") + " reason " + it->second.info.reason +
           " eligible " + std::to_string(it->second.info.eligible_s) + " comment " +
           it->second.info.admin_comment + " tres " + it->second.info.tres_per_node;
  return out;
}

}  // namespace ds::slurm
