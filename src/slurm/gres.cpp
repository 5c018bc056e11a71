#include "slurm/gres.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace ds::slurm {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t p = 0;
  while (p <= s.size()) {
    std::size_t e = s.find(sep, p);
    if (e == std::string::npos) e = s.size();
    if (e > p) out.push_back(s.substr(p, e - p));
    p = e + 1;
  }
  return out;
}

// "g12" -> 12; -1 when the type is not an index type.
int index_type(const std::string& t) {
  if (t.size() < 2 || t[0] != 'g') return -1;
  int k = -1;
  auto [p, ec] = std::from_chars(t.data() + 1, t.data() + t.size(), k);
  if (ec != std::errc() || p != t.data() + t.size() || k < 0 || k >= 64) return -1;
  return k;
}

// "IDX:0-1,3" inside "(...)" -> mask
std::uint64_t idx_mask(const std::string& d) {
  const auto p = d.find("IDX:");
  if (p == std::string::npos) return 0;
  const auto end = d.find(')', p);
  std::uint64_t mask = 0;
  for (const auto& r :
       split(d.substr(p + 4, end == std::string::npos ? std::string::npos : end - p - 4), ',')) {
    const auto dash = r.find('-');
    const long a = std::strtol(r.c_str(), nullptr, 10);
    const long b = dash == std::string::npos ? a : std::strtol(r.c_str() + dash + 1, nullptr, 10);
    for (long k = a; k <= b && k < 64 && k >= 0; ++k) mask |= std::uint64_t{1} << k;
  }
  return mask;
}

// A count as Slurm writes it ("4", "4(IDX:0-3)"): its leading number, atoi's reading but
// saturated (no GPU count comes near kMaxCount; a forged one must not overflow a sum).
constexpr int kMaxCount = 1'000'000;
int count_of(const std::string& s) {
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  return static_cast<int>(std::clamp<long long>(v, -1, kMaxCount));
}

}  // namespace

GresRequest parse_gres_request(const std::string& tres) {
  GresRequest r;
  for (std::string e : split(tres, ',')) {
    if (e.rfind("gres:", 0) == 0 || e.rfind("gres/", 0) == 0) e = e.substr(5);
    const auto f = split(e, ':');
    if (f.empty()) continue;
    const bool gpu = f[0] == "gpu", slot = f[0] == "gpushare";
    if (!gpu && !slot) {
      r.kind = GresKind::Other;
      continue;
    }
    const int count = f.size() >= 3 ? count_of(f[2]) : f.size() == 2 ? count_of(f[1]) : 1;
    const int k = f.size() >= 3 ? index_type(f[1]) : -1;
    if (count <= 0) continue;  // a cleared entry
    if (k < 0) {
      if (gpu) r.untyped = std::min(r.untyped + count, kMaxCount);
      if (r.kind == GresKind::None) r.kind = GresKind::Other;
      continue;
    }
    const GresKind kind = gpu ? GresKind::Whole : GresKind::Slot;
    if (r.kind != GresKind::None && r.kind != kind) r.kind = GresKind::Other;
    if (r.kind == GresKind::None) r.kind = kind;
    r.mask |= std::uint64_t{1} << k;
  }
  if (r.untyped > 0) r.kind = GresKind::Other;
  return r;
}

std::string format_gres_request(GresKind kind, std::uint64_t mask) {
  const char* name = kind == GresKind::Slot ? "gpushare" : "gpu";
  std::string s;
  for (int k = 0; k < 64; ++k)
    if (mask >> k & 1)
      s += (s.empty() ? "" : ",") + std::string("gres:") + name + ":g" + std::to_string(k) + ":1";
  return s;
}

GresAlloc parse_gres_alloc(const std::string& detail) {
  // Entries are separated by commas outside parentheses.
  GresAlloc a;
  std::string cur;
  int depth = 0;
  auto flush = [&] {
    const auto paren = cur.find('(');
    const std::string head = cur.substr(0, paren);
    const std::uint64_t mask = idx_mask(cur);
    if (head.rfind("gpushare", 0) == 0)
      a.slots |= mask;
    else if (head.rfind("gpu", 0) == 0)
      a.gpus |= mask;
    cur.clear();
  };
  for (char c : detail) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0)
      flush();
    else
      cur += c;
  }
  if (!cur.empty()) flush();
  return a;
}

int parse_gpu_count(const std::string& gres) {
  int total = 0;
  for (std::string e : split(gres, ',')) {
    e = e.substr(0, e.find('('));
    const auto f = split(e, ':');
    if (f.size() < 2 || f[0] != "gpu") continue;
    total = std::min(total + std::max(0, count_of(f.back())), kMaxCount);
  }
  return total;
}

std::optional<Expressed> express_start(const std::map<std::string, std::uint64_t>& placement,
                                       bool shared, const GresRequest& fixed,
                                       const std::vector<std::string>& candidates,
                                       const Occupancy& free, GresKind partner) {
  const GresKind colocated = partner == GresKind::Slot ? GresKind::Whole : GresKind::Slot;
  if (placement.empty()) return std::nullopt;
  const std::uint64_t mask = placement.begin()->second;
  for (const auto& [node, m] : placement)
    if (m != mask) return std::nullopt;  // one tres_per_node for every node of the job
  Expressed out;
  switch (fixed.kind) {
    case GresKind::None:
      out.gpus = placement;
      out.kind = shared ? colocated : GresKind::Whole;
      out.write_request = true;
      return out;
    case GresKind::Other:
      return std::nullopt;  // a request DeepShare did not write
    case GresKind::Whole:
    case GresKind::Slot:
      break;
  }
  out.kind = fixed.kind;
  if (shared) {
    if (fixed.kind != colocated || mask != fixed.mask) return std::nullopt;
    out.gpus = placement;
    return out;
  }
  auto usable = [&](const std::string& node) {
    return free.idle(node, fixed.mask) && (fixed.kind == GresKind::Whole || free.may_share(node));
  };
  bool here = true;
  for (const auto& [node, m] : placement) here = here && usable(node);
  if (here) {
    for (const auto& [node, m] : placement) out.gpus[node] = fixed.mask;
    return out;
  }
  for (const auto& node : candidates) {
    if (out.gpus.size() == placement.size()) break;
    if (usable(node)) out.gpus[node] = fixed.mask;
  }
  if (out.gpus.size() != placement.size()) return std::nullopt;
  return out;
}

std::vector<std::uint32_t> expand_tasks(const std::string& text, std::size_t limit) {
  std::vector<std::uint32_t> out;
  const std::string s = text.substr(0, text.find('%'));
  std::size_t p = 0;
  while (p < s.size() && out.size() < limit) {
    std::size_t e = s.find(',', p);
    if (e == std::string::npos) e = s.size();
    const std::string r = s.substr(p, e - p);
    p = e + 1;
    char* end = nullptr;
    const unsigned long a = std::strtoul(r.c_str(), &end, 10);
    unsigned long b = a, step = 1;
    if (*end == '-') b = std::strtoul(end + 1, &end, 10);
    if (*end == ':') step = std::max(1ul, std::strtoul(end + 1, &end, 10));
    for (unsigned long k = a; k <= b && out.size() < limit; k += step)
      out.push_back(static_cast<std::uint32_t>(k));
  }
  return out;
}

}  // namespace ds::slurm
