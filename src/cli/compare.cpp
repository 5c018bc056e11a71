#include "cli/compare.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "cli/output_rules.hpp"
#include "cli/report_command.hpp"
#include "core/atomic_file.hpp"
#include "core/checked.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/manifest.hpp"
#include "core/output_folder.hpp"
#include "registry/registry.hpp"
#include "trace/aux_files.hpp"

namespace ds {
namespace {

struct Setting {
  std::string policy;  // empty: every policy that reads the key
  std::string key;
  std::string key_value;
};

std::vector<Setting> parse_sets(const std::vector<std::string>& sets) {
  std::vector<Setting> out;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    const auto colon = s.find(':');
    Setting st;
    if (colon != std::string::npos && (eq == std::string::npos || colon < eq)) {
      st.policy = s.substr(0, colon);
      st.key_value = s.substr(colon + 1);
    } else {
      st.key_value = s;
    }
    PolicyOptions check;
    check.set(st.key_value);  // throws on a malformed entry
    st.key = check.values().begin()->first;
    out.push_back(std::move(st));
  }
  return out;
}

std::vector<Time> oracle_of(const Workload& w) {
  std::vector<Time> out;
  out.reserve(w.truth.size());
  for (const auto& t : w.truth) out.push_back(t.work);
  return out;
}

// The keys `policy` reads among `options` (builds it once to find out).
std::vector<std::string> keys_read(const Workload& w, const PolicyInfo& info,
                                   const PolicyOptions& options, const AuxData& aux) {
  const std::vector<Time> oracle = info.oracle ? oracle_of(w) : std::vector<Time>{};
  PolicyContext ctx{w.cluster, w.tenants, options, oracle, &aux};
  info.make(ctx);
  const auto unused = options.unused();
  std::vector<std::string> read;
  for (const auto& [k, v] : options.values())
    if (std::find(unused.begin(), unused.end(), k) == unused.end()) read.push_back(k);
  return read;
}

std::string load_label(double load) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", load);
  return buf;
}

namespace fs = std::filesystem;

// Step 3: distinct folder names, so that no two threads ever write the same folder.
void check_unique_runs(const CompareRequest& req) {
  std::map<std::string, double> labels;  // folder label -> load
  for (double l : req.loads)
    if (auto [it, fresh] = labels.emplace(load_label(l), l); !fresh)
      throw InputError("--loads: " + load_label(it->second) +
                       (it->second == l ? " is given twice"
                                        : " and " + std::to_string(l) +
                                              " give the same run folder; loads must differ "
                                              "in their first 6 significant digits"));
  for (std::size_t i = 0; i < req.policies.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (req.policies[i] == req.policies[k])
        throw InputError("policy " + quote_input(req.policies[i]) + " is given twice");
}

}  // namespace

void scale_load_checked(Workload& w, double factor) {
  if (!(factor >= limits::kMinFactor && factor <= limits::kMaxFactor))
    throw InputError("load factor " + quote_input(load_label(factor)) + ": expected a number in " +
                     range_text(limits::kMinFactor, limits::kMaxFactor));
  if (!w.jobs.empty()) {
    const double first = static_cast<double>(w.jobs.front().submit);
    const double span = static_cast<double>(w.jobs.back().submit) - first;
    if (first + span / factor > static_cast<double>(limits::kMaxAbsTime))
      throw InputError("load factor " + load_label(factor) +
                       " stretches the trace's submit times beyond 100 years from 1970");
  }
  w.scale_load(factor);
}

std::string run_name(const std::string& policy, double load) {
  return policy + "@" + load_label(load);
}

void override_checkpoint_interval(Workload& workload, double secs) {
  if (secs < 0) return;
  const auto interval = seconds_to_ms(secs, 0, limits::kMaxInterval);
  if (!interval)
    throw InputError("--checkpoint-interval: expected seconds in " +
                     range_text(0, static_cast<double>(limits::kMaxInterval / kSecond)));
  for (auto& t : workload.tenants) t.checkpoint_interval = *interval;
}

std::vector<std::string> main_policies() {
  static const char* const kMain[] = {"fifo-isolated", "fifo-pooled", "sjf",   "srtf",     "qssf",
                                      "tiresias",      "lucid",       "kueue", "deepshare"};
  std::vector<std::string> out;
  for (const char* p : kMain)
    if (find_policy(p)) out.emplace_back(p);
  return out;
}

