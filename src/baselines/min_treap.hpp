// An ordered set of keys, each with a value, that finds the first key at or after a bound
// whose value is below a limit in O(log n) (a treap whose nodes keep their subtree's least
// value). Lucid's pairing search (lucid.cpp) asks it for the first queued job, in queue
// order, whose GPU memory leaves room for a given partner.
// The tree's shape comes from a hash of each key's insertion count (deterministic); it never
// affects an answer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ds {

template <class Key>
class MinTreap {
 public:
  [[nodiscard]] bool empty() const { return root_ < 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

  void insert(const Key& k, double value) {
    const int n = alloc(k, value);
    int left = -1, right = -1;
    split(root_, k, left, right);
    root_ = merge(merge(left, n), right);
    ++size_;
  }
  // Removes `k` if present.
  void erase(const Key& k) {
    int left = -1, mid = -1, right = -1;
    split(root_, k, left, right);  // left: < k
    split<true>(right, k, mid, right);
    if (mid >= 0) {
      free_.push_back(mid);
      --size_;
    }
    root_ = merge(left, right);
  }
  // The first key >= lo (> lo when `strict`; from the first when lo is null) whose value
  // is < limit, or null.
  [[nodiscard]] const Key* first_below(const Key* lo, bool strict, double limit) const {
    return find(root_, lo, strict, limit);
  }

 private:
  struct Node {
    Key key;
    double value = 0;
    double least = 0;  // over the subtree
    std::uint64_t rank = 0;
    int left = -1, right = -1;
  };

  int alloc(const Key& k, double value) {
    std::uint64_t z = (counter_++ + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    Node n{k, value, value, z ^ (z >> 31), -1, -1};
    if (!free_.empty()) {
      const int i = free_.back();
      free_.pop_back();
      nodes_[static_cast<std::size_t>(i)] = n;
      return i;
    }
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size() - 1);
  }
  Node& at(int i) { return nodes_[static_cast<std::size_t>(i)]; }
  const Node& at(int i) const { return nodes_[static_cast<std::size_t>(i)]; }
  void pull(int i) {
    Node& n = at(i);
    n.least = n.value;
    if (n.left >= 0) n.least = std::min(n.least, at(n.left).least);
    if (n.right >= 0) n.least = std::min(n.least, at(n.right).least);
  }
  // Inclusive = false: left gets keys < k, right keys >= k; true: left keys <= k, right > k.
  template <bool Inclusive = false>
  void split(int t, const Key& k, int& left, int& right) {
    if (t < 0) {
      left = right = -1;
      return;
    }
    if (Inclusive ? !(k < at(t).key) : at(t).key < k) {
      split<Inclusive>(at(t).right, k, at(t).right, right);
      left = t;
    } else {
      split<Inclusive>(at(t).left, k, left, at(t).left);
      right = t;
    }
    pull(t);
  }
  int merge(int a, int b) {
    if (a < 0) return b;
    if (b < 0) return a;
    if (at(a).rank > at(b).rank) {
      at(a).right = merge(at(a).right, b);
      pull(a);
      return a;
    }
    at(b).left = merge(a, at(b).left);
    pull(b);
    return b;
  }
  const Key* find(int t, const Key* lo, bool strict, double limit) const {
    if (t < 0 || !(at(t).least < limit)) return nullptr;
    const Node& n = at(t);
    const bool in = !lo || (strict ? *lo < n.key : !(n.key < *lo));
    if (!in) return find(n.right, lo, strict, limit);
    if (const Key* k = find(n.left, lo, strict, limit)) return k;
    if (n.value < limit) return &n.key;
    return find(n.right, lo, strict, limit);
  }

  std::vector<Node> nodes_;
  std::vector<int> free_;
  int root_ = -1;
  std::size_t size_ = 0;
  std::uint64_t counter_ = 0;
};

}  // namespace ds
