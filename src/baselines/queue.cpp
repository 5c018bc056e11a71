#include "baselines/queue.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"

namespace ds {

const char* to_string(Scope s) {
  return s == Scope::Isolated ? "isolated" : "pooled";
}

Scope read_scope(const PolicyOptions& options, Scope fallback) {
  const std::string v = options.get("scope", to_string(fallback));
  if (v == "isolated") return Scope::Isolated;
  if (v == "pooled") return Scope::Pooled;
  throw InputError("--set scope: expected isolated or pooled, got '" + v + "'");
}

StartRule read_start_rule(const PolicyOptions& options, Scope scope) {
  return options.get_bool("backfill", scope == Scope::Pooled) ? StartRule::Backfill
                                                              : StartRule::HeadOfLine;
}

Partitions::Partitions(const Cluster& cluster, std::size_t tenants, Scope scope) : scope_(scope) {
  bool any_owned = false;
  for (const auto& n : cluster.nodes) any_owned = any_owned || n.owner.valid();
  per_tenant_ = scope == Scope::Isolated && any_owned;
  const std::size_t parts = per_tenant_ ? tenants : 1;
  nodes_.resize(parts);
  capacity_.assign(parts, 0);
  for (const auto& n : cluster.nodes) {
    if (per_tenant_ && (!n.owner.valid() || n.owner.index() >= parts)) continue;
    const std::size_t p = per_tenant_ ? n.owner.index() : 0;
    nodes_[p].push_back(n.id);
    capacity_[p] += n.gpus;
  }
}

std::optional<RejectJob> Partitions::too_large(const ClusterSnapshot& s, const JobSpec& j) const {
  const int cap = model_capacity(*s.cluster, nodes_[of(j)], j, capacity_[of(j)]);
  if (j.gpus <= cap) return std::nullopt;
  std::string where = per_tenant_ ? "tenant '" + s.tenants[j.tenant.index()].name + "' owns "
                                  : std::string("the cluster has ");
  return RejectJob{j.id, "needs " + std::to_string(j.gpus) + " GPUs" + model_text(j) + "; " +
                             where + std::to_string(cap)};
}

bool try_start(const JobSpec& job, FreeMap& free, std::span<const NodeId> nodes, Decisions& out) {
  auto p = place_job(free, nodes, job);
  if (!p) return false;
  free.take(*p, job.gpu_milli);
  out.start.push_back(StartJob{job.id, std::move(*p)});
  return true;
}

bool try_start(const JobSpec& job, FreeMap& free, FreeMap::SetId nodes, Decisions& out) {
  auto p = place_job(free, nodes, job);
  if (!p) return false;
  free.take(*p, job.gpu_milli);
  out.start.push_back(StartJob{job.id, std::move(*p)});
  return true;
}

namespace {
constexpr std::uint32_t kNoPart = ~std::uint32_t{0};
}  // namespace

void PartitionFree::sync(const ClusterSnapshot& s, const Partitions& parts) {
  const bool first = sets_.empty();
  free_.sync(s);
  if (first) {
    part_of_node_.assign(s.cluster->nodes.size(), kNoPart);
    for (std::size_t p = 0; p < parts.size(); ++p) {
      sets_.push_back(free_.add_set(parts.nodes(p)));
      for (NodeId n : parts.nodes(p)) part_of_node_[n.index()] = static_cast<std::uint32_t>(p);
    }
  }
  // The first sync, or a snapshot without deltas (hand-made): anything may have changed.
  if (first || s.gpu_epoch == 0) {
    for (std::size_t p = 0; p < parts.size(); ++p) mark(p);
    return;
  }
  for (NodeId n : s.changed_nodes)
    if (part_of_node_[n.index()] != kNoPart) mark(part_of_node_[n.index()]);
}

std::span<const std::uint32_t> PartitionFree::take_changed() {
  taken_.swap(list_);
  list_.clear();
  std::sort(taken_.begin(), taken_.end());
  for (std::uint32_t p : taken_) dirty_[p] = 0;
  return taken_;
}

OrderedQueues::OrderedQueues(Partitions partitions, StartRule rule)
    : parts_(std::move(partitions)),
      rule_(rule),
      free_(parts_.size()),
      queues_(parts_.size()),
      fractional_(parts_.size(), 0) {
  if (rule_ == StartRule::Backfill) index_.resize(parts_.size());
}

void OrderedQueues::push(const JobSpec& j, double primary, std::int64_t secondary) {
  const std::size_t p = parts_.of(j);
  QueueKey k{primary, secondary, j.id};
  if (!queues_[p].insert(k).second) return;
  key_of_[j.id] = k;
  if (!index_.empty()) index_[p].add(j.id, request_class(j), k, WaitReason::Priority);
  ++queued_;
  if (j.gpu_milli < kMilliPerGpu) ++fractional_[p];
  free_.mark(p);
}

void OrderedQueues::remove(const JobSpec& j) {
  const std::size_t p = parts_.of(j);
  if (queues_[p].count(key_of_[j.id]) == 0) return;  // not queued (the key names the job)
  take(p, j);
  free_.mark(p);
}

void OrderedQueues::take(std::size_t p, const JobSpec& j) {
  const QueueKey& k = key_of_[j.id];
  if (!index_.empty()) index_[p].erase(j.id, k);
  queues_[p].erase(k);
  --queued_;
  if (j.gpu_milli < kMilliPerGpu) --fractional_[p];
}

void OrderedQueues::note(std::size_t p, const JobSpec& j, WaitReason reason, Decisions& out) {
  if (!index_.empty()) index_[p].stated(j.id, key_of_[j.id], reason);
  note_wait(out, j.id, reason);
}

// One pass of the start loop over a partition.
class OrderedQueues::Loop {
 public:
  enum class Step : std::uint8_t { Started, Skipped, Stop };

