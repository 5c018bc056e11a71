#include "baselines/slurm_backfill.hpp"

#include <algorithm>
#include <numeric>

namespace ds {

NodeSet::NodeSet(std::size_t nodes, bool all) : n_(nodes) {
  if (count() > kInline) big_.assign(count(), 0);
  if (!all) return;
  std::uint64_t* w = words();
  std::fill(w, w + nodes / 64, ~std::uint64_t{0});
  if (nodes % 64 != 0) w[nodes / 64] = (std::uint64_t{1} << (nodes % 64)) - 1;
}

bool NodeSet::operator==(const NodeSet& o) const {
  return n_ == o.n_ && std::equal(words(), words() + count(), o.words());
}

void NodeSet::and_with(const NodeSet& o) {
  std::uint64_t* w = words();
  const std::uint64_t* v = o.words();
  for (std::size_t i = 0; i < count(); ++i) w[i] &= v[i];
}

void NodeSet::and_not(const NodeSet& o) {
  std::uint64_t* w = words();
  const std::uint64_t* v = o.words();
  for (std::size_t i = 0; i < count(); ++i) w[i] &= ~v[i];
}

bool NodeSet::subset_of(const NodeSet& o) const {
  const std::uint64_t* w = words();
  const std::uint64_t* v = o.words();
  for (std::size_t i = 0; i < count(); ++i)
    if ((w[i] & ~v[i]) != 0) return false;
  return true;
}

std::optional<NodeGpus> pick_nodes(std::span<const int> free, std::span<const int> size,
                                   const NodeSet& usable, int gpus) {
  // The steps of place_consolidate (policy/placement.cpp) over the usable nodes in order.
  int total = 0, largest = 0;
  for (std::size_t n = 0; n < free.size(); ++n)
    if (usable.test(n)) {
      total += free[n];
      largest = std::max(largest, size[n]);
    }
  if (largest <= 0 || gpus <= 0 || total < gpus) return std::nullopt;
  if (gpus <= largest) {
    // cons_tres's _eval_nodes for a one-node job: the nodes that can host it form runs of
    // consecutive nodes; the run with the fewest free resources is taken (the first of equal
    // ones), and in it the node with the fewest (the first of equal ones). Free CPUs follow
    // free GPUs (jobs ask CPUs in proportion), so GPUs stand for both.
    std::optional<std::uint32_t> best;
    int best_sum = 0;
    for (std::size_t n = 0; n < free.size();) {
      if (!usable.test(n) || free[n] < gpus) {
        ++n;
        continue;
      }
      int sum = 0;
      std::optional<std::uint32_t> tight;
      for (; n < free.size() && usable.test(n) && free[n] >= gpus; ++n) {
        sum += free[n];
        if (!tight || free[n] < free[*tight]) tight = static_cast<std::uint32_t>(n);
      }
      if (!best || sum < best_sum) {
        best = tight;
        best_sum = sum;
      }
    }
    if (!best) return std::nullopt;
    return NodeGpus{{*best, gpus}};
  }
  // Across nodes, place_across_nodes's steps: wholly free nodes, the largest first (in order
  // among equals), each taken whole while it is not larger than what is left; the rest on the
  // smallest wholly free node left that holds it, else on the partially free node with the
  // most free GPUs. With one node size: the first floor(gpus / size) wholly free nodes, the
  // next one for the rest.
  std::vector<std::uint32_t> whole;
  for (std::size_t n = 0; n < free.size(); ++n)
    if (usable.test(n) && free[n] == size[n] && size[n] > 0)
      whole.push_back(static_cast<std::uint32_t>(n));
  std::stable_sort(whole.begin(), whole.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return size[a] > size[b]; });
  NodeGpus out;
  int left = gpus;
  std::vector<char> taken(whole.size(), 0);
  for (std::size_t i = 0; i < whole.size() && left > 0; ++i) {
    if (size[whole[i]] > left) continue;
    out.emplace_back(whole[i], size[whole[i]]);
    left -= size[whole[i]];
    taken[i] = 1;
  }
  if (left == 0) return out;
  std::optional<std::uint32_t> spare;
  for (std::size_t i = 0; i < whole.size(); ++i)
    if (!taken[i] && size[whole[i]] >= left && (!spare || size[whole[i]] < size[*spare]))
      spare = whole[i];
  if (spare) {
    out.emplace_back(*spare, left);
    return out;
  }
  std::optional<std::uint32_t> best;
  for (std::size_t n = 0; n < free.size(); ++n)
    if (usable.test(n) && free[n] != size[n] && (!best || free[n] > free[*best]))
      best = static_cast<std::uint32_t>(n);
  if (!best || std::min(free[*best], size[*best]) < left) return std::nullopt;
  out.emplace_back(*best, left);
  return out;
}

