#include "model/tenant_tree.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "model/cluster.hpp"

namespace ds {
namespace {

std::string name_of(const Tenant& t) {
  return "tenant " + quote_input(t.name);
}

// Largest-remainder apportionment of `total` units in proportion to `weights` (ties: the
// lower index). All-zero weights share equally.
std::vector<int> apportion(int total, const std::vector<double>& weights) {
  std::vector<int> out(weights.size(), 0);
  if (weights.empty() || total <= 0) return out;
  double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<double> w = weights;
  if (!(sum > 0)) {
    std::fill(w.begin(), w.end(), 1.0);
    sum = static_cast<double>(w.size());
  }
  std::vector<std::pair<double, std::size_t>> rest;
  int given = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double exact = total * (w[i] / sum);
    out[i] = static_cast<int>(std::floor(exact));
    given += out[i];
    rest.emplace_back(exact - out[i], i);
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; given < total && k < rest.size(); ++k, ++given) ++out[rest[k].second];
  return out;
}

class Resolver {
 public:
  Resolver(std::vector<Tenant>& ts) : ts_(ts), parent_(ts.size(), -1), kids_(ts.size()) {
    const int n = static_cast<int>(ts.size());
    for (int i = 0; i < n; ++i) {
      if (!ts[i].parent.valid()) continue;
      const auto p = ts[i].parent.index();
      if (p >= ts.size() || static_cast<int>(p) == i)
        throw InputError(name_of(ts[i]) + ": its parent is not another tenant");
      parent_[i] = static_cast<int>(p);
    }
    for (int i = 0; i < n; ++i) {
      int steps = 0;
      for (int a = parent_[i]; a >= 0; a = parent_[a])
        if (++steps > n) throw InputError(name_of(ts[i]) + ": its parents form a cycle");
      if (parent_[i] >= 0) kids_[parent_[i]].push_back(i);
    }
    ask_.assign(ts.size(), -1);
  }

  std::vector<std::string> run(int cluster_gpus) {
    std::int64_t total = 0;
    for (std::size_t r = 0; r < ts_.size(); ++r) {
      if (parent_[r] >= 0) continue;
      if (kids_[r].empty()) {
        total += ts_[r].quota_gpus;  // flat: untouched
        continue;
      }
      const int e = ask(static_cast<int>(r));
      total += e;
      distribute(static_cast<int>(r), e);
    }
    if (cluster_gpus >= 0 && total > cluster_gpus)
      problems_.push_back("the tenants' guarantees add up to " + std::to_string(total) +
                          " GPUs, more than the cluster's " + std::to_string(cluster_gpus));
    return std::move(problems_);
  }

 private:
  bool fixed(int t) const { return ts_[t].tree_quota_gpus >= 0; }

  // What a subtree asks: its configured quota, else what its children ask.
  int ask(int t) {
    if (ask_[t] >= 0) return ask_[t];
    if (fixed(t)) return ask_[t] = ts_[t].tree_quota_gpus;
    std::int64_t sum = 0;
    for (int k : kids_[t]) sum += ask(k);
    return ask_[t] = static_cast<int>(std::min<std::int64_t>(sum, 1 << 30));
  }