  Loop(OrderedQueues& q, std::size_t p, const ClusterSnapshot& s, Decisions& out)
      : q_(q), p_(p), s_(s), out_(out), free_(&q.free_.free()), set_(q.free_.set(p)) {
    refresh();
  }

  // Whether to look at any further job (cheap exit when nothing can fit any more).
  [[nodiscard]] bool open() const { return free_gpus_ > 0 || q_.fractional_[p_] > 0; }
  [[nodiscard]] int free_gpus() const { return free_gpus_; }

  // Starts `id` if it can be placed now (the job stays queued: the caller takes it).
  bool try_start(JobId id) {
    const JobSpec& j = s_.jobs[id.index()];
    const bool whole = j.gpu_milli >= kMilliPerGpu;
    // A whole-GPU job larger than the largest that fits cannot be placed (the same answer
    // as trying, without the search).
    if ((whole && (j.gpus > free_gpus_ || j.gpus > largest_)) ||
        !ds::try_start(j, *free_, set_, out_))
      return false;
    refresh();
    return true;
  }

  Step visit(JobId id) {
    if (try_start(id)) return Step::Started;
    const JobSpec& j = s_.jobs[id.index()];
    q_.note(p_, j, room_reason(free_gpus_, j), out_);
    return q_.rule_ == StartRule::HeadOfLine ? Step::Stop : Step::Skipped;
  }

 private:
  void refresh() {
    free_gpus_ = free_->set_free_gpus(set_);
    largest_ = free_->set_largest_fit(set_).value_or(free_gpus_);
  }

