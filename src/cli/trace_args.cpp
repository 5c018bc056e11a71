#include "cli/trace_args.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "cli/compare.hpp"
#include "cli/validators.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "core/spec.hpp"
#include "trace/generator.hpp"
#include "trace/load.hpp"

namespace ds {

std::string format_list() {
  std::string formats;
  for (const auto& f : trace_formats()) formats += "\n  " + f.name + ": " + f.summary;
  return formats;
}

namespace {

// --generated "seed=2,days=7,scale=1,load=1.3,large_jobs=2" (any subset, any order; each
// key once, every value range-checked: core/spec.hpp; generate_workload checks the rest).
GeneratorConfig parse_generated(const std::string& spec) {
  const KeyValueSpec kv("--generated", spec, {"seed", "days", "scale", "load", "large_jobs"});
  GeneratorConfig c;
  c.seed = kv.unsigned_in("seed", c.seed, 0, UINT64_MAX, "a seed");
  c.days = kv.number_in("days", c.days, 0, 366, "days");
  c.scale = kv.number_in("scale", c.scale, 0, 100, "a scale");
  c.load = kv.number_in("load", c.load, 0, 10, "a load");
  c.large_jobs = kv.number_in("large_jobs", c.large_jobs, 1, 16, "a factor");
  return c;
}

void jitter(Workload& w, const TraceArgs& a) {
  if (a.jitter_s < 1) return;
  w.jitter_submits(static_cast<Time>(a.jitter_s) * kSecond, a.jitter_seed);
  w.notes.push_back("every submission delayed by a random 0.." +
                    std::to_string(static_cast<Time>(a.jitter_s)) + " s (--jitter, seed " +
                    std::to_string(a.jitter_seed) + ")");
}

}  // namespace

std::string TraceArgs::label() const {
  std::string l =
      generated.empty() ? trace : "generated (" + describe(parse_generated(generated)) + ")";
  if (jitter_s >= 1)
    l += " (--jitter " + std::to_string(static_cast<Time>(jitter_s)) + ", seed " +
         std::to_string(jitter_seed) + ")";
  return l;
}

void add_trace_options(CLI::App* cmd, TraceArgs& a, bool workload_options) {
  auto* trace =
      cmd->add_option("--trace", a.trace, "Trace file (or folder, for Lucid's per-VC logs)")
          ->check(non_empty_path());
  cmd->add_option("--format", a.format, "Trace format:" + format_list())->capture_default_str();
  cmd->add_option("--cluster", a.cluster,
                  "YAML file with nodes and tenants (replaces those derived from the trace)");
  cmd->add_option("--columns", a.columns,
                  "Native format: FIELD=COLUMN mappings for CSVs with other headers");
  cmd->add_option("--aux", a.aux,
                  "Folder of auxiliary inputs: measured colocation pairs (colocate_info.csv, "
                  "single_data.csv: sharing ground truth and interference model) and Lucid's "
                  "estimate and forecast files. Default: the trace's aux/ folder when it has "
                  "one; 'none': no auxiliary inputs");
  cmd->add_flag("--no-profiles", a.no_profiles,
                "Drop every job's workload profile, GPU utilization and GPU memory (as on a "
                "cluster without profiling data): no policy can share a GPU");
  if (!workload_options) {
    trace->required();
    return;
  }
  cmd->add_option("--generated", a.generated,
                  "Use the built-in workload instead of --trace: KEY=VALUE,... of seed, days, "
                  "scale, load, large_jobs (e.g. seed=2,load=1.3,large_jobs=2; docs/workload.md)")
      ->excludes(trace);
  cmd->add_option("--checkpoint-interval", a.checkpoint_interval,
                  "Checkpoint interval of every tenant in seconds (0: at preemption, as Lucid)")
      ->check(number_in(0, static_cast<double>(limits::kMaxInterval / kSecond)));
  cmd->add_option("--fit-load", a.fit_load,
                  "Resize the cluster (every owner's nodes and quotas alike) so that the "
                  "offered load is about this, e.g. 0.9 for openb's mostly idle node list")
      ->check(number_in(limits::kMinFactor, limits::kMaxFactor));
  cmd->add_option("--jitter", a.jitter_s,
                  "Delay every submission by a random 0..SECONDS (whole seconds, before "
                  "--loads; the order of jobs is kept): the same workload observed again. "
                  "A run moves by several per cent with any early change, so compare "
                  "ensembles over --jitter-seed values (scripts/scenarios.py does; "
                  "docs/results.md)")
      ->check(number_in(0, static_cast<double>(limits::kMaxInterval / kSecond)));
  cmd->add_option("--jitter-seed", a.jitter_seed, "Seed of --jitter")
      ->capture_default_str()
      ->check(seed_value());
}

Workload load_workload(const TraceArgs& a) {
  if (a.trace.empty() == a.generated.empty())
    throw InputError("give either --trace FILE or --generated SPEC");
  if (!a.generated.empty()) {
    Workload w = generate_workload(parse_generated(a.generated));
    if (a.fit_load > 0) w.fit_cluster_to_load(a.fit_load);
    if (a.no_profiles) drop_profiles(w);
    jitter(w, a);
    for (const auto& n : w.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
    override_checkpoint_interval(w, a.checkpoint_interval);
    return w;
  }
  LoadOptions lo;
  lo.format = a.format;
  lo.cluster_file = a.cluster;
  lo.columns = a.columns;
  lo.fit_load = a.fit_load;
  lo.profiles = !a.no_profiles;
  Workload w = load_trace(a.trace, lo);
  if (a.aux == "none") {
    w.aux_dir.clear();
  } else if (!a.aux.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(a.aux, ec))
      throw InputError("--aux " + quote_input(a.aux) + ": not a folder");
    w.aux_dir = a.aux;
  }
  jitter(w, a);
  for (const auto& n : w.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  override_checkpoint_interval(w, a.checkpoint_interval);
  return w;
}

}  // namespace ds