namespace {

bool overlaps(const NodeGpus& g, const NodeSet& usable) {
  return std::any_of(g.begin(), g.end(), [&](const auto& p) { return usable.test(p.first); });
}

void give_back(std::vector<int>& free, const NodeGpus& g, const NodeSet& usable) {
  for (const auto& [n, k] : g)
    if (usable.test(n)) free[n] += k;
}

}  // namespace

namespace {

// What pick_nodes needs at least, kept as GPUs are given back: as many free GPUs on the usable
// nodes as the job asks, and for a job one node can hold, one usable node with that many free
// (then pick_nodes finds a place for sure). Lets the will-run loop skip pick_nodes's scans of
// every node while the answer is certainly no.
class FitBound {
 public:
  FitBound(std::span<const int> free, std::span<const int> size, const NodeSet& usable, int gpus)
      : gpus_(gpus) {
    for (std::size_t n = 0; n < free.size(); ++n)
      if (usable.test(n)) {
        total_ += free[n];
        most_ = std::max(most_, free[n]);
        largest_ = std::max(largest_, size[n]);
      }
  }
  void gave(int now_free, int k) {
    total_ += k;
    most_ = std::max(most_, now_free);
  }
  [[nodiscard]] bool may_fit() const {
    return total_ >= gpus_ && (gpus_ > largest_ || most_ >= gpus_);
  }

 private:
  int gpus_, total_ = 0, most_ = 0, largest_ = 0;
};

}  // namespace

std::optional<WillRun> will_run(std::span<const int> free_now, std::span<const int> size,
                                const NodeSet& usable, int gpus,
                                std::span<const EndingJob* const> by_end, Time now, Time window) {
  std::vector<int> free(free_now.begin(), free_now.end());
  FitBound bound(free, size, usable, gpus);
  if (bound.may_fit())
    if (auto p = pick_nodes(free, size, usable, gpus)) return WillRun{now, std::move(*p)};
  // Remove running jobs in order of end time, in aligned groups of growing width.
  Time width = std::max<Time>(window, 1), group_end = 0;
  bool group_set = false;
  std::size_t i = 0;
  for (bool more = true; more;) {
    const EndingJob* last = nullptr;
    const EndingJob* next = nullptr;
    for (;;) {
      if (i == by_end.size()) {
        more = false;
        break;
      }
      const EndingJob* job = by_end[i++];
      if (!overlaps(job->gpus, usable)) continue;
      if (!group_set) {
        const Time delta = ((job->end % width) + width) % width;
        group_end = job->end + (width - delta);
        group_set = true;
      }
      last = job;
      for (const auto& [n, k] : job->gpus)
        if (usable.test(n)) {
          free[n] += k;
          bound.gave(free[n], k);
        }
      if (i == by_end.size()) {
        more = false;
        break;
      }
      next = by_end[i];
      if (next->end > group_end + width) break;
    }
    if (!last) break;
    do width *= 2;
    while (next && next->end > group_end + width);
    if (!bound.may_fit()) continue;
    if (auto p = pick_nodes(free, size, usable, gpus)) {
      // A job past its limit (not killed: OverTimeLimit=UNLIMITED) is guessed to end a
      // limit from now (_guess_job_end).
      const Time start = last->end > now ? last->end : std::max(now + last->limit, now + kSecond);
      return WillRun{start, std::move(*p)};
    }
  }
  return std::nullopt;
}

