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
// A job may exceed its tenant's whole GPU-seconds budget by this share at most.
constexpr double kBudgetSlack = 0.01;

// Independent streams per step, so that changing one step leaves the others' draws.
enum Stream : std::uint64_t { kUsers = 1, kJobs = 2, kIntensity = 3, kTimes = 4 };
Rng stream(std::uint64_t seed, Stream s) {
  Rng mix(seed * 0x2545F4914F6CDD1DULL + s);
  return Rng(mix.next());
}

struct TenantModel {
  gen::SizeModel size;
  gen::DurationModel single{1, 1};  // durations of single-GPU jobs
  gen::DurationModel multi{1, 1};   // durations of multi-GPU jobs
  double expected_gpu_seconds = 1;  // per job
  std::vector<UserId> users;        // home users first
  gen::Categorical user_pick;
};

void validate(const GeneratorConfig& c) {
  if (!(c.days > 0 && c.days <= 366)) throw InputError("--days must be in (0, 366]");
  if (!(c.scale > 0 && c.scale <= 100)) throw InputError("--scale must be in (0, 100]");
  if (!(c.load > 0 && c.load <= 10)) throw InputError("--load must be in (0, 10]");
  if (!(c.large_jobs >= 1 && c.large_jobs <= 16)) throw InputError("large_jobs must be in [1, 16]");
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
    w.cluster.add_nodes(nodes, vs::kGpusPerNode, kDefaultGpuMemoryMib, "", t.id);
    for (std::size_t k = first; k < w.cluster.nodes.size(); ++k)
      w.cluster.nodes[k].name = t.name + "-n" + std::to_string(k - first);
  }
}

// Expected GPU-seconds of one job of a tenant with `budget`: a job's duration is drawn
// again while its GPU-seconds exceed budget x (1 + kBudgetSlack), so durations are
// truncated at that cap / GPUs.
struct Expected {
  double single_gpu_s = 0;  // of single-GPU jobs
  double gpu_s = 0;         // of all jobs
};

Expected expected(const TenantModel& m, const gen::DurationModel& single,
                  const gen::DurationModel& multi, double budget) {
  const double cap = budget * (1 + kBudgetSlack);
  Expected e;
  e.single_gpu_s = e.gpu_s = (1 - m.size.multi_share()) * single.mean(cap);
  const auto& sizes = m.size.multi_sizes();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double g = sizes[i];
    e.gpu_s += m.size.multi_share() * m.size.multi_probs()[i] * g * multi.mean(cap / g);
  }
  return e;
}

// Step 2: each tenant's GPU-count and duration models and expected GPU-seconds per kept
// job, given its budget (so that truncation at the budget is accounted for).
// Single-GPU jobs share one upper-tail stretch `rho` across tenants: STATS.md gives
// them 56.5 % of the jobs but only 4.1 % of the GPU time. Given rho, each tenant's
// multi-GPU stretch is set so that its GPU-seconds per kept job match its published
// GPU-hours per job (for the same mean GPUs), so that its job rate follows the
// published one; rho itself is found by bisection on the expected single-GPU share of
// GPU time over all tenants.
void calibrate_tenants(const Workload& w, const std::vector<double>& budget, double large_jobs,
                       std::vector<TenantModel>& models) {
  const std::size_t n = vs::kVcs.size();
  for (std::size_t v = 0; v < n; ++v) {
    // large_jobs scales the mean of the multi-GPU jobs: (mean - single share) x factor.
    const double single = 1 - vs::kVcs[v].multi_share;
    const double mean = single + (vs::kVcs[v].mean_gpus - single) * large_jobs;
    models[v].size =
        gen::SizeModel::calibrate(vs::kVcs[v].multi_share, mean, w.tenants[v].quota_gpus);
  }
  auto fit = [&](double rho) {
    double single_gpu_s = 0, all_gpu_s = 0;
    for (std::size_t v = 0; v < n; ++v) {
      const auto& vc = vs::kVcs[v];
      auto& m = models[v];
      const double gpu_s_per_job =
          vc.offered_load * vc.nodes * vs::kGpusPerNode * vs::kTraceDays * kDaySeconds / vc.jobs;
      // Per-GPU durations as published: a tenant with larger jobs has longer GPU-time.
      const double target = gpu_s_per_job / vc.mean_gpus * m.size.mean();
      m.single = gen::DurationModel(vc.median_s, rho);
      if (!m.size.multi_sizes().empty()) {
        m.multi = gen::DurationModel::calibrate(vc.median_s, target, [&](const auto& d) {
          return expected(m, m.single, d, budget[v]).gpu_s;
        });
      } else {
        m.single = gen::DurationModel::calibrate(
            vc.median_s, target, [&](const auto& d) { return expected(m, d, d, budget[v]).gpu_s; });
      }
      const Expected e = expected(m, m.single, m.multi, budget[v]);
      m.expected_gpu_seconds = e.gpu_s;
      single_gpu_s += budget[v] * e.single_gpu_s / e.gpu_s;
      all_gpu_s += budget[v];
    }
    return single_gpu_s / all_gpu_s;
  };
  double lo = 0.05, hi = 4.0;
  for (int it = 0; it < 30; ++it) {
    const double mid = 0.5 * (lo + hi);
    (fit(mid) < vs::kSingleGpuTimeShare ? lo : hi) = mid;
  }
  fit(0.5 * (lo + hi));
}

