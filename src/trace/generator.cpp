// The built-in workload generator (algorithm in generator.hpp).
#include "trace/generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "trace/generator_calibration.hpp"
#include "trace/generator_model.hpp"

namespace ds {
namespace {

namespace vs = venus_stats;

constexpr double kDaySeconds = 86400;
constexpr double kMaxJobs = 20e6;  // refuse settings that would not fit in memory

// Independent streams per step, so that changing one step leaves the others' draws.
enum Stream : std::uint64_t { kUsers = 1, kJobs = 2, kIntensity = 3, kTimes = 4 };
Rng stream(std::uint64_t seed, Stream s) {
  Rng mix(seed * 0x2545F4914F6CDD1DULL + s);
  return Rng(mix.next());
}

struct TenantModel {
  gen::SizeModel size;
  gen::DurationModel duration{1, 1};
  std::vector<UserId> users;  // home users first
  gen::Categorical user_pick;
};

void validate(const GeneratorConfig& c) {
  if (!(c.days > 0 && c.days <= 366)) throw InputError("--days must be in (0, 366]");
  if (!(c.scale > 0 && c.scale <= 100)) throw InputError("--scale must be in (0, 100]");
  if (!(c.load > 0 && c.load <= 10)) throw InputError("--load must be in (0, 10]");
}

// Step 1: tenants and their nodes.
void build_cluster(Workload& w, double scale) {
  for (const auto& vc : vs::kVcs) {
    Tenant t;
    t.id = TenantId(static_cast<std::uint32_t>(w.tenants.size()));
    t.name = vc.name;
    const int nodes = std::max(1, static_cast<int>(std::lround(vc.nodes * scale)));
    t.quota_gpus = nodes * vs::kGpusPerNode;
    w.tenants.push_back(t);
    const std::size_t first = w.cluster.nodes.size();
    w.cluster.add_nodes(nodes, vs::kGpusPerNode, 24 * 1024, "", t.id);
    for (std::size_t k = first; k < w.cluster.nodes.size(); ++k)
      w.cluster.nodes[k].name = t.name + "-n" + std::to_string(k - first);
  }
}

// Step 2b: every user has a home tenant (home counts proportional to the published
// users per VC); the VC's other members are drawn from users homed elsewhere.
// Activity within a tenant falls off as 1 / rank (a few users submit most jobs).
void assign_users(Workload& w, std::vector<TenantModel>& models, Rng& rng) {
  const std::size_t n = vs::kVcs.size();
  int memberships = 0;
  for (const auto& vc : vs::kVcs) memberships += vc.users;
  std::vector<int> home(n);
  int homed = 0;
  for (std::size_t v = 0; v < n; ++v) {
    home[v] = std::max(1, vs::kVcs[v].users * vs::kTotalUsers / memberships);
    homed += home[v];
  }
  for (std::size_t v = 0; homed < vs::kTotalUsers; v = (v + 1) % n, ++homed) ++home[v];
  std::vector<std::size_t> home_of;
  for (std::size_t v = 0; v < n; ++v) {
    for (int k = 0; k < home[v]; ++k) {
      char name[16];
      std::snprintf(name, sizeof name, "user%03zu", home_of.size() + 1);
      models[v].users.push_back(w.intern_user(name));
      home_of.push_back(v);
    }
  }
  for (std::size_t v = 0; v < n; ++v) {
    auto& members = models[v].users;
    const auto wanted = static_cast<std::size_t>(vs::kVcs[v].users);
    for (int tries = 0; members.size() < wanted && tries < 1000; ++tries) {
      const auto u = static_cast<std::uint32_t>(rng.below(home_of.size()));
      if (home_of[u] == v || std::find(members.begin(), members.end(), UserId(u)) != members.end())
        continue;
      members.push_back(UserId(u));
    }
    std::vector<double> activity;
    for (std::size_t r = 0; r < members.size(); ++r) activity.push_back(1.0 / double(r + 1));
    models[v].user_pick = gen::Categorical(activity);
  }
}

// Hourly arrival intensity over the span (step 4), relative units.
std::vector<double> hourly_intensity(double days, Rng& rng) {
  const auto hours = static_cast<std::size_t>(std::ceil(days * 24));
  std::vector<double> rate(hours);
  double day_factor = 1;
  for (std::size_t h = 0; h < hours; ++h) {
    const std::size_t day = h / 24;
    if (h % 24 == 0) day_factor = std::exp(vs::kDayLogSigma * rng.normal());
    const double hour_factor = std::exp(vs::kHourLogSigma * rng.normal());
    rate[h] = vs::kJobsPerHourOfDay[h % 24] * vs::kWeekdayRate[day % 7] * day_factor * hour_factor;
    const double covered = std::min(1.0, days * 24 - static_cast<double>(h));
    rate[h] *= covered;  // the last hour may be cut short by the span
  }
  return rate;
}

// Sorted submit seconds of `count` events drawn from the hourly intensity.
std::vector<std::int64_t> arrival_seconds(std::size_t count, const std::vector<double>& rate,
                                          double span_s, Rng& rng) {
  gen::Categorical hour(rate);
  std::vector<std::int64_t> t(count);
  for (auto& x : t) {
    const auto h = static_cast<double>(hour.sample(rng));
    const double width = std::min(3600.0, span_s - h * 3600);  // the last hour may be cut
    x = static_cast<std::int64_t>(h * 3600 + rng.uniform() * width);
  }
  std::sort(t.begin(), t.end());
  return t;
}

FinalState draw_state(long long duration_s, Rng& rng) {
  const bool short_job = static_cast<double>(duration_s) <= vs::kShortJobSeconds;
  const double u = rng.uniform();
  const double failed = short_job ? vs::kFailedShort : vs::kFailedLong;
  const double cancelled = short_job ? vs::kCancelledShort : vs::kCancelledLong;
  if (u < failed) return FinalState::Failed;
  if (u < failed + cancelled) return FinalState::Cancelled;
  return FinalState::Completed;
}

// Step 5: a profiled configuration of `model` with utilization and memory in range.
void draw_profile(Workload& w, JobSpec& job, std::size_t model, Rng& rng) {
  const auto& m = vs::kModels[model];
  int batches = 1;
  while ((m.batch_min << batches) <= m.batch_max) ++batches;
  Profile p;
  p.model = m.model;
  p.dataset = m.dataset;
  p.batch_size = m.batch_min << rng.below(static_cast<std::uint64_t>(batches));
  p.amp = m.amp && rng.below(2) == 1;
  job.profile = w.intern_profile(p);
  job.gpu_util = std::round(rng.uniform(m.util_min, m.util_max) * 10) / 10;
  job.gpu_memory_mib = std::round(rng.uniform(m.mem_min, m.mem_max));
}

// Step 3: appends batches of jobs until their GPU-seconds reach `budget`; returns
// one past each batch's last job. A batch that would push the total past the budget
// by more than kBudgetSlack is drawn again (so one huge job near the end cannot
// overshoot the target load); after kMaxRedraws redraws in a row it stops.
std::vector<std::size_t> draw_batches(Workload& w, const std::vector<TenantModel>& models,
                                      const std::vector<double>& tenant_weight, double budget,
                                      std::uint64_t seed) {
  constexpr double kBudgetSlack = 0.01;
  constexpr int kMaxRedraws = 10000;
  gen::Categorical tenant_pick(tenant_weight);
  gen::Categorical model_pick(std::vector<double>(vs::kModels.size(), 1.0));
  Rng rng = stream(seed, kJobs);
  std::vector<std::size_t> batch_end;
  double gpu_seconds = 0;
  int redraws = 0;
  while (gpu_seconds < budget && redraws < kMaxRedraws) {
    const std::size_t v = tenant_pick.sample(rng);
    const UserId user = models[v].users[models[v].user_pick.sample(rng)];
    const int gpus = models[v].size.sample(rng);
    const std::size_t model = model_pick.sample(rng);
    const std::size_t first = w.jobs.size();
    double batch_gpu_seconds = 0;
    do {
      JobSpec job;
      job.name = std::to_string(w.jobs.size() + 1);
      job.tenant = w.tenants[v].id;
      job.user = user;
      job.gpus = gpus;
      draw_profile(w, job, model, rng);
      JobTruth truth;
      const long long d = models[v].duration.sample(rng);
      truth.work = seconds(d);
      truth.state = draw_state(d, rng);
      batch_gpu_seconds += static_cast<double>(gpus) * static_cast<double>(d);
      w.jobs.push_back(std::move(job));
      w.truth.push_back(truth);
    } while (rng.uniform() < vs::kZeroGapShare);
    if (gpu_seconds + batch_gpu_seconds > budget * (1 + kBudgetSlack)) {
      w.jobs.resize(first);
      w.truth.resize(first);
      ++redraws;
      continue;
    }
    redraws = 0;
    gpu_seconds += batch_gpu_seconds;
    batch_end.push_back(w.jobs.size());
    if (static_cast<double>(w.jobs.size()) > kMaxJobs)
      throw InputError(
          "generator settings ask for more than 20 million jobs; lower --days, "
          "--scale or --load");
  }
  return batch_end;
}

}  // namespace

std::string describe(const GeneratorConfig& c) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "seed %llu, %g days, scale %g, load %g",
                static_cast<unsigned long long>(c.seed), c.days, c.scale, c.load);
  return buf;
}

