#include "slurm/pin.hpp"

#include <bit>
#include <cstdlib>

namespace ds::slurm {

CommentFields parse_comment(const std::string& c) {
  CommentFields f;
  if (c.rfind("ds:", 0) != 0) return f;
  std::size_t p = 3;
  while (p < c.size()) {
    std::size_t e = c.find(';', p);
    std::string kv = c.substr(p, e == std::string::npos ? std::string::npos : e - p);
    p = e == std::string::npos ? c.size() : e + 1;
    auto eq = kv.find('=');
    if (eq != std::string::npos) f[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return f;
}

std::string format_comment(const CommentFields& f) {
  std::string out = "ds:";
  bool first = true;
  // r first so that the TaskProlog's pattern finds it; the rest in key order
  auto put = [&](const std::string& k, const std::string& v) {
    out += (first ? "" : ";") + k + "=" + v;
    first = false;
  };
  if (auto it = f.find("r"); it != f.end()) put("r", it->second);
  for (const auto& [k, v] : f)
    if (k != "r") put(k, v);
  return out;
}

std::string mask_to_list(std::uint64_t mask) {
  std::string s;
  for (int k = 0; k < 64; ++k)
    if (mask >> k & 1) s += (s.empty() ? "" : ",") + std::to_string(k);
  return s;
}

std::optional<Pin> read_pin(const CommentFields& f) {
  auto r = f.find("r");
  if (r == f.end()) return std::nullopt;
  Pin p;
  p.restart = static_cast<std::uint32_t>(std::strtoul(r->second.c_str(), nullptr, 10));
  auto get = [&](const char* k) -> std::string {
    auto it = f.find(k);
    return it == f.end() ? "" : it->second;
  };
  p.borrowed = get("b") == "1";
  p.shared = get("s") == "1";
  if (auto m = get("m"); !m.empty()) p.mps_percent = std::atoi(m.c_str());
  if (auto t = get("t"); !t.empty()) p.decided_ms = std::strtoll(t.c_str(), nullptr, 10);
  const std::string g = get("g");
  for (std::size_t pos = 0; pos < g.size();) {
    std::size_t e = g.find('/', pos);
    std::string part = g.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
    pos = e == std::string::npos ? g.size() : e + 1;
    auto at = part.find('@');
    if (at == std::string::npos) continue;
    std::uint64_t mask = 0;
    for (std::size_t q = at + 1; q < part.size();) {
      std::size_t c = part.find(',', q);
      int k = std::atoi(part.substr(q, c == std::string::npos ? std::string::npos : c - q).c_str());
      if (k >= 0 && k < 64) mask |= std::uint64_t{1} << k;
      q = c == std::string::npos ? part.size() : c + 1;
    }
    p.gpus[part.substr(0, at)] = mask;
  }
  return p;
}

void write_pin(CommentFields& f, const Pin& p) {
  f["r"] = std::to_string(p.restart);
  f["b"] = p.borrowed ? "1" : "0";
  f["s"] = p.shared ? "1" : "0";
  f["m"] = std::to_string(p.mps_percent);
  f["t"] = std::to_string(p.decided_ms);
  std::string g;
  for (const auto& [node, mask] : p.gpus)
    g += (g.empty() ? "" : "/") + node + "@" + mask_to_list(mask);
  f["g"] = g;
}

void clear_pin(CommentFields& f) {
  for (const char* k : {"r", "b", "s", "m", "t", "g"}) f.erase(k);
}

}  // namespace ds::slurm
