#include "trace/slurm_nodes.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "trace/slurm_text.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace {

// Memory of common data-centre GPUs (GiB), by the model name lowercased without "nvidia",
// "tesla" and punctuation. The base model's memory where variants differ (A100: 40; name
// the 80 GB one a100_80g or pass --gpu-memory a100=80).
struct Known {
  std::string_view model;
  int gib;
};
constexpr std::array<Known, 33> kKnown = {{
    {"h200", 141},     {"h100", 80},    {"h800", 80},    {"a100", 40},    {"a800", 80},
    {"a40", 48},       {"a30", 24},     {"a10", 24},     {"a10g", 24},    {"a16", 16},
    {"a2", 16},        {"l40", 48},     {"l40s", 48},    {"l4", 24},      {"t4", 16},
    {"v100", 16},      {"v100s", 32},   {"v100m16", 16}, {"v100m32", 32}, {"p100", 16},
    {"p40", 24},       {"p4", 8},       {"k80", 12},     {"rtx3090", 24}, {"rtx4090", 24},
    {"rtxa6000", 48},  {"a6000", 48},   {"rtx6000", 24}, {"rtx8000", 48}, {"titanrtx", 24},
    {"rtx2080ti", 11}, {"mi250x", 128}, {"mi300x", 192},
}};

std::string normalized(std::string_view model) {
  std::string s;
  for (char c : model)
    if (std::isalnum(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view drop : {"nvidia", "tesla", "geforce"})
    if (const auto at = s.find(drop); at != std::string::npos) s.erase(at, drop.size());
  return s;
}

// "a100_80g", "a100-sxm4-80gb": a separate token of digits followed by g or gb.
std::optional<int> gib_in_name(std::string_view model) {
  std::size_t at = 0;
  while (at <= model.size()) {
    std::size_t end = at;
    while (end < model.size() && std::isalnum(static_cast<unsigned char>(model[end]))) ++end;
    std::string token(model.substr(at, end - at));
    std::transform(token.begin(), token.end(), token.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::size_t d = 0;
    while (d < token.size() && std::isdigit(static_cast<unsigned char>(token[d]))) ++d;
    const std::string_view unit = std::string_view(token).substr(d);
    if (d > 0 && d <= 4 && (unit == "g" || unit == "gb")) return std::stoi(token.substr(0, d));
    at = end + 1;
  }
  return std::nullopt;
}

struct Token {
  std::string_view key, value;
  long line = 0, column = 0;
  bool has_value = false;  // written Key=Value (a word without '=' is a key alone)
};

// Assumption 1: the Key=Value tokens of the file, values continued over '='-less words on the
// same line.
std::vector<Token> tokens(const std::string& text) {
  std::vector<Token> out;
  long line = 1;
  std::size_t line_start = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\n') {
      ++line;
      line_start = ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    const std::string_view word(text.data() + i, end - i);
    const auto eq = word.find('=');
    if (eq == std::string_view::npos && !out.empty() && out.back().has_value &&
        out.back().line == line) {
      const char* begin = out.back().value.data();  // extend the value over the word
      out.back().value =
          std::string_view(begin, static_cast<std::size_t>(text.data() + end - begin));
    } else {
      const bool has = eq != std::string_view::npos;
      out.push_back(Token{word.substr(0, has ? eq : word.size()),
                          has ? word.substr(eq + 1) : word.substr(word.size()), line,
                          static_cast<long>(i - line_start + 1), has});
    }
    i = end;
  }
  return out;
}

struct RawNode {
  std::string name;
  std::string_view gres, cfg_tres, partitions, state;
  Token at;
};

std::vector<RawNode> raw_nodes(const std::string& path, const std::string& text) {
  std::vector<RawNode> out;
  for (const Token& t : tokens(text)) {
    if (t.key == "NodeName") {
      if (t.value.empty())
        throw InputError(SourceLocation{path, t.line, t.column}, "NodeName= with no name");
      out.push_back(RawNode{std::string(t.value), {}, {}, {}, {}, t});
      continue;
    }
    if (out.empty())
      throw InputError(SourceLocation{path, t.line, t.column},
                       "expected `scontrol show nodes` output, which starts with NodeName=, got " +
                           quote_input(t.key));
    RawNode& n = out.back();
    if (t.key == "Gres") n.gres = t.value;
    if (t.key == "CfgTRES") n.cfg_tres = t.value;
    if (t.key == "Partitions") n.partitions = t.value;
    if (t.key == "State") n.state = t.value;
  }
  if (out.empty())
    throw InputError(SourceLocation{path}, "no node: expected `scontrol show nodes` output");
  return out;
}

// Assumptions 2 and 3: (model, GPUs) of one node; models empty for no model.
std::vector<std::pair<std::string, std::int64_t>> node_gpus(const std::string& path,
                                                            const RawNode& n) {
  std::string error;
  const auto gres = parse_gres(n.gres, error);
  if (!error.empty())
    throw InputError(SourceLocation{path, n.at.line, n.at.column},
                     "node " + quote_input(n.name) + ": Gres: expected " + error);
  std::vector<std::pair<std::string, std::int64_t>> by_model;
  std::int64_t total = 0;
  bool index_layout = true;
  for (const auto& e : gres) {
    if (e.name != "gpu") continue;
    total += e.count;
    index_layout = index_layout && is_index_gpu_type(e.type) && e.count == 1;
    auto it = std::find_if(by_model.begin(), by_model.end(),
                           [&](const auto& m) { return m.first == e.type; });
    if (it == by_model.end())
      by_model.emplace_back(e.type, e.count);
    else
      it->second += e.count;
  }
  if (total == 0) {
    const GpuTres tres = parse_tres(n.cfg_tres, error);
    return tres.gpus > 0 ? decltype(by_model){{"", tres.gpus}} : decltype(by_model){};
  }
  if (index_layout) return {{"", total}};
  return by_model;
}

bool in_partition(std::string_view list, const std::string& p) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (list.substr(0, comma) == p) return true;
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return false;
}

}  // namespace