std::vector<PolicyOptions> options_per_policy(const Workload& w, const CompareRequest& req,
                                              const AuxData& aux) {
  const std::vector<Setting> sets = parse_sets(req.sets);
  for (const auto& s : sets)
    if (!s.policy.empty() &&
        std::find(req.policies.begin(), req.policies.end(), s.policy) == req.policies.end())
      throw InputError("--set " + quote_input(s.policy + ":" + s.key_value) + ": " +
                       quote_input(s.policy) + " is not among --policies");
  std::map<std::string, bool> global_read;  // key -> read by some policy
  for (const auto& s : sets)
    if (s.policy.empty()) global_read[s.key] = false;

  std::vector<PolicyOptions> out;
  for (const auto& name : req.policies) {
    const PolicyInfo* info = find_policy(name);
    if (!info) make_policy(name, PolicyContext{w.cluster, w.tenants, PolicyOptions{}});
    // Global settings first, so that a setting for this policy of the same key wins.
    PolicyOptions probe;
    std::map<std::string, bool> own_key;
    for (const auto& s : sets)
      if (s.policy.empty()) probe.set(s.key_value);
    for (const auto& s : sets)
      if (s.policy == name) {
        probe.set(s.key_value);
        own_key[s.key] = true;
      }
    std::vector<std::string> read;
    if (!global_read.empty()) read = keys_read(w, *info, probe, aux);
    PolicyOptions options;
    for (const auto& [k, v] : probe.values()) {
      const bool is_read = std::find(read.begin(), read.end(), k) != read.end();
      if (is_read && global_read.count(k)) global_read[k] = true;
      // A global key this policy does not read is dropped; its own keys always stay
      // (make_policy names any it does not read).
      if (own_key.count(k) || is_read) options.set(k + "=" + v);
    }
    out.push_back(std::move(options));
  }
  for (const auto& [key, read] : global_read)
    if (!read)
      throw InputError("--set " + quote_input(key) + ": none of the compared policies reads it");
  return out;
}

