#include "policy/placement.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace ds {

// --- FreeMap ---------------------------------------------------------------------

FreeMap::FreeMap(const ClusterSnapshot& s) {
  sync(s);
  tracking_ = false;  // a scratch map: the first sync() copies everything again
}

void FreeMap::sync(const ClusterSnapshot& s) {
  const bool incremental = tracking_ && cluster_ == s.cluster && s.gpu_epoch != 0 &&
                           s.gpu_source == source_ &&
                           (s.gpu_epoch == epoch_ || s.gpu_epoch == epoch_ + 1);
  tracking_ = true;
  source_ = s.gpu_source;
  epoch_ = s.gpu_epoch;
  if (incremental) {
    grew_ = false;
    for (NodeId n : s.changed_nodes) copy_node(s, n);
    for (NodeId n : dirty_) {
      copy_node(s, n);
      is_dirty_[n.index()] = 0;
    }
    dirty_.clear();
    growths_ += grew_ ? 1 : 0;
    return;
  }
  ++growths_;  // a full copy: anything may have changed
  const bool same_cluster = cluster_ == s.cluster;
  cluster_ = s.cluster;
  free_milli_.assign(s.gpu_free_milli.begin(), s.gpu_free_milli.end());
  free_whole_.assign(s.node_free_gpus.begin(), s.node_free_gpus.end());
  shown_whole_ = free_whole_;
  total_ = 0;
  for (int f : free_whole_) total_ += f;
  // A map built per cycle (FreeMap(s)) stops here: nothing below is needed until it tracks
  // changes or holds node sets.
  for (NodeId n : dirty_) is_dirty_[n.index()] = 0;
  dirty_.clear();
  if (!same_cluster) {
    sets_.clear();
    members_.clear();
    member_begin_.clear();
    max_node_gpus_ = 0;
  }
  for (Set& set : sets_) set.build(*this);
  if (log_)
    for (const Node& n : cluster_->nodes) log_->push_back(n.id);
}

void FreeMap::copy_node(const ClusterSnapshot& s, NodeId id) {
  const Node& n = cluster_->nodes[id.index()];
  for (int k = 0; k < n.gpus; ++k) {
    const auto g = static_cast<std::size_t>(n.first_gpu + k);
    free_milli_[g] = s.gpu_free_milli[g];
  }
  const int before = free_whole_[id.index()];
  free_whole_[id.index()] = s.node_free_gpus[id.index()];
  grew_ = grew_ || s.node_free_gpus[id.index()] > shown_whole_[id.index()];
  shown_whole_[id.index()] = s.node_free_gpus[id.index()];
  node_free_changed(id, before);
  if (log_) log_->push_back(id);
}

void FreeMap::overlay_node(NodeId id, const FreeMap& base, std::span<const std::int16_t> extra) {
  const Node& n = cluster_->nodes[id.index()];
  int whole = 0;
  for (int k = 0; k < n.gpus; ++k) {
    const auto g = static_cast<std::size_t>(n.first_gpu + k);
    const int v = base.free_milli_[g] + extra[g];  // as give() would add it
    free_milli_[g] = static_cast<std::int16_t>(v);
    whole += v == kMilliPerGpu ? 1 : 0;
  }
  const int before = free_whole_[id.index()];
  free_whole_[id.index()] = whole;
  node_free_changed(id, before);
  if (log_) log_->push_back(id);
}

void FreeMap::node_free_changed(NodeId id, int before) {
  const int now = free_whole_[id.index()];
  if (now == before) return;
  total_ += now - before;
  if (member_begin_.empty()) return;  // no node sets
  for (std::uint32_t m = member_begin_[id.index()]; m < member_begin_[id.index() + 1]; ++m) {
    Set& set = sets_[members_[m].set];
    set.total += now - before;
    set.move(members_[m].pos, before, now);
  }
}

void FreeMap::mark_dirty(NodeId n) {
  if (!tracking_ || source_ == 0) return;  // a full copy comes first anyway
  if (is_dirty_.empty()) is_dirty_.assign(free_whole_.size(), 0);
  if (is_dirty_[n.index()]) return;
  is_dirty_[n.index()] = 1;
  dirty_.push_back(n);
}