std::int64_t slurm_gpu_memory_mib(std::string_view model) {
  if (const auto gib = gib_in_name(model); gib && *gib > 0) return std::int64_t{*gib} * 1024;
  const std::string n = normalized(model);
  for (const auto& k : kKnown)
    if (k.model == n) return std::int64_t{k.gib} * 1024;
  return 0;
}

GpuMemoryRule::GpuMemoryRule(const std::vector<std::string>& overrides) {
  for (const auto& g : overrides) {
    const auto eq = g.find('=');
    const auto gib = eq == std::string::npos ? std::nullopt : parse_double(g.substr(eq + 1));
    const double max = static_cast<double>(limits::kMaxGpuMemoryMib) / 1024;
    if (eq == 0 || !gib || !(*gib >= 1.0 / 1024 && *gib <= max))
      throw InputError("--gpu-memory " + quote_input(g) + ": expected MODEL=GIB with GIB in " +
                       range_text(1.0 / 1024, max) + ", e.g. a100=80");
    const std::string model = g.substr(0, eq) == "*" ? "*" : normalized(g.substr(0, eq));
    mib_[model] = std::max<std::int64_t>(1, std::llround(*gib * 1024));
  }
}

std::optional<std::int64_t> GpuMemoryRule::named(std::string_view model) const {
  if (const auto o = mib_.find(normalized(model)); o != mib_.end()) return o->second;
  return std::nullopt;
}

std::int64_t GpuMemoryRule::mib(std::string_view model) const {
  if (const auto n = named(model)) return *n;
  if (const std::int64_t m = slurm_gpu_memory_mib(model); m > 0) return m;
  if (const auto any = mib_.find("*"); any != mib_.end()) return any->second;
  return 0;
}

SlurmCluster read_slurm_nodes(const std::string& path, const SlurmNodesOptions& options) {
  const std::string text = read_input_file(path);
  const GpuMemoryRule memory(options.gpu_memory);
  SlurmCluster out;
  NodeTally tally;
  std::size_t gpu_less = 0, split = 0, other_partition = 0;
  std::vector<std::string> unavailable;
  std::map<std::string, int> assumed;  // model -> nodes given the default memory
  std::unordered_map<std::string, long> seen;
  for (const RawNode& n : raw_nodes(path, text)) {
    const SourceLocation where{path, n.at.line, n.at.column};
    if (auto [it, fresh] = seen.emplace(n.name, n.at.line); !fresh)
      throw InputError(where, "node " + quote_input(n.name) + " is listed twice (first on line " +
                                  std::to_string(it->second) + ")");
    if (!options.partition.empty() && !in_partition(n.partitions, options.partition)) {
      ++other_partition;
      continue;
    }
    const auto models = node_gpus(path, n);
    if (models.empty()) {
      ++gpu_less;
      continue;
    }
    if (models.size() > 1) ++split;
    for (const auto& [model, gpus] : models) {
      if (gpus > kMaxGpusPerNode)
        throw InputError(where, "node " + quote_input(n.name) + ": " + std::to_string(gpus) +
                                    " GPUs" + (model.empty() ? "" : " of " + quote_input(model)) +
                                    "; DeepShare models at most " +
                                    std::to_string(kMaxGpusPerNode) + " GPUs per node");
      tally.add(where, 1, gpus);
      std::int64_t mib = memory.mib(model);
      if (mib == 0) {
        mib = kDefaultGpuMemoryMib;
        ++assumed[model];
      }
      out.cluster.add_nodes(1, static_cast<int>(gpus), mib, model, TenantId());
      out.cluster.nodes.back().name = models.size() > 1 ? n.name + ":" + model : n.name;
    }
    const std::string state(n.state);
    if (state.find("DOWN") != std::string::npos || state.find("DRAIN") != std::string::npos ||
        state.find("FAIL") != std::string::npos)
      unavailable.push_back(n.name + " (" + state + ")");
  }
  if (out.cluster.nodes.empty())
    throw InputError(
        SourceLocation{path},
        "no node with GPUs" +
            (options.partition.empty() ? std::string()
                                       : " in partition " + quote_input(options.partition)) +
            " (a node's GPUs are its Gres gpu entries)");
  auto& notes = out.notes;
  if (gpu_less > 0)
    notes.push_back("slurm: skipped " + std::to_string(gpu_less) + " nodes without GPUs");
  if (other_partition > 0)
    notes.push_back("slurm: skipped " + std::to_string(other_partition) +
                    " nodes outside partition " + quote_input(options.partition));
  if (split > 0)
    notes.push_back("slurm: " + std::to_string(split) +
                    " nodes hold GPUs of several models: each model is a node of its own "
                    "(NAME:MODEL)");
  for (const auto& [model, count] : assumed)
    notes.push_back(
        "slurm: GPU memory of " +
        (model.empty() ? std::string("nodes without a GPU model") : "model " + quote_input(model)) +
        " is not known: assumed 24 GiB on " + std::to_string(count) +
        " nodes (set it with --gpu-memory " +
        (model.empty() ? std::string("'*=GIB'") : model + "=GIB") + ")");
  if (!unavailable.empty())
    notes.push_back("slurm: " + std::to_string(unavailable.size()) +
                    " nodes were down or drained when dumped, kept as capacity (e.g. " +
                    unavailable.front() + ")");
  return out;
}

}  // namespace ds