namespace {

// The request's own checks, before anything is read or run.
void check_compare_request(const CompareRequest& req) {
  if (req.policies.empty()) throw InputError("compare: no policies given (--policies a,b,c)");
  if (req.loads.empty()) throw InputError("compare: no load factors given (--loads 1,1.5)");
  for (double l : req.loads)
    if (!(l >= limits::kMinFactor && l <= limits::kMaxFactor))
      throw InputError("compare: load factors must be in " +
                       range_text(limits::kMinFactor, limits::kMaxFactor) + ", got " +
                       load_label(l));
  if (req.by_policy_only && req.loads.size() != 1)
    throw InputError("compare: naming runs by policy alone needs exactly one load");
  check_unique_runs(req);
}

// Step 2: one copy of `workload` per load factor, in request order.
std::vector<Workload> scaled_workloads(const Workload& workload, const std::vector<double>& loads) {
  std::vector<Workload> scaled;
  scaled.reserve(loads.size());
  for (double l : loads) {
    scaled.push_back(workload);
    scale_load_checked(scaled.back(), l);
  }
  return scaled;
}

struct Run {
  std::size_t policy, load;
  RunOutcome outcome;
  std::exception_ptr error;
};

// Step 3: policies x loads, in that order.
std::vector<Run> runs_of(const CompareRequest& req) {
  std::vector<Run> runs;
  for (std::size_t p = 0; p < req.policies.size(); ++p)
    for (std::size_t l = 0; l < req.loads.size(); ++l) runs.push_back({p, l, {}, nullptr});
  return runs;
}

std::string name_of(const CompareRequest& req, const Run& r) {
  const std::string& policy = req.policies[r.policy];
  return req.by_policy_only ? policy : run_name(policy, req.loads[r.load]);
}

// What every run shares: the request, the per-policy options and scaled workloads, the
// staged folder.
struct RunInputs {
  const CompareRequest& req;
  const std::vector<PolicyOptions>& options;
  const std::vector<Workload>& scaled;
  const AuxData& aux;
  const OutputFolder& out;
  const std::string& digest;
  const std::string& trace_label;
};

// One run, into r.outcome, or its error into r.error.
void simulate_run(const RunInputs& in, Run& r) {
  try {
    RunRequest rr;
    rr.policy = in.req.policies[r.policy];
    rr.options = in.options[r.policy];
    rr.load_factor = in.req.loads[r.load];
    rr.seed = in.req.seed;
    rr.out_dir = in.out.path(name_of(in.req, r)).string();
    rr.command = in.req.command;
    rr.workload_digest = in.digest;
    rr.progress = false;
    rr.label = name_of(in.req, r);
    rr.aux = &in.aux;
    rr.truth = in.req.truth;
    r.outcome = run_simulation(in.scaled[r.load], rr, in.trace_label);
  } catch (...) {
    r.error = std::current_exception();
  }
}

// Step 3: the thread pool; each thread takes the next run in order until none is left.
void simulate_all(const RunInputs& in, std::vector<Run>& runs) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex print;
  auto worker = [&] {
    for (std::size_t i = next++; i < runs.size(); i = next++) {
      Run& r = runs[i];
      simulate_run(in, r);
      if (in.req.progress) {
        std::lock_guard<std::mutex> lock(print);
        std::fprintf(stderr, "[%zu/%zu] %s %s\n", ++done, runs.size(), name_of(in.req, r).c_str(),
                     r.error ? "failed" : "done");
      }
    }
  };
  unsigned threads = in.req.threads ? in.req.threads : std::thread::hardware_concurrency();
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(runs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

// Step 4: the rows of the runs that succeeded, by run index, and their folders into
// `folders`. A failed run rethrows its error, or, with `failed`, is named there.
std::vector<ComparisonRow> rows_of(const CompareRequest& req, std::vector<Run>& runs,
                                   std::vector<std::string>* failed,
                                   std::vector<std::string>& folders) {
  std::vector<ComparisonRow> rows;
  for (auto& r : runs) {
    if (r.error && !failed) std::rethrow_exception(r.error);
    if (r.error) {
      try {
        std::rethrow_exception(r.error);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "deepshare: %s failed: %s\n", name_of(req, r).c_str(), e.what());
      }
      failed->push_back(name_of(req, r));
      continue;
    }
    folders.push_back(name_of(req, r));
    ComparisonRow row;
    row.policy = req.policies[r.policy];
    if (!req.by_policy_only) row.load = req.loads[r.load];
    row.metrics = std::move(r.outcome.metrics);
    row.wall_seconds = r.outcome.wall_seconds;
    rows.push_back(std::move(row));
  }
  return rows;
}

// Step 5: the extra files and manifest.json (after comparison.csv / .md, which it lists).
void write_compare_manifest(const OutputFolder& out, const Workload& workload,
                            const CompareRequest& req, const std::string& trace_label,
                            const std::string& digest, std::vector<std::string> folders) {
  Manifest m;
  m.kind = "comparison";
  m.command = req.command;
  m.version = DEEPSHARE_VERSION;
  m.identity = {{"trace", trace_label},
                {"format", workload.format},
                {"workload_digest", digest},
                {"jobs", workload.jobs.size()},
                {"tenants", workload.tenants.size()},
                {"gpus", workload.cluster.total_gpus()},
                {"policies", req.policies},
                {"loads", req.loads},
                {"seed", req.seed}};
  std::vector<std::string> names = {"comparison.csv", "comparison.md"};
  for (const auto& [name, text] : req.extra_files) {
    write_file_atomic(out.path(name).string(), text);
    names.push_back(name);
  }
  for (const auto& name : names) {
    ManifestEntry e{name, 0, ""};
    e.digest = file_digest(out.path(name), &e.bytes);
    m.files.push_back(std::move(e));
  }
  m.folders = std::move(folders);
  write_file_atomic(out.path(kManifestName).string(), m.json());
}

}  // namespace

std::vector<ComparisonRow> run_compare(const Workload& workload, const CompareRequest& req,
                                       const std::string& trace_label,
                                       std::vector<std::string>* failed) {
  check_compare_request(req);
  const AuxData aux = load_aux(workload.aux_dir);  // read once, shared by every run
  const std::vector<PolicyOptions> options = options_per_policy(workload, req, aux);
  const std::vector<Workload> scaled = scaled_workloads(workload, req.loads);
  // The last check before anything is written: the folder, locked, staged (complete or
  // absent: core/output_folder.hpp).
  OutputFolder out(req.out_dir, comparison_rules(req.force, req.inputs));
  const std::string digest = workload.digest();

  std::vector<Run> runs = runs_of(req);
  simulate_all(RunInputs{req, options, scaled, aux, out, digest, trace_label}, runs);
  std::vector<std::string> folders;
  std::vector<ComparisonRow> rows = rows_of(req, runs, failed, folders);
  write_comparison(out.dir().string(), rows,
                   req.title.empty() ? "DeepShare comparison: " + trace_label : req.title);
  write_compare_manifest(out, workload, req, trace_label, digest, std::move(folders));
  // The report reads the runs back through their manifests: a last check of the outputs.
  if (req.html_report) write_report_after_runs(out.dir().string(), req.out_dir);
  out.commit();
  return rows;
}

}  // namespace ds