// Step 3: each tenant's GPU-seconds budget, in proportion to its published offered
// load x its GPUs, adding up to load x span x all GPUs (`load_span` = load x span).
std::vector<double> tenant_budgets(const Workload& w, double load_span) {
  double weighted = 0;
  for (std::size_t v = 0; v < vs::kVcs.size(); ++v)
    weighted += vs::kVcs[v].offered_load * w.tenants[v].quota_gpus;
  std::vector<double> budget;
  for (std::size_t v = 0; v < vs::kVcs.size(); ++v)
    budget.push_back(load_span * w.cluster.total_gpus() * vs::kVcs[v].offered_load *
                     w.tenants[v].quota_gpus / weighted);
  return budget;
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

// Submit seconds of `count` events drawn i.i.d. from the hourly intensity.
std::vector<std::int64_t> arrival_seconds(std::size_t count, const std::vector<double>& rate,
                                          double span_s, Rng& rng) {
  gen::Categorical hour(rate);
  std::vector<std::int64_t> t(count);
  for (auto& x : t) {
    const auto h = static_cast<double>(hour.sample(rng));
    const double width = std::min(3600.0, span_s - h * 3600);  // the last hour may be cut
    x = static_cast<std::int64_t>(h * 3600 + rng.uniform() * width);
  }
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

// Step 3: appends batches of tenant v's jobs until their GPU-seconds reach `budget`
// (recording one past each batch's last job). A job larger than the whole budget
// (x (1 + kBudgetSlack)) could never fit: its duration is drawn again. The batch that
// crosses the budget is kept only when that brings the total closer to the budget.
void draw_tenant_jobs(Workload& w, const TenantModel& m, std::size_t v, double budget, Rng& rng,
                      std::vector<std::size_t>& batch_end) {
  constexpr int kMaxRedraws = 1000;
  static const gen::Categorical model_pick(std::vector<double>(vs::kModels.size(), 1.0));
  const double cap = budget * (1 + kBudgetSlack);
  // A budget below one GPU-second (a tiny --load or --days) holds no job at all: even the
  // smallest job, 1 GPU for 1 s, would exceed it.
  if (cap < 1) return;
  double used = 0;
  while (used < budget) {
    const UserId user = m.users[m.user_pick.sample(rng)];
    // A size whose shortest job (1 s) exceeds the cap is drawn again, then becomes 1 GPU
    // (cap >= 1): every batch then fits, so the loop ends after at most `budget` batches.
    int gpus = m.size.sample(rng);
    for (int k = 0; gpus > cap && k < kMaxRedraws; ++k) gpus = m.size.sample(rng);
    if (gpus > cap) gpus = 1;
    const std::size_t model = model_pick.sample(rng);
    const std::size_t first = w.jobs.size();
    const gen::DurationModel& duration = gpus == 1 ? m.single : m.multi;
    double batch_gpu_seconds = 0;
    do {
      JobSpec job;
      job.tenant = w.tenants[v].id;
      job.user = user;
      job.gpus = gpus;
      draw_profile(w, job, model, rng);
      long long d = duration.sample(rng);
      auto too_long = [&] { return static_cast<double>(gpus) * static_cast<double>(d) > cap; };
      for (int k = 0; too_long() && k < kMaxRedraws; ++k) d = duration.sample(rng);
      if (too_long()) d = std::max(1LL, static_cast<long long>(cap / gpus));  // gpus <= cap
      JobTruth truth;
      truth.work = seconds(d);
      truth.state = draw_state(d, rng);
      batch_gpu_seconds += static_cast<double>(gpus) * static_cast<double>(d);
      w.jobs.push_back(std::move(job));
      w.truth.push_back(truth);
    } while (rng.uniform() < vs::kBatchContinue);
    if (used + batch_gpu_seconds > budget && used + batch_gpu_seconds - budget > budget - used) {
      w.jobs.resize(first);  // the crossing batch overshoots more than it would fill
      w.truth.resize(first);
      break;
    }
    used += batch_gpu_seconds;
    batch_end.push_back(w.jobs.size());
    if (static_cast<double>(w.jobs.size()) > kMaxJobs)
      throw InputError(
          "generator settings ask for more than 20 million jobs; lower --days, --scale or "
          "--load");
  }
}

}  // namespace

std::string describe(const GeneratorConfig& c) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "seed %llu, %g days, scale %g, load %g",
                static_cast<unsigned long long>(c.seed), c.days, c.scale, c.load);
  std::string out = buf;
  if (c.large_jobs != 1) {
    std::snprintf(buf, sizeof buf, ", large jobs x%g", c.large_jobs);
    out += buf;
  }
  return out;
}

