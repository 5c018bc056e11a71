// lucid — Lucid's non-intrusive GPU sharing scheduler.
//
// Source: Hu et al., "Lucid: A Non-intrusive, Scalable and Interpretable Scheduler for
// Deep Learning Training Jobs", ASPLOS'23; artifact S-Lab-System-Group/Lucid @63685a3:
// simulation/policy/lucid.py (Lucid.simulate), policy/placer/consolidateWithShare.py,
// profiler/lgf.py, estimator/estimator.py (CombinedEstimator), updater.py, utils.py.
// Profiling stage: lucid_profiler.hpp; forecast, sharescore and pairing: lucid_sharing.hpp.
//
// Assumptions:
//  - Each tenant is a virtual cluster (VC) scheduled alone on the nodes it owns
//    (`scope=isolated`, Lucid's setting) minus the profiler's nodes; `scope=pooled` runs one
//    queue over every node (a cluster whose nodes no tenant owns is always one pool).
//  - A job's priority is its estimated GPU time: estimated duration x GPUs, fixed when it
//    enters its VC queue. Fidelity mode reads Lucid's own estimates (EBM, weekly retrained;
//    negative values become 1000 s, as CombinedEstimator does); normal mode asks the
//    online RuntimePredictor (never the true duration), floored at the time the job
//    already ran in the profiler.
//  - Sharing is Lucid's: at most two jobs per GPU, same GPU count, the partner's exact GPUs.
//    The policy never predicts speeds; what sharing costs is the simulator's ground truth.
//
// Algorithm (one cycle at time t; Lucid ticks every second, we run at events and at the
// times Lucid's periodic checks can change a decision):
//  1. Finished jobs leave; a partner of a finished job runs alone again (speed_recover),
//     except, in fidelity mode, Lucid's quirk: when the job that ran first ends first, its
//     partner is never paired again (cluster.py compares a job id with the job dict).
//  2. Arrivals of <= 8 GPUs go to the profiler queue, larger ones to their VC queue.
//  3. Profiler (lucid_profiler.hpp): stop runs at the limit (-> VC queue), start LGF.
//  4. Each VC queue is ordered by (priority, arrival). PAS switch (lucid_sharing.hpp):
//     - off: start jobs in order with consolidate placement; stop at the first that does
//       not fit (head-of-line);
//     - on: for every queued job in order: a job of <= 8 GPUs first looks for a partner
//       (pairing rule) and shares its GPUs if one exists - even when free GPUs exist;
//       otherwise (and for larger jobs) consolidate placement; a job that does not fit
//       is skipped (implicit backfill).
//  5. Profiler scaling (steps 3-4 of lucid_profiler.hpp); a donor VC gains or loses its
//     elastic node and is re-run when it gains it.
//  6. Wake at the next profiler limit, scaling check or forecast-bin boundary.
// Cost: a cycle runs step 4 only in the VCs where something it looks at changed (queue,
// running jobs, their nodes' free GPUs, the sharing switch); elsewhere it would repeat
// itself. The free map is kept across cycles, each VC an indexed node set of it.
//
// Options (--set): fidelity=lucid|off, scope=isolated|pooled,
// estimates=ebm|lgb|predictor, predictor=KIND, forecast=file|online, sharing=pas|always|never,
// profiler=on|off, profiler_units=auto|N (auto: the cluster's GPUs / 1,080, rounded).
// `fidelity=lucid` = isolated VCs + Lucid's estimate and forecast files from the aux folder (`--aux
// DIR`, default the trace's; Venus_Sept_ebm_weekly_updated.csv, Venus_throughput_pred.csv), handed
// over as AuxData values + its profiler nodes (vc8Gr, vcefl, elastic vcYVn) + the partner-recovery
// quirk.
//
// Deliberate differences from the artifact (docs/baselines.md, "lucid"):
//  - Causal profiler (see lucid_profiler.hpp): a job enters its VC after profiling, not at
//    its submit time; its restart costs the simulator's restart overhead (40 s).
//  - Event-driven time: a job ends at start + duration (Lucid's 1 s tick ends it 1 s later).
//  - Summary reports Lucid's metric definitions next to ours: lucid_avg_queue_s = profiler
//    queue + VC wait; lucid_avg_jct_s excludes the profiling stage (from VC entry).
//  - The elastic profiler node is lent only while idle in the donor VC (Lucid adds it
//    regardless; the donor then silently keeps its node and may even gain one).
//  - "Little influence" (1/1 speeds for NeuMF, ResNet50, BERT, Transformer pairs) is
//    ground truth, not policy: lucid_colocated_speed() gives it to tests that want it.
//  - A job larger than its VC is rejected at arrival (Lucid would never terminate).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "baselines/lucid_profiler.hpp"
#include "baselines/lucid_sharing.hpp"
#include "policy/policy.hpp"
#include "policy/predict/predictor.hpp"

