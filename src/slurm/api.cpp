#include "slurm/api.hpp"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

extern "C" {
// Exported by libslurm.so.38 but not declared in the 22.05 headers.
char* slurm_job_state_string(uint32_t state);
char* slurm_node_state_string(uint32_t state);
char* slurm_job_reason_string(int reason);
}
extern char** environ;

namespace ds::slurm {
namespace {

std::string str(const char* s) {
  return s ? s : "";
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
  if (s & JOB_COMPLETING) return JobState::Completing;
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
      return JobState::Failed;
    default:
      return JobState::Other;
  }
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// slurm_init once per process (it loads the configuration); slurm_fini never, since
// several SlurmApi objects may live in different threads.
void init_once() {
  static std::once_flag once;
  std::call_once(once, [] { slurm_init(nullptr); });
}

}  // namespace

std::uint64_t parse_gpu_idx(const std::string& d) {
  // e.g. "gpu:2(IDX:0-1)", "gpu:3(IDX:0,2-3)", "mps:50(IDX:2)"
  auto p = d.find("IDX:");
  if (p == std::string::npos) return 0;
  std::uint64_t mask = 0;
  std::size_t i = p + 4;
  while (i < d.size() && d[i] != ')') {
    char* end = nullptr;
    long a = std::strtol(d.c_str() + i, &end, 10);
    long b = a;
    i = static_cast<std::size_t>(end - d.c_str());
    if (i < d.size() && d[i] == '-') {
      b = std::strtol(d.c_str() + i + 1, &end, 10);
      i = static_cast<std::size_t>(end - d.c_str());
    }
    for (long k = a; k <= b && k < 64 && k >= 0; ++k) mask |= std::uint64_t{1} << k;
    if (i < d.size() && d[i] == ',')
      ++i;
    else
      break;
  }
  return mask;
}

int parse_gpu_count(const std::string& gres) {
  // comma separated entries "gpu[:type]:N[(S:..)]"
  std::size_t pos = 0;
  while (pos < gres.size()) {
    std::size_t end = gres.find(',', pos);
    std::string e = gres.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? gres.size() : end + 1;
    if (e.rfind("gpu:", 0) != 0) continue;
    e = e.substr(0, e.find('('));
    return std::atoi(e.substr(e.rfind(':') + 1).c_str());
  }
  return 0;
}

int parse_tres_gpus(const std::string& t) {
  auto p = t.find("gpu:");
  if (p == std::string::npos) return 0;
  std::string rest = t.substr(p + 4);
  rest = rest.substr(0, rest.find_first_of(",;"));
  return std::atoi(
      rest.substr(rest.rfind(':') == std::string::npos ? 0 : rest.rfind(':') + 1).c_str());
}

SlurmApi::SlurmApi() {
  init_once();
}
SlurmApi::~SlurmApi() = default;

bool SlurmApi::fail(const char* what) {
  errno_ = slurm_get_errno();
  error_ = std::string(what) + ": " + str(slurm_strerror(errno_));
  return false;
}

std::optional<std::vector<JobInfo>> SlurmApi::jobs() {
  job_info_msg_t* msg = nullptr;
  if (slurm_load_jobs(0, &msg, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) {
    fail("slurm_load_jobs");
    return std::nullopt;
  }
  std::vector<JobInfo> out;
  out.reserve(msg->record_count);
  for (uint32_t i = 0; i < msg->record_count; ++i) {
    const slurm_job_info_t& j = msg->job_array[i];
    JobInfo o;
    o.id = j.job_id;
    o.name = str(j.name);
    o.account = lower(str(j.account));
    o.user = str(j.user_name);
    o.partition = str(j.partition);
    o.state = map_state(j.job_state);
    o.reason = str(slurm_job_reason_string(static_cast<int>(j.state_reason)));
    o.priority = j.priority;
    o.held = j.priority == 0 && o.state == JobState::Pending;
    o.restarts = j.restart_cnt;
    o.submit_s = j.submit_time;
    o.start_s = j.start_time;
    o.end_s = j.end_time;
    o.nodes = expand(j.nodes);
    for (uint32_t k = 0; k < j.gres_detail_cnt && k < o.nodes.size(); ++k)
      o.gpu_idx[o.nodes[k]] = parse_gpu_idx(str(j.gres_detail_str[k]));
    o.tres_per_node = str(j.tres_per_node);
    o.comment = str(j.comment);
    o.num_nodes = j.num_nodes;
    out.push_back(std::move(o));
  }
  slurm_free_job_info_msg(msg);
  return out;
}

std::optional<std::vector<NodeInfo>> SlurmApi::nodes() {
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
  std::vector<NodeInfo> out;
  for (uint32_t i = 0; i < msg->record_count; ++i) {
    const node_info_t& n = msg->node_array[i];
    if (!n.name) continue;
    NodeInfo o;
    o.name = n.name;
    o.gpus = parse_gpu_count(str(n.gres));
    const uint32_t base = n.node_state & NODE_STATE_BASE;
    o.usable = base != NODE_STATE_DOWN && base != NODE_STATE_FUTURE && base != NODE_STATE_UNKNOWN &&
               !(n.node_state & (NODE_STATE_DRAIN | NODE_STATE_NO_RESPOND | NODE_STATE_FAIL));
    o.state = str(slurm_node_state_string(n.node_state));
    std::string parts = str(n.partitions);
    for (std::size_t p = 0; p < parts.size();) {
      std::size_t e = parts.find(',', p);
      o.partitions.push_back(parts.substr(p, e == std::string::npos ? std::string::npos : e - p));
      p = e == std::string::npos ? parts.size() : e + 1;
    }
    out.push_back(std::move(o));
  }
  slurm_free_node_info_msg(msg);
  return out;
}

std::optional<std::uint32_t> SlurmApi::submit(const SubmitRequest& r) {
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  std::string name = r.name, account = r.account, partition = r.partition, script = r.script,
              work_dir = r.work_dir, out = r.std_out, tres = r.tres_per_node, comment = r.comment;
  d.name = name.data();
  if (!account.empty()) d.account = account.data();
  if (!partition.empty()) d.partition = partition.data();
  d.script = script.data();
  d.work_dir = work_dir.data();
  if (!out.empty()) d.std_out = out.data();
  if (!tres.empty()) d.tres_per_node = tres.data();
  if (!comment.empty()) d.comment = comment.data();
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
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  d.job_id = u.job;
  std::string nodes = u.req_nodes.value_or(""), tres = u.tres_per_node.value_or(""),
              comment = u.comment.value_or("");
  if (u.req_nodes) d.req_nodes = nodes.data();
  if (u.tres_per_node) d.tres_per_node = tres.data();
  if (u.comment) d.comment = comment.data();
  if (u.priority) d.priority = *u.priority;
  if (u.start_now) d.begin_time = std::time(nullptr);
  if (slurm_update_job(&d) != SLURM_SUCCESS) return fail("slurm_update_job");
  return true;
}

bool SlurmApi::release(std::uint32_t job) {
  return update({job, {}, {}, {}, INFINITE, false});
}
bool SlurmApi::hold(std::uint32_t job) {
  return update({job, {}, {}, {}, 0u, false});
}

bool SlurmApi::requeue_hold(std::uint32_t job) {
  if (slurm_requeue(job, JOB_REQUEUE_HOLD) != SLURM_SUCCESS) return fail("slurm_requeue");
  return true;
}

bool SlurmApi::cancel(std::uint32_t job) {
  if (slurm_kill_job(job, SIGKILL, 0) != SLURM_SUCCESS) return fail("slurm_kill_job");
  return true;
}

}  // namespace ds::slurm
