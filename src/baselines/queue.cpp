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
      fractional_(parts_.size(), 0) {}

void OrderedQueues::push(const JobSpec& j, double primary, std::int64_t secondary) {
  const std::size_t p = parts_.of(j);
  QueueKey k{primary, secondary, j.id};
  if (!queues_[p].insert(k).second) return;
  key_of_[j.id] = k;
  ++queued_;
  if (j.gpu_milli < kMilliPerGpu) ++fractional_[p];
  free_.mark(p);
}

void OrderedQueues::remove(const JobSpec& j) {
  const std::size_t p = parts_.of(j);
  if (queues_[p].erase(key_of_[j.id]) == 0) return;  // not queued (the key names the job)
  --queued_;
  if (j.gpu_milli < kMilliPerGpu) --fractional_[p];
  free_.mark(p);
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

  Step visit(JobId id) {
    const JobSpec& j = s_.jobs[id.index()];
    const bool whole = j.gpu_milli >= kMilliPerGpu;
    // A whole-GPU job larger than the largest that fits cannot be placed (the same answer
    // as trying, without the search).
    if ((whole && (j.gpus > free_gpus_ || j.gpus > largest_)) ||
        !try_start(j, *free_, set_, out_)) {
      note_wait(out_, id, room_reason(free_gpus_, j));
      return q_.rule_ == StartRule::HeadOfLine ? Step::Stop : Step::Skipped;
    }
    refresh();
    return Step::Started;
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
  auto& q = queues_[p];
  if (q.empty()) return;
  Loop loop(*this, p, s, out);
  auto it = q.begin();
  while (it != q.end() && loop.open()) {
    const JobId id = it->job;
    const auto step = loop.visit(id);
    if (step == Loop::Step::Stop) return;
    if (step == Loop::Step::Skipped) {
      ++it;
      continue;
    }
    if (s.jobs[id.index()].gpu_milli < kMilliPerGpu) --fractional_[p];
    it = q.erase(it);
    --queued_;
  }
  // The partition is full: the next job in order waits for room (those behind it keep
  // their reason: they wait behind it).
  if (it != q.end()) note_wait(out, it->job, WaitReason::NoFit);
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
      note_wait(out, id, WaitReason::NoFit);
      break;
    }
    const auto step = loop.visit(id);
    if (step == Loop::Step::Stop) break;
    if (step == Loop::Step::Skipped) continue;
    if (s.jobs[id.index()].gpu_milli < kMilliPerGpu) --fractional_[p];
    queues_[p].erase(key_of_[id]);
    --queued_;
  }
}

}  // namespace ds
