#include "slurm/record.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>

#include "core/error.hpp"
#include "slurm/record_keys.hpp"

namespace ds::slurm {
namespace {

constexpr std::array<const char*, 9> kRequestOrder = {"v", "gpus",  "n",     "nr", "mem",
                                                      "u", "begin", "trace", "gm"};

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

[[noreturn]] void bad(const std::string& key, const std::string& value, const std::string& want) {
  throw InputError("AdminComment key " + key + "='" + value + "': " + want);
}

const RecordKey& spec(std::string_view key) {
  for (const RecordKey& k : kRecordKeys)
    if (k.name == key) return k;
  throw std::logic_error("record key " + std::string(key) + " is not in gate.KEYS");
}

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_name(std::string_view v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

// "A" or "A|B": names separated by '|', none empty (gate.is_models).
bool is_models(std::string_view v) {
  for (std::size_t at = 0;;) {
    const std::size_t bar = v.find('|', at);
    if (!is_name(v.substr(at, bar == std::string_view::npos ? bar : bar - at))) return false;
    if (bar == std::string_view::npos) return true;
    at = bar + 1;
  }
}

// The grammar of gate.check_value (deploy/slurm/job_submit.lua), kind by kind.
bool well_formed(const RecordKey& k, const std::string& v) {
  if (k.kind == "int")
    return digits(v) || (k.min < 0 && v.size() > 1 && v[0] == '-' && digits(v.substr(1)));
  if (k.kind == "num") {
    const auto dot = v.find('.');
    if (dot == std::string::npos) return digits(v);
    const std::string_view a(v.data(), dot), b(v.data() + dot + 1, v.size() - dot - 1);
    return (digits(a) && (b.empty() || digits(b))) || (a.empty() && digits(b));
  }
  if (k.kind == "flag") return v == "0" || v == "1";
  if (k.kind == "name") return is_name(v);
  if (k.kind == "models") return is_models(v);
  return true;  // text, gpus: checked where they are read
}

std::string range_of(const RecordKey& k) {
  return "expected " + std::to_string(k.min) + ".." + std::to_string(k.max);
}

// A whole number of `key` (gate.KEYS' range), at most `site_max` (the site's bound).
std::int64_t integer(const RecordFields& f, const std::string& key, std::int64_t fallback,
                     std::int64_t site_max = INT64_MAX) {
  auto it = f.find(key);
  if (it == f.end()) return fallback;
  const RecordKey& k = spec(key);
  const std::string& s = it->second;
  std::int64_t v = 0;
  if (!well_formed(k, s)) bad(key, s, "expected a whole number");
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < k.min || v > k.max)
    bad(key, s, range_of(k));
  if (v > site_max) bad(key, s, "more than this site's " + std::to_string(site_max));
  return v;
}

double real(const RecordFields& f, const std::string& key, double fallback,
            double site_max = INFINITY) {
  auto it = f.find(key);
  if (it == f.end()) return fallback;
  const RecordKey& k = spec(key);
  if (!well_formed(k, it->second)) bad(key, it->second, "expected a number");
  const double v = std::strtod(it->second.c_str(), nullptr);
  if (v < static_cast<double>(k.min) || v > static_cast<double>(k.max))
    bad(key, it->second, range_of(k));
  if (v > site_max) bad(key, it->second, "more than this site's " + std::to_string(site_max));
  return v;
}

bool flag(const RecordFields& f, const std::string& key) {
  auto it = f.find(key);
  if (it == f.end()) return false;
  if (!well_formed(spec(key), it->second)) bad(key, it->second, "expected 0 or 1");
  return it->second == "1";
}

std::map<std::string, std::uint64_t> parse_gpus(const std::string& g) {
  std::map<std::string, std::uint64_t> out;
  for (std::size_t pos = 0; pos < g.size();) {
    std::size_t e = g.find('/', pos);
    const std::string part = g.substr(pos, e == std::string::npos ? std::string::npos : e - pos);
    pos = e == std::string::npos ? g.size() : e + 1;
    const auto at = part.find('@');
    if (at == std::string::npos || at == 0) bad("g", g, "expected node@i,j/node@k");
    // A node is a Slurm hostname: the name grammar, so a padded name cannot change in a
    // round trip through the comment's trimming.
    if (!is_name(part.substr(0, at)))
      bad("g", g, "node names are letters, digits, '.', '_' and '-'");
    std::uint64_t mask = 0;
    for (std::size_t q = at + 1; q < part.size();) {
      std::size_t c = part.find(',', q);
      const std::string n = part.substr(q, c == std::string::npos ? std::string::npos : c - q);
      q = c == std::string::npos ? part.size() : c + 1;
      int k = -1;
      auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), k);
      if (ec != std::errc() || p != n.data() + n.size() || k < 0 || k >= 64)
        bad("g", g, "GPU indices must be 0..63");
      mask |= std::uint64_t{1} << k;
    }
    if (!mask) bad("g", g, "no GPU for node " + part.substr(0, at));
    out[part.substr(0, at)] = mask;
  }
  return out;
}

}  // namespace