Workload generate_workload(const GeneratorConfig& config) {
  validate(config);
  Workload w;
  w.name = "generated (" + describe(config) + ")";
  w.format = "generated";
  build_cluster(w, config.scale);

  // Step 2: per-tenant models and tenant weights.
  const std::size_t n = vs::kVcs.size();
  std::vector<TenantModel> models(n);
  std::vector<double> tenant_weight(n);
  for (std::size_t v = 0; v < n; ++v) {
    const auto& vc = vs::kVcs[v];
    const double full_gpus = vc.nodes * vs::kGpusPerNode;
    const double gpu_s_per_job =
        vc.offered_load * full_gpus * vs::kTraceDays * kDaySeconds / vc.jobs;
    models[v].size =
        gen::SizeModel::calibrate(vc.multi_share, vc.mean_gpus, w.tenants[v].quota_gpus);
    models[v].duration = gen::DurationModel::calibrate(vc.median_s, gpu_s_per_job / vc.mean_gpus);
    const double expected = models[v].size.mean() * models[v].duration.mean();
    tenant_weight[v] = vc.offered_load * w.tenants[v].quota_gpus / expected;
  }
  Rng user_rng = stream(config.seed, kUsers);
  assign_users(w, models, user_rng);

  // Step 3: batches of jobs until the GPU-seconds budget is spent.
  const double span_s = config.days * kDaySeconds;
  const double budget = config.load * w.cluster.total_gpus() * span_s;
  const auto batch_end = draw_batches(w, models, tenant_weight, budget, config.seed);

  // Step 4: submit times, in batch order.
  Rng intensity_rng = stream(config.seed, kIntensity);
  Rng time_rng = stream(config.seed, kTimes);
  const auto times = arrival_seconds(batch_end.size(), hourly_intensity(config.days, intensity_rng),
                                     span_s, time_rng);
  std::size_t job = 0;
  for (std::size_t b = 0; b < batch_end.size(); ++b)
    for (; job < batch_end[b]; ++job) w.jobs[job].submit = seconds(times[b]);

  w.notes.push_back("built-in workload: " + describe(config) + "; " +
                    std::to_string(w.jobs.size()) + " jobs on " +
                    std::to_string(w.cluster.total_gpus()) + " GPUs in " +
                    std::to_string(w.tenants.size()) + " tenants");
  w.finalize();
  return w;
}

}  // namespace ds