int FreeMap::total_free_gpus(std::span<const NodeId> nodes) const {
  int total = 0;
  for (NodeId n : nodes) total += free_whole_[n.index()];
  return total;
}

void FreeMap::adjust(const Placement& p, int delta_milli) {
  for (const auto& a : p) {
    const Node& n = cluster_->nodes[a.node.index()];
    const int before = free_whole_[a.node.index()];
    for (std::uint64_t m = a.gpu_mask; m != 0; m &= m - 1) {
      auto g = static_cast<std::size_t>(n.first_gpu + std::countr_zero(m));
      const bool was_whole = free_milli_[g] == kMilliPerGpu;
      free_milli_[g] = static_cast<std::int16_t>(free_milli_[g] + delta_milli);
      const bool is_whole = free_milli_[g] == kMilliPerGpu;
      free_whole_[a.node.index()] += static_cast<int>(is_whole) - static_cast<int>(was_whole);
    }
    node_free_changed(a.node, before);
    mark_dirty(a.node);
    if (log_) log_->push_back(a.node);
  }
}

void FreeMap::take(const Placement& p, int milli_per_gpu) {
  adjust(p, -milli_per_gpu);
}
void FreeMap::give(const Placement& p, int milli_per_gpu) {
  adjust(p, milli_per_gpu);
}

// --- what-if ---------------------------------------------------------------------

FreeMap::Trial::Trial(FreeMap& map)
    : map_(&map), dirty_mark_(map.dirty_.size()), log_mark_(map.log_ ? map.log_->size() : 0) {}

void FreeMap::Trial::give(const Placement& p, int milli_per_gpu) {
  map_->adjust(p, milli_per_gpu);
  steps_.emplace_back(&p, milli_per_gpu);
}

void FreeMap::Trial::take(const Placement& p, int milli_per_gpu) {
  map_->adjust(p, -milli_per_gpu);
  steps_.emplace_back(&p, -milli_per_gpu);
}

void FreeMap::Trial::undo() {
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) map_->adjust(*it->first, -it->second);
  steps_.clear();
  // The nodes first marked during the trial hold their values from before it again: what the
  // snapshot showed, so the next sync need not copy them.
  for (std::size_t i = dirty_mark_; i < map_->dirty_.size(); ++i)
    map_->is_dirty_[map_->dirty_[i].index()] = 0;
  map_->dirty_.resize(dirty_mark_);
  if (map_->log_ && map_->log_->size() > log_mark_) map_->log_->resize(log_mark_);
}

// --- node sets -------------------------------------------------------------------

void FreeMap::Set::set_bit(int f, std::uint32_t pos) {
  const std::size_t w = pos / 64;
  bits[static_cast<std::size_t>(f) * words + w] |= std::uint64_t{1} << (pos % 64);
  summary[static_cast<std::size_t>(f) * swords + w / 64] |= std::uint64_t{1} << (w % 64);
  ++count[static_cast<std::size_t>(f)];
}

void FreeMap::Set::clear_bit(int f, std::uint32_t pos) {
  const std::size_t w = pos / 64;
  std::uint64_t& word = bits[static_cast<std::size_t>(f) * words + w];
  word &= ~(std::uint64_t{1} << (pos % 64));
  if (word == 0)
    summary[static_cast<std::size_t>(f) * swords + w / 64] &= ~(std::uint64_t{1} << (w % 64));
  --count[static_cast<std::size_t>(f)];
}

void FreeMap::Set::move(std::uint32_t pos, int from, int to) {
  clear_bit(from, pos);
  set_bit(to, pos);
}

std::int64_t FreeMap::Set::next(int f, std::size_t from) const {
  if (from >= nodes.size()) return -1;
  const std::uint64_t* b = &bits[static_cast<std::size_t>(f) * words];
  const std::uint64_t* s = &summary[static_cast<std::size_t>(f) * swords];
  std::size_t w = from / 64;
  const std::uint64_t here = b[w] & (~std::uint64_t{0} << (from % 64));
  if (here != 0) return static_cast<std::int64_t>(w * 64 + std::countr_zero(here));
  // The next non-zero word after w, from the summary.
  ++w;
  for (std::size_t sw = w / 64; sw < swords; ++sw) {
    std::uint64_t m = s[sw];
    if (sw == w / 64) m &= w % 64 == 0 ? ~std::uint64_t{0} : ~std::uint64_t{0} << (w % 64);
    if (m == 0) continue;
    const std::size_t word = sw * 64 + static_cast<std::size_t>(std::countr_zero(m));
    return static_cast<std::int64_t>(word * 64 + std::countr_zero(b[word]));
  }
  return -1;
}