RecordFields parse_fields(const std::string& text) {
  RecordFields f;
  const std::string t = trim(text);
  if (t.rfind("ds:", 0) != 0) return f;
  for (std::size_t p = 3; p < t.size();) {
    std::size_t e = t.find(';', p);
    const std::string kv = t.substr(p, e == std::string::npos ? std::string::npos : e - p);
    p = e == std::string::npos ? t.size() : e + 1;
    const auto eq = kv.find('=');
    if (eq == std::string::npos) {
      if (!trim(kv).empty()) f[trim(kv)] = "";
    } else {
      f[trim(kv.substr(0, eq))] = trim(kv.substr(eq + 1));
    }
  }
  return f;
}

std::string format_fields(const RecordFields& f) {
  std::string out = "ds:";
  bool first = true;
  auto put = [&](const std::string& k, const std::string& v) {
    out += (first ? "" : ";") + k + "=" + v;
    first = false;
  };
  for (const char* k : kRequestOrder)
    if (auto it = f.find(k); it != f.end()) put(k, it->second);
  for (const auto& [k, v] : f) {
    bool request = false;
    for (const char* r : kRequestOrder) request = request || k == r;
    if (!request) put(k, v);
  }
  return out;
}

std::string mask_to_list(std::uint64_t mask) {
  std::string s;
  for (int k = 0; k < 64; ++k)
    if (mask >> k & 1) s += (s.empty() ? "" : ",") + std::to_string(k);
  return s;
}

std::optional<Record> parse_record(const std::string& text, const RecordLimits& limits) {
  const RecordFields f = parse_fields(text);
  if (f.empty() || !f.count("gpus")) return std::nullopt;
  Record r;
  if (integer(f, "v", 1) != 1) bad("v", f.at("v"), "unknown record version");
  r.request.gpus = static_cast<int>(integer(f, "gpus", 1, limits.max_gpus));
  r.request.nodes = static_cast<int>(integer(f, "n", 1, limits.max_gpus));
  r.request.no_requeue = flag(f, "nr");
  r.request.mem_mib = real(f, "mem", 0, limits.max_mem_mib);
  r.request.util = real(f, "u", -1);
  r.request.begin_s = integer(f, "begin", 0);
  if (auto it = f.find("trace"); it != f.end()) {
    if (!well_formed(spec("trace"), it->second))
      bad("trace", it->second, "letters, digits, '.', '_' and '-' only");
    r.request.trace = it->second;
  }
  if (auto it = f.find("gm"); it != f.end()) {
    if (!well_formed(spec("gm"), it->second))
      bad("gm", it->second, "GPU model names (letters, digits, '.', '_', '-') separated by '|'");
    r.request.gpu_model = it->second;
  }
  if (f.count("r")) {
    Pin p;
    p.restart = static_cast<std::uint32_t>(integer(f, "r", 0));
    p.borrowed = flag(f, "b");
    p.shared = flag(f, "s");
    p.mps_percent = static_cast<int>(integer(f, "m", 100));
    p.mem_limit_mib = integer(f, "l", 0);
    p.decided_ms = integer(f, "t", 0);
    auto g = f.find("g");
    if (g == f.end() || g->second.empty()) bad("g", "", "a pin names its GPUs");
    p.gpus = parse_gpus(g->second);
    r.pin = std::move(p);
  }
  if (f.count("p")) r.preempted_at = static_cast<std::uint32_t>(integer(f, "p", 0));
  if (auto it = f.find("x"); it != f.end()) r.refused = it->second;
  if (f.count("e")) r.epoch = static_cast<std::uint64_t>(integer(f, "e", 1));
  return r;
}

void write_pin(RecordFields& f, const Pin& p) {
  f["r"] = std::to_string(p.restart);
  f["b"] = p.borrowed ? "1" : "0";
  f["s"] = p.shared ? "1" : "0";
  f["m"] = std::to_string(p.mps_percent);
  f["t"] = std::to_string(p.decided_ms);
  if (p.mem_limit_mib > 0)
    f["l"] = std::to_string(p.mem_limit_mib);
  else
    f.erase("l");
  std::string g;
  for (const auto& [node, mask] : p.gpus)
    g += (g.empty() ? "" : "/") + node + "@" + mask_to_list(mask);
  f["g"] = g;
}

void clear_pin(RecordFields& f) {
  for (const char* k : {"r", "b", "s", "g", "m", "l", "t"}) f.erase(k);
}

bool has_pin_keys(const std::string& comment) {
  const RecordFields f = parse_fields(comment);
  for (const RecordKey& k : kRecordKeys)
    if (k.writer == "pin" && f.count(std::string(k.name))) return true;
  return false;
}

bool is_gpu_model(std::string_view name) {
  const bool index_type = name.size() >= 2 && name[0] == 'g' && digits(name.substr(1));
  return is_name(name) && !index_type;  // g0..gN name GPU indices on DeepShare's nodes
}

std::optional<std::int64_t> comment_begin(const std::string& comment) {
  const RecordFields f = parse_fields(comment);
  const auto it = f.find("begin");
  if (it == f.end()) return std::nullopt;
  try {
    return integer(f, "begin", 0);
  } catch (const InputError&) {
    return std::nullopt;  // a malformed user value: the record's begin stands
  }
}

}  // namespace ds::slurm
