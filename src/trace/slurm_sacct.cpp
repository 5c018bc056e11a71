#include "trace/slurm_sacct.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/slurm_text.hpp"

namespace ds {
namespace {

constexpr const char* kCommand =
    "sacct --parsable2 --allusers --duplicates --format "
    "JobID,JobIDRaw,Account,User,Partition,QOS,Submit,Start,End,Elapsed,State,AllocTRES,"
    "ReqTRES,NNodes,Timelimit";

struct Columns {
  std::size_t id, account, submit, start, end, state;
  std::optional<std::size_t> raw, user, partition, qos, elapsed, alloc, req, nodes, limit;
};

Columns columns(const PipeTable& t) {
  Columns c{t.require({"JobID"}),
            t.require({"Account"}),
            t.require({"Submit"}),
            t.require({"Start"}),
            t.require({"End"}),
            t.require({"State"}),
            {},
            {},
            {},
            {},
            {},
            {},
            {},
            {},
            {}};
  c.raw = t.find({"JobIDRaw"});
  c.user = t.find({"User"});
  c.partition = t.find({"Partition"});
  c.qos = t.find({"QOS"});
  c.elapsed = t.find({"Elapsed"});
  c.alloc = t.find({"AllocTRES"});
  c.req = t.find({"ReqTRES"});
  c.nodes = t.find({"NNodes"});
  c.limit = t.find({"Timelimit"});
  if (!c.alloc && !c.req) (void)t.require({"AllocTRES"});  // names the command to run
  return c;
}

// One row of a job (not a step).
struct Run {
  int component = 0;
  std::string account, user, partition, qos, state, gpu_type;
  std::int64_t submit = 0;
  std::optional<std::int64_t> start, end, elapsed, limit;
  std::int64_t gpus = 0;
  int nodes = 1;
  bool mixed_models = false;
  long line = 0;
};

// Assumption 4: the GPUs and the required model of one row.
void read_gpus(const PipeTable& t, const Columns& c, Run& r) {
  const GpuTres alloc = c.alloc ? slurm_tres(t, *c.alloc) : GpuTres{};
  const GpuTres req = c.req ? slurm_tres(t, *c.req) : GpuTres{};
  r.gpus = alloc.gpus > 0 ? alloc.gpus : alloc.shares > 0 ? alloc.shares : req.gpus;
  std::vector<std::string> models;
  for (const auto& [type, n] : req.typed)
    if (n > 0 && !is_index_gpu_type(type) &&
        std::find(models.begin(), models.end(), type) == models.end())
      models.push_back(type);
  if (models.size() == 1) r.gpu_type = models[0];
  r.mixed_models = models.size() > 1;
}

Run read_run(const PipeTable& t, const Columns& c, int component) {
  Run r;
  r.component = component;
  r.line = t.line();
  auto text = [&](const std::optional<std::size_t>& col) {
    return col ? std::string(t.field(*col)) : std::string();
  };
  r.account = std::string(t.field(c.account));
  r.user = text(c.user);
  r.partition = text(c.partition);
  r.qos = text(c.qos);
  r.state = std::string(t.field(c.state));
  if (r.state.empty()) t.fail(c.state, "a job state (COMPLETED, FAILED, ...)");
  const auto submit = slurm_time(t, c.submit);
  if (!submit) t.fail(c.submit, "the job's submit time");
  r.submit = *submit;
  r.start = slurm_time(t, c.start);
  r.end = slurm_time(t, c.end);
  if (r.start && r.end && *r.end < *r.start)
    t.fail(c.end, "an end time not before the start (" + std::string(t.field(c.start)) + ")");
  if (c.elapsed) r.elapsed = slurm_duration(t, *c.elapsed);
  if (c.limit) r.limit = slurm_duration(t, *c.limit);
  if (c.nodes && !t.field(*c.nodes).empty()) {
    const auto n = parse_int(t.field(*c.nodes));
    if (!n || *n < 0 || *n > limits::kMaxNodes)
      t.fail(*c.nodes, "a node count in 0.." + std::to_string(limits::kMaxNodes));
    r.nodes = static_cast<int>(*n);
  }
  read_gpus(t, c, r);
  return r;
}

// Assumption 2: "123+1" -> ("123", 1); "123_4" -> ("123_4", 0). Throws for "123+x".
std::pair<std::string, int> job_key(const PipeTable& t, std::size_t column, std::string_view id) {
  const auto plus = id.find('+');
  if (plus == std::string_view::npos) return {std::string(id), 0};
  const auto n = parse_int(id.substr(plus + 1));
  if (plus == 0 || !n || *n < 0 || *n > 1'000'000 || id[plus + 1] == '+' || id[plus + 1] == '-')
    t.fail(column, "a job id such as 123, 123_4 or 123+0 (a heterogeneous component)");
  return {std::string(id.substr(0, plus)), static_cast<int>(*n)};
}

struct Pending {
  std::string raw_id;
  std::vector<Run> runs;  // in file order, every component
};

// Assumptions 2, 3 and 5: one job from its rows, or the reason it is skipped.
std::optional<SacctJob> fold(const std::string& id, const Pending& p, SacctRead& out,
                             std::string& reason) {
  std::map<int, std::vector<const Run*>> by_component;
  for (const Run& r : p.runs) by_component[r.component].push_back(&r);
  SacctJob j;
  j.id = id;
  j.raw_id = p.raw_id;
  j.components = static_cast<int>(by_component.size());
  j.submit_s = p.runs.front().submit;
  std::optional<std::int64_t> first_start;
  for (const Run& r : p.runs) {
    j.submit_s = std::min(j.submit_s, r.submit);
    if (r.start) first_start = std::min(first_start.value_or(*r.start), *r.start);
  }
  bool first = true;
  for (const auto& [component, runs] : by_component) {
    const Run& last = *runs.back();
    j.runs = std::max(j.runs, static_cast<int>(runs.size()));
    if (!last.start) return reason = "never started", std::nullopt;
    if (!last.end) return reason = "still running", std::nullopt;
    const std::int64_t run = last.elapsed.value_or(*last.end - *last.start);
    if (first) {
      j.account = last.account, j.user = last.user, j.partition = last.partition;
      j.qos = last.qos, j.state = last.state, j.gpu_type = last.gpu_type;
      j.start_s = *last.start, j.end_s = *last.end, j.run_s = run, j.time_limit_s = last.limit;
      j.line = last.line;
    } else {
      j.start_s = std::min(j.start_s, *last.start);
      j.end_s = std::max(j.end_s, *last.end);
      j.run_s = std::max(j.run_s, run);
      if (last.gpu_type != j.gpu_type) j.gpu_type.clear();
    }
    j.gpus += last.gpus;
    j.nodes = first ? last.nodes : j.nodes + last.nodes;
    if (last.mixed_models) ++out.mixed_models;
    first = false;
  }
  j.first_start_s = first_start.value_or(j.start_s);
  if (j.gpus == 0) return reason = "no GPUs (CPU-only)", std::nullopt;
  if (j.gpus > limits::kMaxClusterGpus) return reason = "more GPUs than any cluster", std::nullopt;
  if (j.account.empty()) return reason = "no account", std::nullopt;
  return j;
}

}  // namespace

SacctRead read_sacct(const std::string& path) {
  PipeTable t = PipeTable::open(path, kCommand);
  const Columns c = columns(t);
  SacctRead out;
  std::vector<std::string> order;                    // job keys in first-seen order
  std::unordered_map<std::string, Pending> pending;  // key -> its rows
  std::unordered_set<std::string_view> seen_rows;    // views into t's text
  while (t.next()) {
    ++out.rows;
    const std::string_view id = t.field(c.id);
    if (id.empty()) t.fail(c.id, "a job id");
    if (id.find('.') != std::string_view::npos) {  // a step: folded into its job
      ++out.step_rows;
      continue;
    }
    if (!seen_rows.emplace(t.row()).second) {
      ++out.duplicate_rows;
      continue;
    }
    if (out.rows > limits::kMaxJobs * 4)
      throw InputError(t.where(c.id), "more than " + std::to_string(limits::kMaxJobs * 4) +
                                          " rows: dump a shorter span");
    const auto [key, component] = job_key(t, c.id, id);
    auto [it, fresh] = pending.try_emplace(key);
    if (fresh) {
      order.push_back(key);
      if (c.raw) it->second.raw_id = std::string(t.field(*c.raw));
    }
    it->second.runs.push_back(read_run(t, c, component));
  }
  for (const auto& key : order) {
    const Pending& p = pending.at(key);
    std::string reason;
    auto job = fold(key, p, out, reason);
    if (!job) {
      ++out.skipped[reason];
      continue;
    }
    if (job->runs > 1) ++out.requeued_jobs;
    if (job->components > 1) ++out.het_jobs;
    out.jobs.push_back(std::move(*job));
  }
  return out;
}

}  // namespace ds