void FreeMap::Set::build(const FreeMap& m) {
  const auto buckets = static_cast<std::size_t>(m.max_node_gpus_ + 1);
  words = (nodes.size() + 63) / 64;
  swords = (words + 63) / 64;
  bits.assign(buckets * words, 0);
  summary.assign(buckets * swords, 0);
  count.assign(buckets, 0);
  total = 0;
  size = 0;
  for (NodeId n : nodes) size = std::max(size, m.cluster_->nodes[n.index()].gpus);
  uniform = true;
  for (std::uint32_t pos = 0; pos < nodes.size(); ++pos) {
    const NodeId n = nodes[pos];
    uniform = uniform && m.cluster_->nodes[n.index()].gpus == size;
    const int f = m.free_whole_[n.index()];
    total += f;
    set_bit(f, pos);
  }
}

void FreeMap::rebuild_members() {
  const std::size_t n = free_whole_.size();
  member_begin_.assign(n + 1, 0);
  for (const Set& s : sets_)
    for (NodeId id : s.nodes) ++member_begin_[id.index() + 1];
  for (std::size_t i = 0; i < n; ++i) member_begin_[i + 1] += member_begin_[i];
  members_.resize(member_begin_[n]);
  std::vector<std::uint32_t> fill(member_begin_.begin(), member_begin_.end() - 1);
  for (SetId k = 0; k < sets_.size(); ++k)
    for (std::uint32_t pos = 0; pos < sets_[k].nodes.size(); ++pos)
      members_[fill[sets_[k].nodes[pos].index()]++] = Member{k, pos};
}

FreeMap::SetId FreeMap::add_set(std::span<const NodeId> nodes) {
  if (!cluster_) throw std::logic_error("FreeMap::add_set before the map is synced");
  if (sets_.empty())
    for (const Node& n : cluster_->nodes) max_node_gpus_ = std::max(max_node_gpus_, n.gpus);
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].index() >= free_whole_.size() || (i > 0 && !(nodes[i - 1] < nodes[i])))
      throw std::invalid_argument("FreeMap::add_set: nodes must be known and in ascending order");
  Set s;
  s.nodes.assign(nodes.begin(), nodes.end());
  s.build(*this);
  sets_.push_back(std::move(s));
  rebuild_members();
  return static_cast<SetId>(sets_.size() - 1);
}

void FreeMap::set_insert(SetId set, NodeId n) {
  auto& v = sets_[set].nodes;
  auto it = std::lower_bound(v.begin(), v.end(), n);
  if (it != v.end() && *it == n) return;
  v.insert(it, n);
  sets_[set].build(*this);
  rebuild_members();
}

void FreeMap::set_erase(SetId set, NodeId n) {
  auto& v = sets_[set].nodes;
  auto it = std::lower_bound(v.begin(), v.end(), n);
  if (it == v.end() || *it != n) return;
  v.erase(it);
  sets_[set].build(*this);
  rebuild_members();
}

std::optional<int> FreeMap::set_largest_fit(SetId id) const {
  const Set& s = sets_[id];
  if (!s.uniform) return std::nullopt;
  if (s.nodes.empty() || s.size <= 0) return 0;
  int partial = 0;  // the most free GPUs of a node that is not wholly free
  for (int f = s.size - 1; f > 0; --f)
    if (s.count[static_cast<std::size_t>(f)] > 0) {
      partial = f;
      break;
    }
  return s.count[static_cast<std::size_t>(s.size)] * s.size + partial;
}

namespace {

// The lowest-numbered `count` wholly free GPUs of a node.
NodeAlloc take_lowest(const FreeMap& free, NodeId id, int count) {
  const Node& n = free.cluster().nodes[id.index()];
  NodeAlloc a{id, 0};
  for (int k = 0; k < n.gpus && count > 0; ++k) {
    if (free.free_milli(n.first_gpu + k) == kMilliPerGpu) {
      a.gpu_mask |= std::uint64_t{1} << k;
      --count;
    }
  }
  return a;
}

}  // namespace

