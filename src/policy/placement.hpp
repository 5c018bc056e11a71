// Free-capacity scratch map and node-level placement rules shared by policies.
//
// A FreeMap is a policy's private copy of which GPU capacity is free in this
// cycle; taking a placement updates it so that several starts in one cycle never
// overlap, and giving it back undoes a what-if (preemption search).
//
// Cost follows changes (DESIGN §2a):
//  - A policy may keep one FreeMap across cycles and sync() it with each snapshot: only
//    the nodes the snapshot lists as changed (and those this map changed itself) are
//    copied again, instead of every GPU of the cluster.
//  - Node sets (add_set: a tenant's virtual cluster, the pool) are indexed by free GPUs:
//    per set, one two-level bitset of its nodes per free-GPU count, kept up to date on
//    every change. place_consolidate over a set then costs O(node size + log n) instead of
//    O(n), with exactly the result of the span version over the same nodes in ascending id
//    order; its free total is kept, not summed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "model/cluster.hpp"
#include "model/snapshot.hpp"

namespace ds {

class FreeMap {
 public:
  // A node set registered with add_set(); valid for this map and its copies.
  using SetId = std::uint32_t;

  // An empty map: call sync() before use.
  FreeMap() = default;
  // A full copy of the snapshot's free capacity (a scratch map for one cycle: it does not
  // record its own changes; a later sync() starts with a full copy).
  explicit FreeMap(const ClusterSnapshot& s);

  // Brings the map to the snapshot's state: O(changed nodes) when this map was last synced
  // with the previous snapshot (or this one) of the same driver state, else a full copy.
  // Node sets are kept.
  void sync(const ClusterSnapshot& s);

  // GPUs of the node with no job on them.
  [[nodiscard]] int free_gpus(NodeId n) const { return free_whole_[n.index()]; }
  [[nodiscard]] int free_milli(int flat_gpu) const { return free_milli_[flat_gpu]; }
  [[nodiscard]] const Cluster& cluster() const { return *cluster_; }
  [[nodiscard]] int total_free_gpus(std::span<const NodeId> nodes) const;
  // Free GPUs of the whole cluster, O(1).
  [[nodiscard]] int total_free_gpus() const { return total_; }
  // Counts the syncs whose snapshot shows more free GPUs on some node than the previous
  // snapshot did (a job ended or was requeued, GPUs held outside the policy were given back,
  // a start the driver did not carry out), and full copies: a policy that skips rescans while
  // nothing changed must rescan after one. The policy's own takes and gives do not count.
  [[nodiscard]] std::uint64_t growths() const { return growths_; }

  void take(const Placement& p, int milli_per_gpu);
  void give(const Placement& p, int milli_per_gpu);

  // A what-if on this map with an undo token (Kueue's Snapshot.SimulateWorkloadRemoval and
  // its restore function): what is given and taken through it changes the map as give() and
  // take() do, and undo() (or the trial's end) reverts it, newest change first, leaving the
  // map exactly as it was (free capacity, node sets, change tracking and log). Instead of a
  // copy of the map per what-if. One trial of a map at a time; the map is not changed
  // otherwise while it is open, and each placement outlives the trial.
  class Trial {
   public:
    explicit Trial(FreeMap& map);
    Trial(const Trial&) = delete;
    Trial& operator=(const Trial&) = delete;
    ~Trial() { undo(); }
    void give(const Placement& p, int milli_per_gpu);
    void take(const Placement& p, int milli_per_gpu);
    void undo();
    [[nodiscard]] const FreeMap& map() const { return *map_; }

   private:
    FreeMap* map_;
    std::size_t dirty_mark_ = 0,
                log_mark_ = 0;  // sizes of the map's dirty list and log when it began
    std::vector<std::pair<const Placement*, int>> steps_;  // (placement, milli added per GPU)
  };

  // Appends every node this map changes from now on (sync, take, give; repeats possible) to
  // `log`; nullptr stops it. For a policy that keeps a second map derived from this one.
  void log_changes(std::vector<NodeId>* log) { log_ = log; }
  // Node n becomes `base`'s node n plus `extra` milli-GPUs on each of its GPUs (by flat GPU
  // index), as give() would add them: a what-if overlay kept in step with `base`.
  void overlay_node(NodeId n, const FreeMap& base, std::span<const std::int16_t> extra);

  // --- indexed node sets -----------------------------------------------------------
  // Registers a set of nodes (ascending ids, no repeats; std::invalid_argument otherwise).
  SetId add_set(std::span<const NodeId> nodes);
  // Adds a node to / removes it from a set (it keeps ascending id order).
  void set_insert(SetId set, NodeId n);
  void set_erase(SetId set, NodeId n);
  [[nodiscard]] std::span<const NodeId> set_nodes(SetId set) const { return sets_[set].nodes; }
  // Free GPUs of a set's nodes, O(1).
  [[nodiscard]] int set_free_gpus(SetId set) const { return sets_[set].total; }
  // The largest number of GPUs a whole-GPU job could be given on the set now (0: none),
  // O(node size): consolidate placement succeeds exactly for jobs of 1..this many GPUs
  // when the set's nodes all have the same size (std::nullopt otherwise: not monotone;
  // callers then ask place_job).
  [[nodiscard]] std::optional<int> set_largest_fit(SetId set) const;

