// DeepShare's tunables and ablation switches (`--set KEY=VALUE`; listed by
// `deepshare policies`). Defaults are the measured configuration in docs/results.md.
#pragma once

#include <string>

#include "core/types.hpp"
#include "policy/policy.hpp"

namespace ds::deepshare {

struct Config {
  // Ablations: each mechanism can be switched off. reclaim, sharing and time_slicing choose
  // whether their parts exist (Reclaimer; Colocation and Partners; Drains and Slicer),
  // borrowing whether the borrowed step runs (and Lender lends nothing); the others are rules
  // inside parts.
  bool borrowing = true;   // lend idle quota to other tenants' jobs
  bool reclaim = true;     // preempt borrowers when an entitled job cannot start
  bool sharing = true;     // MPS colocation on GPUs already in use
  bool prediction = true;  // order and admit by predicted run time (off: FIFO, no horizons)
  bool repredict = false;  // predict a job again on its user's first finish (prediction.hpp)
  bool twins = false;      // twins (alike to the predictor) wait in submit order (twins.hpp)
  bool assurance = true;   // couple reserve, reclaim and sharing to A_t (off: fixed thresholds)

  // Run-time predictor kind (docs/prediction.md). "user" leaves out the workload-profile
  // level: on Venus the synthetic profiles were assigned by duration and would leak it.
  std::string predictor = "user";

  // Assurance signal.
  Time ewma_tau = seconds(300);  // smoothing time constant
  double weight_share = 0.4;     // a_raw = ws*share + wd*delay + wo*outlook
  double weight_delay = 0.4;
  double weight_outlook = 0.2;
  double at_risk_below = 0.6;            // hysteresis: enter "at risk" below this ...
  double healthy_above = 0.8;            // ... and leave it above this
  Time assurance_refresh = seconds(60);  // every tenant's A_t and lending at least this often

  // Lending.
  double reserve_min = 0.05;           // share of idle quota always kept back
  double reserve_at_risk = 0.5;        // extra share kept back at A = 0 (scaled by 1 - A)
  Time demand_tau = seconds(3600);     // forecast demand smoothing
  Time lend_backoff = seconds(600);    // no lending for this long after a reclaim
  Time long_job = seconds(6 * 3600);   // borrowers predicted longer than this ...
  double long_job_headroom = 0.25;     // ... only while this share of lendable stays free
  Time borrow_aging = seconds(1800);   // borrowers waiting longer may also use reserves
  bool quota_aging = true;             // a job waiting longer than quota_aging_s ...
  Time quota_aging_s = seconds(3600);  // ... goes first within its quota, if it needs ...
  double aging_max_share = 0.5;        // ... at most this share of the quota
  bool present_risk = true;            // lend every idle GPU while no entitled job waits
  bool reclaim_quota = true;           // any job within its tenant's quota may reclaim

  // Reclaim.
  // Wait for borrowers predicted to end before a job's reclaim deadline instead of
  // reclaiming at their checkpoints (off: reclaim by present need). Measured both ways
  // (docs/deepshare.md, "Reclaim"): off queued more on Venus with profiles and on the
  // generator, so waiting stays the default.
  bool reclaim_wait = true;
  Time min_runtime = seconds(300);     // borrowed jobs younger than this are not victims early
  Time deadline_margin = seconds(30);  // reclaim by SLO - margin at the latest

  // Time slicing of long-running work (slicing.cpp).
  bool time_slicing = true;            // preempt work far past a pending job's predicted size
  double fresh_gpu_s = 18000;          // jobs below this attained service are fresh (Tiresias')
  Time slice_min = seconds(1800);      // victims have run at least this long ...
  double slice_ratio = 0;              // ... and this many times the pending job's prediction
  double slice_past = 0;               // ... and this many times their own prediction (0: any)
  Time slice_lost = seconds(60);       // victims lose at most this much work (else: at checkpoint)
  int slice_attempts = 8;              // pending jobs that may slice per cycle
  Time checkpoint_grid = seconds(60);  // wake-ups at victims' checkpoints, rounded up to this
  Time drain_after = seconds(600);     // a job of whole nodes waiting this long drains nodes

  // Sharing.
  double sharing_min_assurance = 0.5;  // no sharing on GPUs of tenants below this
  double sharing_budget = 1.5;         // largest predicted slowdown at A = 1 (<= tenant bound)
  int sharing_scan = 64;               // pending jobs considered for sharing per cycle
  int partner_scan = 256;              // running jobs considered as partners per job
  bool learn_sharing = true;  // scale predicted slowdowns by the observed / predicted ratio
  // Probation (sharing.hpp): a tenant's sharing starts on probation, where only its jobs
  // that are not entitled (whose QoS nothing promises) share; after probation_pairs
  // observed shared jobs it ends, and the tenant's sharing turns off for good once the
  // mean error of its observed slowdowns against the model's exceeds probation_error.
  bool probation = true;
  int probation_pairs = 4;
  double probation_error = 0.5;  // observed - predicted slowdown (run-time factor)
  // A pair whose observed slowdown exceeds a member's tenant bound is split: the job that
  // joined is preempted (at once while it loses at most slice_lost, else at its next
  // checkpoint) and restarts alone; it does not share again.
  bool split_pairs = true;
  // Drains, and time slicing when both members are long-running work, take a sharing pair
  // as one victim at its host's checkpoint (the member that holds the GPUs) while its joiner
  // would lose at most pair_lost of its checkpoint interval (counted in the cost); drains
  // take a joiner alone at its own checkpoint otherwise, and no job joins a host on a
  // drain's nodes. Off: time slicing never takes a pair, drains only when both members are
  // at a checkpoint at once (almost never): a cluster packed with pairs kept fresh and wide
  // work waiting behind them.
  bool pair_victims = true;
  double pair_lost = 0.5;

  static Config from(const PolicyOptions& o);
};

// The `--set` keys, for `deepshare policies`.
const char* option_keys();

}  // namespace ds::deepshare
