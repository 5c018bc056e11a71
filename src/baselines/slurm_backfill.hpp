// The what-if parts of Slurm's scheduling for the `slurm` baseline (slurm.hpp), over GPU
// counts per node: where a job fits, when it could start (select/cons_tres "will run"),
// which jobs a preemptor requeues, and the backfill scheduler's map of nodes reserved
// through time.
//
// Source (read, not copied; SchedMD/slurm at tag slurm-22-05-8-1):
//  - src/plugins/sched/backfill/backfill.c: the node-space map (node_space_map_t, a list of
//    time slices [begin, end) with the nodes available in each; _add_reservation; the
//    `later_start` / TRY_LATER loop of _attempt_backfill), bf_resolution rounding;
//  - src/plugins/select/cons_common/job_test.c: _will_run_test (running jobs are removed in
//    order of end time, in groups that start 30 s wide, aligned, and double, until the job
//    fits; its start = the last removed job's end, or for a job already past its limit
//    _guess_job_end), _run_now (preemption candidates removed in order until the job fits,
//    reordered preempt_reorder_count times; victims = the removed jobs on the chosen nodes);
//  - doc/html/sched_config.shtml, slurm.conf(5) SchedulerParameters bf_window,
//    bf_resolution, bf_max_job_test, preempt_reorder_count.
//
// Assumptions: whole GPUs only (the site has no gres/shard or mps); a node is one GPU
// count; CPUs follow GPUs and memory never binds (the testbed's jobs ask 16 CPUs per GPU of
// 64-CPU 4-GPU nodes). A one-node job goes where select/cons_tres's _eval_nodes puts it
// (cons_tres/job_test.c: of the runs of consecutive nodes that can host it, the one with the
// fewest free resources, and in it the node with the fewest); a multi-node job takes whole
// nodes plus a remainder, as the project's consolidate placement (policy/placement.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/types.hpp"

namespace ds {

// A set of node indices. Up to 256 nodes it lives inline (the backfill makes and copies
// many per pass: a heap allocation each was a quarter of a deep queue's time).
class NodeSet {
 public:
  NodeSet() = default;
  explicit NodeSet(std::size_t nodes, bool all = false);
  void set(std::size_t n) { words()[n / 64] |= std::uint64_t{1} << (n % 64); }
  void reset(std::size_t n) { words()[n / 64] &= ~(std::uint64_t{1} << (n % 64)); }
  [[nodiscard]] bool test(std::size_t n) const { return words()[n / 64] >> (n % 64) & 1; }
  void and_with(const NodeSet& o);
  void and_not(const NodeSet& o);
  [[nodiscard]] bool subset_of(const NodeSet& o) const;
  [[nodiscard]] std::size_t nodes() const { return n_; }
  bool operator==(const NodeSet& o) const;

 private:
  static constexpr std::size_t kInline = 4;
  [[nodiscard]] std::size_t count() const { return (n_ + 63) / 64; }
  std::uint64_t* words() { return big_.empty() ? small_.data() : big_.data(); }
  [[nodiscard]] const std::uint64_t* words() const {
    return big_.empty() ? small_.data() : big_.data();
  }
  std::array<std::uint64_t, kInline> small_{};
  std::vector<std::uint64_t> big_;  // more than kInline words
  std::size_t n_ = 0;
};

// GPUs a job holds (or would take) on each node it uses, by node index.
using NodeGpus = std::vector<std::pair<std::uint32_t, int>>;

// The nodes (and GPUs on each) a job of `gpus` would get among `usable` given the free GPUs
// per node (the rule above); std::nullopt when it does not fit.
std::optional<NodeGpus> pick_nodes(std::span<const int> free, std::span<const int> size,
                                   const NodeSet& usable, int gpus);

// A running job as the will-run test sees it.
struct EndingJob {
  Time end = 0;    // start + time limit (may be in the past: the job outran its limit)
  Time limit = 0;  // its time limit (for _guess_job_end)
  NodeGpus gpus;
};

struct WillRun {
  Time start = 0;
  NodeGpus nodes;
};

// _will_run_test without preemption: the earliest start >= now of a job of `gpus` on `usable`
// given the free GPUs now and the running jobs sorted by end; `window` is cons_common's 30 s
// grouping (scaled for time-scaled replays). std::nullopt: it never fits there.
std::optional<WillRun> will_run(std::span<const int> free, std::span<const int> size,
                                const NodeSet& usable, int gpus,
                                std::span<const EndingJob* const> by_end, Time now, Time window);

// _run_now with preemption: candidates in preemption order; `usable` the nodes the job may use.
// Returns the victims (indices into `candidates`) and where the job goes, or std::nullopt when
// even all of them leave too little room.
struct Preemption {
  std::vector<std::size_t> victims;
  NodeGpus nodes;
};
std::optional<Preemption> choose_victims(std::span<const int> free, std::span<const int> size,
                                         const NodeSet& usable, int gpus,
                                         std::span<const NodeGpus> candidates, int reorder_count);

// The backfill scheduler's map: time slices from now (rounded down to the resolution) to
// now + bf_window, each with the nodes no higher-priority pending job has reserved then.
class NodeSpace {
 public:
  NodeSpace(Time now, Time resolution, Time window, std::size_t nodes);
  struct Avail {
    NodeSet nodes;         // available over the whole of [start, end]
    Time later_start = 0;  // where more nodes become available (0: nowhere)
  };
  // _attempt_backfill's walk over the slices for a job tested from `start` to `end`.
  [[nodiscard]] Avail available(Time start, Time end) const;
  // _add_reservation: `nodes` taken over [start, end), both rounded down to the resolution,
  // at least one resolution long.
  void reserve(Time start, Time end, const NodeSet& nodes);
  [[nodiscard]] Time window_end() const { return window_end_; }
  [[nodiscard]] std::size_t slices() const { return slices_.size(); }

 private:
  struct Slice {
    Time begin = 0, end = 0;
    NodeSet avail;
  };
  void split_at(Time t);
  Time resolution_;
  Time window_end_;
  std::vector<Slice> slices_;
};

}  // namespace ds