namespace {

// GPUs of the largest candidate node (0 when there is none).
int largest_node(const FreeMap& free, std::span<const NodeId> nodes) {
  int size = 0;
  for (NodeId n : nodes) size = std::max(size, free.cluster().nodes[n.index()].gpus);
  return size;
}

// Step 2: best fit on one node, the node with the fewest free GPUs that still fit (the
// first in order among equals).
std::optional<Placement> place_on_one_node(const FreeMap& free, std::span<const NodeId> nodes,
                                           int gpus) {
  std::optional<NodeId> best;
  int best_free = 0;
  for (NodeId n : nodes) {
    const int f = free.free_gpus(n);
    if (f >= gpus && (!best || f < best_free)) {
      best = n;
      best_free = f;
    }
  }
  if (!best) return std::nullopt;
  return Placement{take_lowest(free, *best, gpus)};
}

// Step 3 on nodes of any sizes (the header's 3a-3c). With equal sizes this is Lucid's rule
// exactly: the whole nodes taken are the first floor(gpus / size) in order, the spare is the
// next wholly free node.
std::optional<Placement> place_across_nodes(const FreeMap& free, std::span<const NodeId> nodes,
                                            int gpus) {
  auto size_of = [&](NodeId n) { return free.cluster().nodes[n.index()].gpus; };
  std::vector<NodeId> whole;  // wholly free nodes, the largest first, in order among equals
  for (NodeId n : nodes)
    if (free.free_gpus(n) == size_of(n)) whole.push_back(n);
  std::stable_sort(whole.begin(), whole.end(),
                   [&](NodeId a, NodeId b) { return size_of(a) > size_of(b); });
  Placement p;
  int left = gpus;
  std::vector<char> taken(whole.size(), 0);
  for (std::size_t i = 0; i < whole.size() && left > 0; ++i) {
    if (size_of(whole[i]) > left) continue;
    p.push_back(take_lowest(free, whole[i], size_of(whole[i])));
    left -= size_of(whole[i]);
    taken[i] = 1;
  }
  if (left == 0) return p;
  // 3b: the smallest wholly free node left that holds the rest (the first among equals).
  std::optional<NodeId> spare;
  for (std::size_t i = 0; i < whole.size(); ++i)
    if (!taken[i] && size_of(whole[i]) >= left && (!spare || size_of(whole[i]) < size_of(*spare)))
      spare = whole[i];
  if (spare) {
    p.push_back(take_lowest(free, *spare, left));
    return p;
  }
  // 3c: the partially free node with the most free GPUs (first in order among equals).
  std::optional<NodeId> best;
  int best_free = -1;
  for (NodeId n : nodes) {
    const int f = free.free_gpus(n);
    if (f == size_of(n)) continue;  // wholly free: taken, or smaller than the rest
    if (f > best_free) {
      best = n;
      best_free = f;
    }
  }
  if (!best || best_free < left) return std::nullopt;
  p.push_back(take_lowest(free, *best, left));
  return p;
}

}  // namespace

std::optional<Placement> place_consolidate(const FreeMap& free, std::span<const NodeId> nodes,
                                           int gpus) {
  if (nodes.empty() || gpus <= 0 || free.total_free_gpus(nodes) < gpus) return std::nullopt;
  if (gpus <= largest_node(free, nodes)) return place_on_one_node(free, nodes, gpus);
  return place_across_nodes(free, nodes, gpus);
}