  void distribute(int t, int e) {
    std::vector<int> fixed_kids, open_kids;
    std::int64_t fixed_sum = 0, open_ask = 0;
    for (int k : kids_[t]) {
      if (fixed(k)) {
        fixed_kids.push_back(k);
        fixed_sum += ts_[k].tree_quota_gpus;
      } else {
        open_kids.push_back(k);
        open_ask += ask(k);
      }
    }
    std::vector<std::pair<int, int>> give;  // (child, its subtree guarantee)
    int own = 0;
    if (fixed_sum > e) {
      std::vector<double> w;
      for (int k : fixed_kids) w.push_back(ts_[k].tree_quota_gpus);
      const auto got = apportion(e, w);
      std::string asked, scaled;
      for (std::size_t i = 0; i < fixed_kids.size(); ++i) {
        const Tenant& k = ts_[fixed_kids[i]];
        asked += (i ? ", " : "") + k.name + " " + std::to_string(k.tree_quota_gpus);
        scaled += (i ? ", " : "") + k.name + " " + std::to_string(got[i]);
        give.emplace_back(fixed_kids[i], got[i]);
      }
      problems_.push_back(name_of(ts_[t]) + ": its sub-tenants' quotas (" + asked + ": " +
                          std::to_string(fixed_sum) + " GPUs) exceed its own " + std::to_string(e) +
                          " GPUs; their guarantees are scaled to fit (" + scaled + ")");
      for (int k : open_kids) give.emplace_back(k, 0);
    } else {
      for (int k : fixed_kids) give.emplace_back(k, ts_[k].tree_quota_gpus);
      const int rest = e - static_cast<int>(fixed_sum);
      if (open_kids.empty()) {
        own = rest;
      } else {
        std::vector<double> asks, weights;
        for (int k : open_kids) {
          asks.push_back(ask(k));
          weights.push_back(ts_[k].weight);
        }
        const bool enough = open_ask <= rest;
        const auto got =
            enough ? apportion(rest - static_cast<int>(open_ask), weights) : apportion(rest, asks);
        for (std::size_t i = 0; i < open_kids.size(); ++i)
          give.emplace_back(open_kids[i], got[i] + (enough ? static_cast<int>(asks[i]) : 0));
      }
    }
    ts_[t].quota_gpus = own;
    for (const auto& [k, g] : give) {
      if (kids_[k].empty()) {
        ts_[k].quota_gpus = g;
      } else {
        distribute(k, g);
      }
    }
  }

  std::vector<Tenant>& ts_;
  std::vector<int> parent_;
  std::vector<std::vector<int>> kids_;
  std::vector<int> ask_;
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> resolve_tenant_tree(std::vector<Tenant>& tenants, int cluster_gpus) {
  return Resolver(tenants).run(cluster_gpus);
}

std::vector<std::string> check_tenant_tree(std::vector<Tenant> tenants, int cluster_gpus) {
  return resolve_tenant_tree(tenants, cluster_gpus);
}

TenantTree::TenantTree(std::span<const Tenant> tenants)
    : parent_(tenants.size(), -1),
      depth_(tenants.size(), 0),
      guarantee_(tenants.size(), 0),
      in_tree_(tenants.size(), 0) {
  const std::size_t n = tenants.size();
  for (std::size_t i = 0; i < n; ++i) {
    guarantee_[i] = tenants[i].quota_gpus;
    if (tenants[i].parent.valid() && tenants[i].parent.index() < n) {
      parent_[i] = static_cast<int>(tenants[i].parent.index());
      in_tree_[i] = in_tree_[parent_[i]] = 1;
      flat_ = false;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    int d = 0;
    for (int a = parent_[i]; a >= 0 && d <= static_cast<int>(n); a = parent_[a]) ++d;
    depth_[i] = d;
  }
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(),
                   [&](int a, int b) { return depth_[a] > depth_[b]; });
  for (int t : order_)
    if (parent_[t] >= 0) guarantee_[parent_[t]] += guarantee_[t];
}

void TenantTree::subtree_sums(std::span<const std::int64_t> own,
                              std::vector<std::int64_t>& out) const {
  out.assign(own.begin(), own.end());
  if (flat_) return;
  for (int t : order_)
    if (parent_[t] >= 0) out[parent_[t]] += out[t];
}

bool TenantTree::may_reclaim(std::size_t claimant, std::size_t victim,
                             std::span<const std::int64_t> subtree_use, int unit) const {
  if (flat_) return true;
  auto is_ancestor_of_claimant = [&](int x) {
    for (int a = static_cast<int>(claimant); a >= 0; a = parent_[a])
      if (a == x) return true;
    return false;
  };
  for (int x = parent_[victim]; x >= 0; x = parent_[x]) {
    if (is_ancestor_of_claimant(x)) break;  // the lowest common ancestor
    if (subtree_use[x] <= std::int64_t{guarantee_[x]} * unit) return false;
  }
  return true;
}

int TenantTree::inside_rank(std::size_t t, std::span<const std::int64_t> subtree_milli) const {
  if (flat_) return 0;
  for (int x = parent_[t]; x >= 0; x = parent_[x])
    if (subtree_milli[x] < std::int64_t{guarantee_[x]} * kMilliPerGpu) return depth_[x] + 1;
  return 0;
}

}  // namespace ds