std::optional<Preemption> choose_victims(std::span<const int> free_now, std::span<const int> size,
                                         const NodeSet& usable, int gpus,
                                         std::span<const NodeGpus> candidates, int reorder_count) {
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  for (int pass = 0;; ++pass) {
    std::vector<int> free(free_now.begin(), free_now.end());
    std::size_t used = 0;  // candidates of `order` removed in this pass
    std::optional<NodeGpus> where;
    while (used < order.size() && !where) {
      const NodeGpus& c = candidates[order[used++]];
      if (!overlaps(c, usable)) continue;
      give_back(free, c, usable);
      where = pick_nodes(free, size, usable, gpus);
    }
    if (!where) return std::nullopt;
    const bool final =
        pass > reorder_count || candidates.size() <= static_cast<std::size_t>(pass + 1);
    if (final) {
      NodeSet chosen(usable.nodes());
      for (const auto& [n, k] : *where) chosen.set(n);
      Preemption out{{}, std::move(*where)};
      for (std::size_t k = 0; k < used; ++k)
        if (overlaps(candidates[order[k]], chosen)) out.victims.push_back(order[k]);
      return out;
    }
    // Reorder (non-strict): the last one needed first, then the earlier ones by how many of
    // the chosen nodes they hold, the rest after.
    std::vector<int> weight(candidates.size(), 0);
    NodeSet chosen(usable.nodes());
    for (const auto& [n, k] : *where) chosen.set(n);
    for (std::size_t k = 0; k + 1 < used; ++k)
      for (const auto& [n, g] : candidates[order[k]]) weight[order[k]] += chosen.test(n) ? 1 : 0;
    weight[order[used - 1]] = 99999;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return weight[a] > weight[b]; });
  }
}

NodeSpace::NodeSpace(Time now, Time resolution, Time window, std::size_t nodes)
    : resolution_(std::max<Time>(resolution, 1)) {
  const Time begin = now / resolution_ * resolution_;
  window_end_ = (now + window) / resolution_ * resolution_;
  slices_.push_back({begin, std::max(window_end_, begin + resolution_), NodeSet(nodes, true)});
}

NodeSpace::Avail NodeSpace::available(Time start, Time end) const {
  const std::size_t nodes = slices_.front().avail.nodes();
  Avail a{NodeSet(nodes, true), 0};
  for (std::size_t j = 0; j < slices_.size(); ++j) {
    const Slice& s = slices_[j];
    if (s.end > start && j + 1 < slices_.size() && a.later_start == 0) {
      NodeSet cur = a.nodes;
      cur.and_with(s.avail);
      if (!slices_[j + 1].avail.subset_of(cur)) a.later_start = s.end;
    }
    if (s.end <= start) continue;
    if (s.begin > end) break;
    a.nodes.and_with(s.avail);
  }
  return a;
}

void NodeSpace::split_at(Time t) {
  for (std::size_t j = 0; j < slices_.size(); ++j) {
    Slice& s = slices_[j];
    if (s.begin < t && t < s.end) {
      Slice tail{t, s.end, s.avail};
      s.end = t;
      slices_.insert(slices_.begin() + static_cast<std::ptrdiff_t>(j) + 1, std::move(tail));
      return;
    }
  }
}

void NodeSpace::reserve(Time start, Time end, const NodeSet& nodes) {
  start = std::max(start / resolution_ * resolution_, slices_.front().begin);
  end = end / resolution_ * resolution_;
  if (end < start + resolution_) end = start + resolution_;
  if (start >= slices_.back().end) return;  // beyond the window
  split_at(start);
  split_at(end);
  for (Slice& s : slices_)
    if (s.begin >= start && s.end <= end) s.avail.and_not(nodes);
  // Adjacent slices with the same nodes are one (backfill.c drops such records too).
  std::vector<Slice> merged;
  for (Slice& s : slices_) {
    if (!merged.empty() && merged.back().avail == s.avail && merged.back().end == s.begin)
      merged.back().end = s.end;
    else
      merged.push_back(std::move(s));
  }
  slices_ = std::move(merged);
}

}  // namespace ds