// The span version's steps, answered from the set's buckets (positions = ascending ids).
std::optional<Placement> place_consolidate(const FreeMap& free, FreeMap::SetId id, int gpus) {
  const FreeMap::Set& s = free.sets_[id];
  if (s.nodes.empty() || gpus <= 0 || s.total < gpus) return std::nullopt;
  const int size = s.size;
  const int top = free.max_node_gpus_;
  if (gpus <= size) {
    for (int f = gpus; f <= top; ++f)
      if (s.count[static_cast<std::size_t>(f)] > 0)
        return Placement{take_lowest(free, s.nodes[static_cast<std::size_t>(s.next(f, 0))], gpus)};
    return std::nullopt;
  }
  if (size <= 0) return std::nullopt;
  // Mixed node sizes: the span rule (which knows each node's own size) is exact.
  if (!s.uniform) return place_across_nodes(free, std::span<const NodeId>(s.nodes), gpus);
  int whole_needed = gpus / size;
  const int rest = gpus % size;
  if (s.count[static_cast<std::size_t>(size)] < whole_needed) return std::nullopt;
  Placement p;
  std::size_t from = 0;
  for (; whole_needed > 0; --whole_needed) {
    const auto pos = static_cast<std::size_t>(s.next(size, from));
    p.push_back(take_lowest(free, s.nodes[pos], size));
    from = pos + 1;
  }
  if (rest == 0) return p;
  if (const std::int64_t spare = s.next(size, from); spare >= 0) {
    p.push_back(take_lowest(free, s.nodes[static_cast<std::size_t>(spare)], rest));
    return p;
  }
  for (int f = size - 1; f >= 0; --f) {
    if (s.count[static_cast<std::size_t>(f)] == 0) continue;
    if (f < rest) return std::nullopt;
    p.push_back(take_lowest(free, s.nodes[static_cast<std::size_t>(s.next(f, 0))], rest));
    return p;
  }
  return std::nullopt;
}

std::optional<Placement> place_fraction(const FreeMap& free, std::span<const NodeId> nodes,
                                        int milli) {
  std::optional<NodeAlloc> best;
  int best_left = kMilliPerGpu + 1;
  for (NodeId id : nodes) {
    const Node& n = free.cluster().nodes[id.index()];
    for (int k = 0; k < n.gpus; ++k) {
      const int left = free.free_milli(n.first_gpu + k);
      if (left >= milli && left < best_left) {
        best = NodeAlloc{id, std::uint64_t{1} << k};
        best_left = left;
      }
    }
  }
  if (!best) return std::nullopt;
  return Placement{*best};
}

std::optional<Placement> place_job(const FreeMap& free, std::span<const NodeId> nodes,
                                   const JobSpec& job) {
  if (constrained(job)) {
    const std::vector<NodeId> own = model_candidates(free.cluster(), nodes, job);
    if (job.gpu_milli < kMilliPerGpu) return place_fraction(free, own, job.gpu_milli);
    return place_consolidate(free, own, job.gpus);
  }
  if (job.gpu_milli < kMilliPerGpu) return place_fraction(free, nodes, job.gpu_milli);
  return place_consolidate(free, nodes, job.gpus);
}

std::optional<Placement> place_job(const FreeMap& free, FreeMap::SetId set, const JobSpec& job) {
  if (constrained(job)) return place_job(free, free.set_nodes(set), job);
  if (job.gpu_milli < kMilliPerGpu) return place_fraction(free, free.set_nodes(set), job.gpu_milli);
  return place_consolidate(free, set, job.gpus);
}

std::vector<NodeId> model_candidates(const Cluster& cluster, std::span<const NodeId> nodes,
                                     const JobSpec& job) {
  std::vector<NodeId> out;
  for (NodeId n : nodes)
    if (accepts_node(job, n, cluster.nodes[n.index()].gpu_type)) out.push_back(n);
  return out;
}

int model_capacity(const Cluster& cluster, std::span<const NodeId> nodes, const JobSpec& job,
                   int all) {
  if (!constrained(job)) return all;
  int gpus = 0;
  for (NodeId n : nodes)
    if (accepts_node(job, n, cluster.nodes[n.index()].gpu_type))
      gpus += cluster.nodes[n.index()].gpus;
  return gpus;
}

int model_capacity(const Cluster& cluster, const JobSpec& job, int all) {
  if (!constrained(job)) return all;
  int gpus = 0;
  for (const Node& n : cluster.nodes)
    if (accepts_node(job, n.id, n.gpu_type)) gpus += n.gpus;
  return gpus;
}

bool placement_accepts(const Cluster& cluster, const Placement& p, const JobSpec& job) {
  if (!constrained(job)) return true;
  for (const auto& a : p)
    if (!accepts_node(job, a.node, cluster.nodes[a.node.index()].gpu_type)) return false;
  return true;
}

std::string model_text(const JobSpec& job) {
  std::string text = job.gpu_type.empty() ? std::string() : " of model " + job.gpu_type;
  if (!job.allowed_nodes.empty()) text += " on the nodes its node mask allows";
  return text;
}

}  // namespace ds