 private:
  friend std::optional<Placement> place_consolidate(const FreeMap&, SetId, int);

  // One set: its nodes and, per free-GPU count f, a bitset over the nodes' positions.
  struct Set {
    std::vector<NodeId> nodes;  // ascending
    int size = 0;               // GPUs of its largest node
    bool uniform = true;        // all nodes have `size` GPUs
    int total = 0;              // free GPUs
    std::size_t words = 0, swords = 0;
    std::vector<std::uint64_t> bits;     // bucket f: [f * words, (f + 1) * words)
    std::vector<std::uint64_t> summary;  // bucket f: a bit per non-zero word
    std::vector<std::int32_t> count;     // nodes per bucket

    void build(const FreeMap& m);
    void move(std::uint32_t pos, int from, int to);
    void set_bit(int f, std::uint32_t pos);
    void clear_bit(int f, std::uint32_t pos);
    // First position >= from in bucket f, or -1.
    [[nodiscard]] std::int64_t next(int f, std::size_t from) const;
  };
  struct Member {
    SetId set;
    std::uint32_t pos;
  };

  void adjust(const Placement& p, int delta_milli);
  void copy_node(const ClusterSnapshot& s, NodeId n);
  void node_free_changed(NodeId n, int before);
  void rebuild_members();
  void mark_dirty(NodeId n);

  const Cluster* cluster_ = nullptr;
  std::uint64_t growths_ = 0;
  bool grew_ = false;                      // in this sync
  std::vector<std::int32_t> shown_whole_;  // per node: free GPUs the last snapshot showed
  std::vector<std::int16_t> free_milli_;   // per flat GPU
  std::vector<std::int32_t> free_whole_;   // per node: GPUs with free_milli == 1000
  int total_ = 0;
  int max_node_gpus_ = 0;
  std::vector<Set> sets_;
  std::vector<std::uint32_t> member_begin_;  // per node, into members_ (CSR)
  std::vector<Member> members_;
  // Sync state: the snapshot source and epoch last synced, and the nodes this map changed
  // itself since (take/give), which the next sync copies again from the snapshot.
  std::uint64_t source_ = 0, epoch_ = 0;
  bool tracking_ = false;  // synced by sync(): its own changes are recorded (dirty_)
  std::vector<NodeId> dirty_;
  std::vector<std::uint8_t> is_dirty_;
  std::vector<NodeId>* log_ = nullptr;
};

// Lucid's "consolidate" placement (Lucid artifact, simulation/policy/placer/consolidate.py),
// over the candidate `nodes` in the given order, generalised to nodes of different sizes:
//  1. Fail if the candidates' free GPUs are fewer than `gpus`.
//  2. gpus <= the largest candidate's size: one node only, best fit: the node with the
//     fewest free GPUs that fits (first in order among equals). A job that fits one node
//     waits for one rather than being split.
//  3. gpus > the largest candidate's size:
//     a. wholly free nodes, the largest first (in order among equals), each taken whole
//        while it is no larger than what is left to place;
//     b. the rest on one more node: the smallest wholly free node left that holds it
//        (first in order among equals), else
//     c. the partially free node with the most free GPUs, which must hold the rest.
//     With equal sizes (every Venus and Lucid cluster) this is Lucid's rule exactly:
//     floor(gpus / size) wholly free nodes in order, the remainder on the next wholly
//     free node, else on the node with the most free GPUs. On an idle cluster it places
//     every job of at most the candidates' GPUs (each node skipped in (a) is larger than
//     what was left, so (b) finds it), on any mix of node sizes.
// Within a node the lowest-numbered free GPUs are used.
std::optional<Placement> place_consolidate(const FreeMap& free, std::span<const NodeId> nodes,
                                           int gpus);
// The same over a registered set (its nodes in ascending id order), from the index.
std::optional<Placement> place_consolidate(const FreeMap& free, FreeMap::SetId set, int gpus);

// A fractional single-GPU request (gpu_milli < 1000): the GPU with the least free
// capacity that still fits (packs shares together), lowest index among equals.
std::optional<Placement> place_fraction(const FreeMap& free, std::span<const NodeId> nodes,
                                        int milli);

// Dispatches on the job's request.
std::optional<Placement> place_job(const FreeMap& free, std::span<const NodeId> nodes,
                                   const JobSpec& job);
std::optional<Placement> place_job(const FreeMap& free, FreeMap::SetId set, const JobSpec& job);

}  // namespace ds
