// deep_queue_trace: writes the deep-queue workloads of bench/deep_queue.sh (issue #27,
// docs/performance.md "Deep queues"): one tenant owning every node of a cluster (1,024 GPUs
// on 8-GPU nodes by default) and N jobs at a target offered load, as a native trace
// (OUT/jobs.csv) and its cluster file (OUT/cluster.yaml).
//
// Algorithm (only ds::Rng draws, one stream per step, so a seed gives the same files on
// every compiler and platform):
//  1. Each job's GPUs from the Venus GPU-count mix (trace/generator_calibration.hpp), its
//     duration in whole seconds from the Venus duration quantiles (the built-in generator's
//     DurationModel at the published median, unstretched), a user of 32 and a profiled
//     model (GPU utilization and memory drawn within the model's profiled range).
//  2. Span = sum(GPUs x duration) / (cluster GPUs x load): the offered load is exactly the
//     target over the submission span.
//  3. Arrivals: a Poisson process over that span (exponential gaps of mean span / N, in
//     whole milliseconds), in job order.
// At load 1 the queue comes and goes; at load 10 it grows to most of the jobs.
//
// Usage: deep_queue_trace [--jobs N] [--gpus G] [--load L] [--seed S] --out DIR
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "trace/generator_calibration.hpp"
#include "trace/generator_model.hpp"

namespace {

namespace vs = ds::venus_stats;

struct Job {
  int gpus = 1;
  long long duration_s = 1;
  int user = 0;
  std::size_t model = 0;
  int batch = 32;
  bool amp = false;
  int util = 0;
  int gmem_mib = 0;
};

std::vector<Job> draw_jobs(std::size_t n, std::uint64_t seed) {
  std::vector<double> size_weights;
  for (const auto& s : vs::kGpuMix) size_weights.push_back(s.jobs);
  const ds::gen::Categorical sizes(size_weights);
  const ds::gen::DurationModel durations(vs::kDurationQuantiles[3].seconds, 1.0);
  ds::Rng size_rng(seed * 8 + 1), dur_rng(seed * 8 + 2), user_rng(seed * 8 + 3),
      prof_rng(seed * 8 + 4);
  std::vector<Job> jobs(n);
  for (Job& j : jobs) {
    j.gpus = vs::kGpuMix[sizes.sample(size_rng)].gpus;
    j.duration_s = durations.sample(dur_rng);
    j.user = static_cast<int>(user_rng.below(32));
    j.model = prof_rng.below(vs::kModels.size());
    const auto& m = vs::kModels[j.model];
    int b = m.batch_min;
    while (b < m.batch_max && prof_rng.below(2) == 1) b *= 2;
    j.batch = b;
    j.amp = m.amp && prof_rng.below(2) == 1;
    j.util = static_cast<int>(std::lround(prof_rng.uniform(m.util_min, m.util_max)));
    j.gmem_mib = static_cast<int>(std::lround(prof_rng.uniform(m.mem_min, m.mem_max)));
  }
  return jobs;
}

void write(const std::filesystem::path& dir, const std::vector<Job>& jobs, int gpus, double load,
           std::uint64_t seed) {
  double gpu_s = 0;
  for (const Job& j : jobs)
    gpu_s += static_cast<double>(j.gpus) * static_cast<double>(j.duration_s);
  const double span_ms = gpu_s / (gpus * load) * 1000.0;
  const double mean_gap_ms = jobs.empty() ? 0 : span_ms / static_cast<double>(jobs.size());
  ds::Rng gap_rng(seed * 8 + 5);
  std::ofstream csv(dir / "jobs.csv");
  csv << "job_id,tenant,submit_s,duration_s,gpus,user,model,dataset,batch_size,amp,gpu_util,"
         "gmem_mib\n";
  long long t_ms = 0;
  char submit[32];
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    if (i > 0) t_ms += std::llround(gap_rng.exponential(mean_gap_ms));
    std::snprintf(submit, sizeof submit, "%lld.%03lld", t_ms / 1000, t_ms % 1000);
    const auto& m = vs::kModels[j.model];
    csv << 'j' << i + 1 << ",t0," << submit << ',' << j.duration_s << ',' << j.gpus << ",u"
        << j.user << ',' << m.model << ',' << m.dataset << ',' << j.batch << ',' << (j.amp ? 1 : 0)
        << ',' << j.util << ',' << j.gmem_mib << '\n';
  }
  std::ofstream yaml(dir / "cluster.yaml");
  yaml << "nodes:\n  - {count: " << gpus / vs::kGpusPerNode << ", gpus: " << vs::kGpusPerNode
       << ", tenant: t0}\ntenants:\n  - {name: t0, quota_gpus: " << gpus << "}\n";
  std::printf("%s: %zu jobs, 1 tenant, %d GPUs, load %.2f, span %.1f days\n",
              (dir / "jobs.csv").c_str(), jobs.size(), gpus, load, span_ms / 86'400'000.0);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Write a deep-queue workload: one tenant on a cluster of 8-GPU nodes, N jobs "
      "at a target offered load (native trace + cluster file)"};
  std::size_t n = 1'000'000;
  int gpus = 1024;
  double load = 1.0;
  std::uint64_t seed = 1;
  std::string out;
  app.add_option("--jobs", n, "N: jobs")->capture_default_str()->check(CLI::Range(1, 10'000'000));
  app.add_option("--gpus", gpus, "GPUs of the cluster (a multiple of 8)")
      ->capture_default_str()
      ->check(CLI::Range(8, 100'000));
  app.add_option("--load", load, "Offered load: GPU time / (GPUs x submission span)")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1000.0));
  app.add_option("--seed", seed, "Seed")->capture_default_str();
  app.add_option("--out", out, "Output folder (jobs.csv, cluster.yaml)")->required();
  CLI11_PARSE(app, argc, argv);
  if (gpus % vs::kGpusPerNode != 0) {
    std::fprintf(stderr, "deep_queue_trace: --gpus %d is not a multiple of %d\n", gpus,
                 vs::kGpusPerNode);
    return 2;
  }
  try {
    std::filesystem::create_directories(out);
    write(out, draw_jobs(n, seed), gpus, load, seed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deep_queue_trace: %s\n", e.what());
    return 2;
  }
  return 0;
}