  OrderedQueues& q_;
  std::size_t p_;
  const ClusterSnapshot& s_;
  Decisions& out_;
  FreeMap* free_;
  FreeMap::SetId set_;
  int free_gpus_ = 0;
  int largest_ = 0;
};

void OrderedQueues::start(std::size_t p, const ClusterSnapshot& s, Decisions& out) {
  if (queues_[p].empty()) return;
  if (rule_ == StartRule::Backfill) {
    start_backfill(p, s, out);
    return;
  }
  auto& q = queues_[p];
  Loop loop(*this, p, s, out);
  auto it = q.begin();
  while (it != q.end() && loop.open()) {
    const JobId id = it->job;
    if (loop.visit(id) == Loop::Step::Stop) return;
    ++it;
    take(p, s.jobs[id.index()]);
  }
  // The partition is full: the next job in order waits for room (those behind it keep
  // their reason: they wait behind it).
  if (it != q.end()) note(p, s.jobs[it->job.index()], WaitReason::NoFit, out);
}

// The backfill loop of start() without walking the queue (request_index.hpp). Why it gives
// the plain loop's starts and reasons:
//  - Within one loop the free map only loses capacity (takes), and placement is monotone in
//    free capacity (consolidate: a node with enough free GPUs, enough wholly free nodes and
//    a remainder node; fraction: a GPU with enough free share). A class whose first job in
//    the walk does not fit has no job that fits for the rest of the loop: it is dead.
//  - So the loop is a merge of the live classes' jobs in queue order (a heap of one
//    candidate per class): each candidate either starts (the next start of the plain loop,
//    since everything before it belongs to dead classes) or kills its class.
//  - The reason the plain loop states for a job it passes is room_reason(free GPUs at that
//    moment, job): NoFit for fractional jobs and for jobs larger than the free GPUs, else
//    Fragmented. Free GPUs only fall along the walk, so a dead whole-GPU class of g GPUs is
//    Fragmented from its death up to the first start that leaves fewer than g free, NoFit
//    after; the walk ends at the queue's end or, when the partition is full (no free GPU,
//    no fractional job queued), right after the last start, where only the next job is
//    stated (NoFit).
// Cost: O((classes + starts + reasons that change) x log n).
void OrderedQueues::start_backfill(std::size_t p, const ClusterSnapshot& s, Decisions& out) {
  auto& index = index_[p];
  const auto any = [](const QueueKey&) { return false; };
  Loop loop(*this, p, s, out);
  const int free_before = loop.free_gpus();
  heap_.clear();
  starts_.clear();
  dead_.clear();
  notes_.clear();
  for (std::uint32_t c = 0; c < index.classes(); ++c)
    if (const QueueKey* k = index.first(c, nullptr, false, any)) heap_.push_back({*k, c});
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
  bool full = false;
  for (;;) {
    if (!loop.open()) {
      full = true;
      break;
    }
    if (heap_.empty()) break;
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const Candidate c = heap_.back();
    heap_.pop_back();
    if (!loop.try_start(c.key.job)) {
      dead_.emplace_back(c.cls, c.key);  // nothing of this class fits for the rest of the loop
      continue;
    }
    starts_.emplace_back(c.key, loop.free_gpus());
    take(p, s.jobs[c.key.job.index()]);
    if (const QueueKey* k = index.first(c.cls, &c.key, true, any)) {
      heap_.push_back({*k, c.cls});
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
    }
  }
  // The jobs the plain loop passes: each dead class from its death to the end of the walk
  // (the queue's end, or the last start when the partition is full).
  const QueueKey* end = full && !starts_.empty() ? &starts_.back().first : nullptr;
  for (const auto& [cls, death] : dead_) {
    const RequestClass& req = index.at(cls).req;
    // Fragmented while at least req.gpus GPUs are free, NoFit from the first start after
    // which fewer are (fractional jobs: NoFit throughout).
    const QueueKey* below = &death;
    if (req.milli >= kMilliPerGpu && free_before >= req.gpus) {
      below = nullptr;
      for (const auto& [key, free] : starts_)
        if (free < req.gpus) {
          below = death < key ? &key : &death;
          break;
        }
    }
    if (!below || (end && !(*below < *end))) {
      index.restate(cls, &death, end, WaitReason::Fragmented, notes_, any);
      continue;
    }
    index.restate(cls, &death, below, WaitReason::Fragmented, notes_, any);
    index.restate(cls, below, end, WaitReason::NoFit, notes_, any);
  }
  // In the order restate() found them (request_index.hpp: any order gives the same state).
  for (const auto& [key, reason] : notes_) note_wait(out, key.job, reason);
  // The partition is full: the next job in order waits for room (as in start()).
  if (full) {
    auto& q = queues_[p];
    auto it = starts_.empty() ? q.begin() : q.upper_bound(starts_.back().first);
    if (it != q.end()) note(p, s.jobs[it->job.index()], WaitReason::NoFit, out);
  }
}

void OrderedQueues::start_all(const ClusterSnapshot& s, Decisions& out) {
  for (std::uint32_t p : changed()) start(p, s, out);
}

void OrderedQueues::start_in_order(std::size_t p, std::span<const JobId> order,
                                   const ClusterSnapshot& s, Decisions& out) {
  if (order.empty()) return;
  Loop loop(*this, p, s, out);
  for (JobId id : order) {
    if (!loop.open()) {
      note(p, s.jobs[id.index()], WaitReason::NoFit, out);
      break;
    }
    const auto step = loop.visit(id);
    if (step == Loop::Step::Stop) break;
    if (step == Loop::Step::Skipped) continue;
    take(p, s.jobs[id.index()]);
  }
}

}  // namespace ds