Workload generate_workload(const GeneratorConfig& config) {
  validate(config);
  Workload w;
  w.name = "generated (" + describe(config) + ")";
  w.format = "generated";
  build_cluster(w, config.scale);

  // Step 2: per-tenant models and users.
  const std::size_t n = vs::kVcs.size();
  const double span_s = config.days * kDaySeconds;
  const std::vector<double> budget = tenant_budgets(w, config.load * span_s);
  std::vector<TenantModel> models(n);
  calibrate_tenants(w, budget, config.large_jobs, models);
  Rng user_rng = stream(config.seed, kUsers);
  assign_users(w, models, user_rng);

  // Step 3: each tenant's jobs until its GPU-seconds budget is spent.
  Rng rng = stream(config.seed, kJobs);
  std::vector<std::size_t> batch_end;
  for (std::size_t v = 0; v < n; ++v) draw_tenant_jobs(w, models[v], v, budget[v], rng, batch_end);

  // Step 4: submit times, i.i.d. per batch; finalize() orders the jobs by them.
  Rng intensity_rng = stream(config.seed, kIntensity);
  Rng time_rng = stream(config.seed, kTimes);
  const auto times = arrival_seconds(batch_end.size(), hourly_intensity(config.days, intensity_rng),
                                     span_s, time_rng);
  std::size_t job = 0;
  for (std::size_t b = 0; b < batch_end.size(); ++b)
    for (; job < batch_end[b]; ++job) w.jobs[job].submit = seconds(times[b]);

  if (w.jobs.empty())
    throw InputError("generator settings (" + describe(config) +
                     ") give no job: every tenant's budget is below one GPU-second; raise "
                     "--days, --load or --scale");
  w.notes.push_back(
      "synthetic workload calibrated from published Venus September 2020 statistics "
      "(sizes, durations, arrivals and profiles are random draws, no trace rows)");
  w.finalize();
  for (auto& j : w.jobs) j.name = std::to_string(j.id.index() + 1);  // names in submit order
  return w;
}

}  // namespace ds