namespace ds {

enum class LucidSharing : std::uint8_t { Pas, Always, Never };

// Everything the policy needs, already resolved (tests build it by hand).
struct LucidSetup {
  bool pooled = false;
  bool profiler = true;
  ProfilerConfig profiler_config;
  // Estimated run time (seconds) by the trace's job id (JobSpec::name); empty: `predictor`.
  std::unordered_map<std::string, double> estimate_s;
  std::string estimate_source;  // the file they came from, for messages
  std::unique_ptr<RuntimePredictor> predictor;
  // sharescore 0..2 by job name; jobs not listed get lucid_share_score() from `table`.
  std::unordered_map<std::string, int> share_score;
  const ColocationTable* table = nullptr;      // Lucid's profiles (AuxData), outlives the policy
  std::optional<ThroughputForecast> forecast;  // nullopt: PAS reads "no forecast" (sharing on)
  LucidSharing sharing = LucidSharing::Pas;
  double pas_threshold = 2;        // sharing off when the forecast is <= this many GPU jobs
  Time pas_period = seconds(100);  // Lucid evaluates PAS every 100 s
  // Keep Lucid's partner-recovery quirk (lucid.cpp, finish()): fidelity mode only.
  bool lucid_recover_quirk = false;
  // Scan the queue job by job while sharing instead of per request class: the reference the
  // indexed scan is checked against (tests/deep_queue_test.cpp); same results.
  bool reference_scan = false;
  std::string label = "lucid";  // prefix of summary keys
};

std::unique_ptr<Policy> make_lucid(const PolicyContext& ctx);
std::unique_ptr<Policy> make_lucid(const PolicyContext& ctx, LucidSetup setup);
// The setup make_lucid(ctx) uses: ctx.options resolved against ctx.aux (InputError).
LucidSetup lucid_setup(const PolicyContext& ctx);
// The `--set` keys make_lucid reads, for the registry.
const char* lucid_options();

// Lucid's profiler nodes on a cluster, per unit u (lucid_profiler.hpp: a cluster u times
// Venus's size gets u times Lucid's profiler): the last node of each donor (vc8Gr and vcefl
// when those tenants exist, `vc8Gr#u` and `vcefl#u` for the copies of a tiled cluster, else
// the tenants ranked 3u and 3u + 1 by GPUs) and the elastic donor (vcYVn / vcYVn#u, else rank
// 3u + 2). Units stop where the tenants run out; empty when fewer than two tenants own nodes.
ProfilerConfig lucid_profiler_nodes(const Cluster& cluster, std::span<const Tenant> tenants,
                                    std::size_t units = 1);
// The GPUs of the cluster Lucid sized its profiler for (Venus: 2 nodes + 1 elastic).
inline constexpr double kLucidProfilerGpus = 1080;
// Profiler units for a cluster (`profiler_units=auto`): its GPUs / 1,080, rounded, >= 1.
std::size_t lucid_profiler_units(const Cluster& cluster);

// Lucid's colocated speed of `job` sharing a GPU with `other` (updater.ColocateUpdater):
// 1 when either model is NeuMF, ResNet50, BERT or Transformer ("little influence"), else
// the measured pair speed; `fallback` when the pair was not measured (Lucid would abort).
double lucid_colocated_speed(const ColocationTable& table, const Profile* job, const Profile* other,
                             double fallback);

}  // namespace ds
