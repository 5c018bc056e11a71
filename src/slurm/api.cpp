#include "slurm/api.hpp"

#include <pwd.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>

extern "C" {
// Exported by libslurm.so.38 but not declared in the 22.05 headers.
char* slurm_job_state_string(uint32_t state);
char* slurm_node_state_string(uint32_t state);
char* slurm_job_reason_string(int reason);
// xfree(): frees what libslurm allocated and sets the pointer to NULL (src/common/xmalloc.h).
void slurm_xfree(void** item);
}
extern char** environ;

namespace ds::slurm {
namespace {

// Slurm 22.05's slurm_free_job_info_msg() leaks five strings of every job record it frees
// (SchedMD bug 17246, fixed in 23.02.5: admin_comment, system_comment, prefer,
// cluster_features, cronspec). DeepShare writes an AdminComment on every job, so each read of
// the job table leaked it once per job: the controller grew by ~43 KiB per job on the test
// cluster (bench/slurm_soak.sh, heaptrack: 6.5 MB of admin comments after 300 jobs). Freed
// here and set to NULL, so that a libslurm that frees them itself finds nothing to free.
void free_leaked_members(job_info_msg_t& msg) {
  for (std::uint32_t i = 0; i < msg.record_count; ++i) {
    slurm_job_info_t& j = msg.job_array[i];
    for (char** field :
         {&j.admin_comment, &j.system_comment, &j.prefer, &j.cluster_features, &j.cronspec})
      slurm_xfree(reinterpret_cast<void**>(field));
  }
}

// src/common/read_config.h of Slurm 22.05 (not in the public headers).
constexpr std::uint16_t kEnforceAssocs = 1u << 0;
constexpr std::uint16_t kEnforceLimits = 1u << 1;
constexpr std::uint16_t kEnforceSafe = 1u << 4;

std::string str(const char* s) {
  return s ? s : "";
}

// "a,b" -> {a, b} (empty items dropped).
std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t p = 0; p < s.size();) {
    const std::size_t e = std::min(s.find(',', p), s.size());
    if (e > p) out.push_back(s.substr(p, e - p));
    p = e + 1;
  }
  return out;
}

std::vector<std::string> expand(const char* list) {
  std::vector<std::string> out;
  if (!list || !*list) return out;
  hostlist_t hl = slurm_hostlist_create(list);
  if (!hl) return out;
  while (char* h = slurm_hostlist_shift(hl)) {
    out.emplace_back(h);
    std::free(h);
  }
  slurm_hostlist_destroy(hl);
  return out;
}

JobState map_state(uint32_t s) {
  switch (s & JOB_STATE_BASE) {
    case JOB_PENDING:
      return JobState::Pending;
    case JOB_RUNNING:
      return JobState::Running;
    case JOB_SUSPENDED:
      return JobState::Suspended;
    case JOB_COMPLETE:
      return JobState::Completed;
    case JOB_CANCELLED:
      return JobState::Cancelled;
    case JOB_FAILED:
    case JOB_TIMEOUT:
    case JOB_NODE_FAIL:
    case JOB_BOOT_FAIL:
    case JOB_DEADLINE:
    case JOB_OOM:
    case JOB_PREEMPTED:
      return JobState::Failed;
    default:
      return JobState::Other;
  }
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string user_name(uint32_t uid) {
  static std::mutex mu;
  static std::map<uint32_t, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(uid);
  if (it != cache.end()) return it->second;
  char buf[4096];
  struct passwd pw, *res = nullptr;
  std::string name = getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res
                         ? std::string(pw.pw_name)
                         : std::to_string(uid);
  return cache[uid] = name;
}

// slurm_init once per process (it loads the configuration); slurm_fini never, since
// several SlurmApi objects may live in different threads.
void init_once() {
  static std::once_flag once;
  std::call_once(once, [] { slurm_init(nullptr); });
}

// The error of an RPC on a job that may be an array: its return code's, else the first of
// any task in `resp` (freed here); 0: none.
int array_error(int rc, job_array_resp_msg_t* resp) {
  int err = rc == SLURM_SUCCESS ? 0 : slurm_get_errno();
  if (resp) {
    for (uint32_t i = 0; i < resp->job_array_count && !err; ++i)
      err = static_cast<int>(resp->error_code[i]);
    slurm_free_job_array_resp(resp);
  }
  return err;
}

}  // namespace

// Times one RPC and records it in the api's RpcStats with its outcome (fail() marks it).
class RpcScope {
 public:
  RpcScope(SlurmApi& api, const char* op)
      : api_(api), op_(op), t0_(std::chrono::steady_clock::now()) {
    api_.failed_ = false;
  }
  ~RpcScope() {
    if (api_.stats_)
      api_.stats_->record(
          op_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(),
          !api_.failed_);
  }
  RpcScope(const RpcScope&) = delete;
  RpcScope& operator=(const RpcScope&) = delete;

 private:
  SlurmApi& api_;
  const char* op_;
  std::chrono::steady_clock::time_point t0_;
};

SlurmApi::SlurmApi() {
  init_once();
}
SlurmApi::~SlurmApi() = default;

bool SlurmApi::last_failure_done() const {
  return errno_ == ESLURM_ALREADY_DONE || errno_ == ESLURM_JOB_FINISHED;
}

bool SlurmApi::fail(const char* what) {
  failed_ = true;
  errno_ = slurm_get_errno();
  error_ = std::string(what) + ": " + str(slurm_strerror(errno_));
  return false;
}

std::optional<std::vector<JobInfo>> SlurmApi::jobs() {
  auto t = read_jobs(0);
  if (!t) return std::nullopt;
  return std::move(t->jobs);
}

std::optional<JobTable> SlurmApi::read_jobs(std::int64_t since) {
  RpcScope rpc(*this, "load_jobs");
  job_info_msg_t* msg = nullptr;
  if (slurm_load_jobs(static_cast<time_t>(since), &msg, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) {
    if (since != 0 && slurm_get_errno() == SLURM_NO_CHANGE_IN_DATA) {
      JobTable t;
      t.unchanged = true;
      t.update_s = since;
      return t;
    }
    fail("slurm_load_jobs");
    return std::nullopt;
  }
  JobTable table;
  table.update_s = static_cast<std::int64_t>(msg->last_update);
  std::vector<JobInfo>& out = table.jobs;
  out.reserve(msg->record_count);
  for (uint32_t i = 0; i < msg->record_count; ++i) {
    const slurm_job_info_t& j = msg->job_array[i];
    JobInfo o;
    o.id = j.job_id;
    o.array_job = j.array_job_id;
    o.array_task = j.array_task_id == NO_VAL ? kNoTask : j.array_task_id;
    o.array_tasks = str(j.array_task_str);
    o.array_max_running = j.array_max_tasks;
    o.name = str(j.name);
    o.account = lower(str(j.account));
    o.user = str(j.user_name);
    o.uid = j.user_id;
    if (o.user.empty()) o.user = user_name(j.user_id);
    o.partition = str(j.partition);
    o.state = map_state(j.job_state);
    o.completing = (j.job_state & JOB_COMPLETING) != 0;
    o.reason = str(slurm_job_reason_string(static_cast<int>(j.state_reason)));
    o.priority = j.priority;
    o.held = j.priority == 0 && o.state == JobState::Pending;
    o.restarts = j.restart_cnt;
    o.requeue = j.requeue != 0;
    o.batch = j.batch_flag != 0;
    o.submit_s = j.submit_time;
    o.start_s = j.start_time;
    o.end_s = j.end_time;
    o.eligible_s = j.eligible_time;
    o.dependency = str(j.dependency);
    if (o.dependency == "(null)") o.dependency.clear();
    o.nodes = expand(j.nodes);
    for (uint32_t k = 0; k < j.gres_detail_cnt && k < o.nodes.size(); ++k)
      o.alloc[o.nodes[k]] = parse_gres_alloc(str(j.gres_detail_str[k]));
    o.tres_per_node = str(j.tres_per_node);
    o.comment = str(j.comment);
    o.admin_comment = str(j.admin_comment);
    o.num_nodes = j.num_nodes;
    o.excluded_nodes = expand(j.exc_nodes);
    o.features = str(j.features);
    if (o.features == "(null)") o.features.clear();
    if (j.time_limit != INFINITE && j.time_limit != NO_VAL)
      o.time_limit_s = static_cast<std::int64_t>(j.time_limit) * 60;
    // Per node: pn_min_cpus, or the job's minimum CPUs spread over its nodes; memory per
    // node, or per CPU (MEM_PER_CPU) times those CPUs. NO_VAL*: nothing asked.
    const std::uint32_t spread =
        (j.num_cpus + std::max(j.num_nodes, 1u) - 1) / std::max(j.num_nodes, 1u);
    o.cpus_per_node = std::max<std::uint32_t>(j.pn_min_cpus == NO_VAL16 ? 0 : j.pn_min_cpus,
                                              j.num_cpus == NO_VAL ? 0 : spread);
    if (j.pn_min_memory != NO_VAL64) {
      const std::uint64_t mib = j.pn_min_memory & ~MEM_PER_CPU;
      o.mem_per_node_mib =
          (j.pn_min_memory & MEM_PER_CPU) ? mib * std::max(o.cpus_per_node, 1u) : mib;
    }
    if (j.pn_min_tmp_disk != NO_VAL) o.tmp_per_node_mib = j.pn_min_tmp_disk;
    out.push_back(std::move(o));
  }
  free_leaked_members(*msg);
  slurm_free_job_info_msg(msg);
  return table;
}

std::optional<std::vector<NodeInfo>> SlurmApi::nodes() {
  RpcScope rpc(*this, "load_nodes");
  node_info_msg_t* msg = nullptr;
  if (slurm_load_node(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
    fail("slurm_load_node");
    return std::nullopt;
  }
  // node_info_t::partitions is filled only by slurm_populate_node_partitions
  partition_info_msg_t* parts = nullptr;
  if (slurm_load_partitions(0, &parts, SHOW_ALL) == SLURM_SUCCESS) {
    slurm_populate_node_partitions(msg, parts);
    slurm_free_partition_info_msg(parts);
  }
  // Reservations, by node (reservations.hpp): a failed read is the read's failure, so that
  // a reserved node is never taken for a free one.
  reserve_info_msg_t* resv = nullptr;
  if (slurm_load_reservations(0, &resv) != SLURM_SUCCESS) {
    slurm_free_node_info_msg(msg);
    fail("slurm_load_reservations");
    return std::nullopt;
  }
  std::map<std::string, std::vector<ReservedWindow>> reserved;
  for (uint32_t i = 0; i < resv->record_count; ++i) {
    const reserve_info_t& r = resv->reservation_array[i];
    for (const auto& node : expand(r.node_list))
      reserved[node].push_back({str(r.name), static_cast<std::int64_t>(r.start_time),
                                static_cast<std::int64_t>(r.end_time)});
  }
  slurm_free_reservation_info_msg(resv);
  std::vector<NodeInfo> out;
  for (uint32_t i = 0; i < msg->record_count; ++i) {
    const node_info_t& n = msg->node_array[i];
    if (!n.name) continue;
    NodeInfo o;
    o.name = n.name;
    o.gpus = parse_gpu_count(str(n.gres));
    const uint32_t base = n.node_state & NODE_STATE_BASE;
    // UNKNOWN is a node slurmctld has not heard from since it started (seconds after a
    // slurmctld restart): not a failure.
    o.usable = base != NODE_STATE_DOWN && base != NODE_STATE_FUTURE &&
               !(n.node_state & (NODE_STATE_DRAIN | NODE_STATE_NO_RESPOND | NODE_STATE_FAIL));
    o.state = str(slurm_node_state_string(n.node_state));
    o.partitions = split_list(str(n.partitions));
    // Active features: the ones a node has now (they differ from `features` only on nodes
    // whose features a node_features plugin changes); DeepShare reads GPU models from them.
    o.features = split_list(str(n.features_act).empty() ? str(n.features) : str(n.features_act));
    o.cpus = n.cpus;
    o.memory_mib = n.real_memory;
    o.tmp_disk_mib = n.tmp_disk;
    if (const auto it = reserved.find(o.name); it != reserved.end()) o.reservations = it->second;
    out.push_back(std::move(o));
  }
  slurm_free_node_info_msg(msg);
  return out;
}

std::optional<SlurmConfig> SlurmApi::config() {
  RpcScope rpc(*this, "load_config");
  slurm_conf_t* c = nullptr;
  if (slurm_load_ctl_conf(0, &c) != SLURM_SUCCESS) {
    fail("slurm_load_ctl_conf");
    return std::nullopt;
  }
  SlurmConfig o;
  o.kill_wait_s = c->kill_wait;
  o.accounting = str(c->accounting_storage_type).find("slurmdbd") != std::string::npos;
  o.enforce_associations = (c->accounting_storage_enforce & kEnforceAssocs) != 0;
  o.enforce_limits = (c->accounting_storage_enforce & (kEnforceLimits | kEnforceSafe)) != 0;
  o.job_submit_plugins = str(c->job_submit_plugins);
  o.cluster = str(c->cluster_name);
  o.memory_consumable = (c->select_type_param & CR_MEMORY) != 0;
  o.cpus_consumable = (c->select_type_param & (CR_CPU | CR_CORE | CR_SOCKET)) != 0;
  slurm_free_ctl_conf(c);
  return o;
}

std::optional<std::vector<Association>> SlurmApi::associations(const std::string& tres) {
  RpcScope rpc(*this, "load_associations");
  assoc_mgr_info_request_msg_t req;
  std::memset(&req, 0, sizeof req);
  req.flags = ASSOC_MGR_INFO_FLAG_ASSOC;
  assoc_mgr_info_msg_t* msg = nullptr;
  if (slurm_load_assoc_mgr_info(&req, &msg) != SLURM_SUCCESS || !msg) {
    fail("slurm_load_assoc_mgr_info");
    return std::nullopt;
  }
  int tres_index = -1;
  for (uint32_t i = 0; i < msg->tres_cnt; ++i)
    if (msg->tres_names && str(msg->tres_names[i]) == tres) tres_index = static_cast<int>(i);
  std::vector<Association> out;
  if (msg->assoc_list) {
    ListIterator it = slurm_list_iterator_create(msg->assoc_list);
    while (auto* a = static_cast<slurmdb_assoc_rec_t*>(slurm_list_next(it))) {
      Association o;
      o.account = lower(str(a->acct));
      o.user = str(a->user);
      o.partition = str(a->partition);
      o.parent = lower(str(a->parent_acct));
      o.shares = a->shares_raw == NO_VAL || a->shares_raw == 0 ? 1 : a->shares_raw;
      if (tres_index >= 0 && a->grp_tres_ctld) {
        const std::uint64_t v = a->grp_tres_ctld[tres_index];
        if (v != INFINITE64 && v != NO_VAL64) o.grp_quota = static_cast<std::int64_t>(v);
      }
      out.push_back(std::move(o));
    }
    slurm_list_iterator_destroy(it);
  }
  slurm_free_assoc_mgr_info_msg(msg);
  return out;
}

std::optional<std::uint32_t> SlurmApi::submit(const SubmitRequest& r) {
  RpcScope rpc(*this, "submit");
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  std::string name = r.name, account = r.account, partition = r.partition, script = r.script,
              work_dir = r.work_dir, out = r.std_out, tres = r.tres_per_node, comment = r.comment,
              qos = r.qos;
  d.name = name.data();
  if (!account.empty()) d.account = account.data();
  if (!partition.empty()) d.partition = partition.data();
  d.script = script.data();
  d.work_dir = work_dir.data();
  if (!out.empty()) d.std_out = out.data();
  if (!tres.empty()) d.tres_per_node = tres.data();
  if (!comment.empty()) d.comment = comment.data();
  if (!qos.empty()) d.qos = qos.data();
  if (r.time_limit_min > 0) d.time_limit = r.time_limit_min;
  if (r.cpus > 0) {
    d.num_tasks = 1;
    d.cpus_per_task = r.cpus;
    d.min_cpus = r.cpus;
  }
  d.min_nodes = r.nodes;
  d.max_nodes = r.nodes;
  d.user_id = getuid();
  d.group_id = getgid();
  d.requeue = r.requeue ? 1 : 0;
  d.environment = environ;
  d.env_size = 0;
  while (environ[d.env_size]) ++d.env_size;
  if (r.hold) d.priority = 0;
  submit_response_msg_t* resp = nullptr;
  if (slurm_submit_batch_job(&d, &resp) != SLURM_SUCCESS) {
    fail("slurm_submit_batch_job");
    return std::nullopt;
  }
  std::uint32_t id = resp->job_id;
  slurm_free_submit_response_response_msg(resp);
  return id;
}

bool SlurmApi::update(const Update& u) {
  RpcScope rpc(*this, "update_job");
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  std::string id = u.job, nodes = u.req_nodes.value_or(""), tres = u.tres_per_node.value_or(""),
              admin = u.admin_comment.value_or("");
  d.job_id_str = id.data();
  if (u.req_nodes) d.req_nodes = nodes.data();
  if (u.tres_per_node) d.tres_per_node = tres.data();
  if (u.admin_comment) d.admin_comment = admin.data();
  if (u.priority) d.priority = *u.priority;
  if (u.begin_s) d.begin_time = static_cast<time_t>(*u.begin_s);
  job_array_resp_msg_t* resp = nullptr;
  const int rc = slurm_update_job2(&d, &resp);
  if (const int err = array_error(rc, resp)) {
    slurm_seterrno(err);
    return fail("slurm_update_job");
  }
  return true;
}

bool SlurmApi::release(const std::string& job) {
  Update u;
  u.job = job;
  u.priority = INFINITE;
  return update(u);
}

bool SlurmApi::requeue_hold(const std::string& job) {
  RpcScope rpc(*this, "requeue");
  std::string id = job;
  job_array_resp_msg_t* resp = nullptr;
  const int rc = slurm_requeue2(id.data(), JOB_RUNNING | JOB_REQUEUE_HOLD, &resp);
  if (const int err = array_error(rc, resp)) {
    slurm_seterrno(err);
    return fail("slurm_requeue");
  }
  return true;
}

bool SlurmApi::cancel(const std::string& job) {
  RpcScope rpc(*this, "cancel");
  if (slurm_kill_job2(job.c_str(), SIGKILL, 0, nullptr) != SLURM_SUCCESS)
    return fail("slurm_kill_job");
  return true;
}

}  // namespace ds::slurm
