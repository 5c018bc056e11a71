#include "trace/slurm_text.hpp"

#include <algorithm>
#include <cctype>

#include "core/csv.hpp"
#include "core/limits.hpp"
#include "trace/trace_util.hpp"

namespace ds {
namespace {

// "Def QOS" -> "defqos": column names compare without case or spaces.
std::string folded(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

PipeTable PipeTable::open(const std::string& path, std::string command) {
  return PipeTable(path, read_input_file(path), std::move(command));
}

PipeTable::PipeTable(std::string name, std::string content, std::string command)
    : name_(std::move(name)), content_(std::move(content)), command_(std::move(command)) {
  if (content_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
  if (!next())
    throw InputError(SourceLocation{name_},
                     "file is empty: expected the header line that " + command_ + " prints");
  trailing_ = fields_.size() > 1 && fields_.back().text.empty();
  if (trailing_) fields_.pop_back();
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const std::string f = folded(fields_[i].text);
    for (std::size_t k = 0; k < header_.size(); ++k)
      if (folded(header_[k]) == f && !f.empty())
        throw InputError(where(i), "column " + quote_input(fields_[i].text) +
                                       " appears twice in the header (columns " +
                                       std::to_string(k + 1) + " and " + std::to_string(i + 1) +
                                       "): the first line must be the header that " + command_ +
                                       " prints (not --noheader)");
    header_.emplace_back(trim(fields_[i].text));
  }
}

std::optional<std::size_t> PipeTable::find(std::initializer_list<std::string_view> names) const {
  for (std::string_view n : names) {
    const std::string want = folded(n);
    for (std::size_t i = 0; i < header_.size(); ++i)
      if (folded(header_[i]) == want) return i;
  }
  return std::nullopt;
}

std::size_t PipeTable::require(std::initializer_list<std::string_view> names) const {
  if (auto i = find(names)) return *i;
  std::string have;
  for (const auto& h : header_) have += (have.empty() ? "" : "|") + h;
  throw InputError(SourceLocation{name_, 1}, "missing column " + quote_input(*names.begin()) +
                                                 " (header has: " + quote_input(have, 200) +
                                                 "); write the file with " + command_ +
                                                 " and its header line");
}

void PipeTable::split(std::string_view line, std::vector<Field>& out) const {
  out.clear();
  std::size_t at = 0;
  for (;;) {
    const std::size_t bar = line.find('|', at);
    const std::size_t end = bar == std::string_view::npos ? line.size() : bar;
    out.push_back(Field{line.substr(at, end - at), static_cast<long>(at + 1)});
    if (bar == std::string_view::npos) break;
    at = bar + 1;
  }
}

bool PipeTable::next() {
  while (pos_ < content_.size()) {
    const std::size_t nl = content_.find('\n', pos_);
    const std::size_t end = nl == std::string::npos ? content_.size() : nl;
    std::string_view line(content_.data() + pos_, end - pos_);
    pos_ = end + (nl == std::string::npos ? 0 : 1);
    ++line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    row_ = line;
    split(line, fields_);
    if (header_.empty()) return true;  // the header itself
    if (trailing_ && fields_.size() == header_.size() + 1 && fields_.back().text.empty())
      fields_.pop_back();
    if (fields_.size() != header_.size()) {
      const bool more = fields_.size() > header_.size();
      throw InputError(
          SourceLocation{name_, line_, more ? fields_[header_.size()].column : 0},
          "row has " + std::to_string(fields_.size()) + " fields, the header has " +
              std::to_string(header_.size()) +
              (more ? " (a value holding '|', such as a job name or a comment, shifts the "
                      "columns: leave that field out of --format)"
                    : ""));
    }
    return true;
  }
  return false;
}

SourceLocation PipeTable::where(std::size_t i) const {
  return SourceLocation{name_, line_, i < fields_.size() ? fields_[i].column : 0};
}

void PipeTable::fail(std::size_t i, const std::string& expected) const {
  const std::string column = i < header_.size() ? header_[i] : "#" + std::to_string(i + 1);
  throw InputError(where(i), "field " + quote_input(column) + ": expected " + expected + ", got " +
                                 quote_input(i < fields_.size() ? fields_[i].text : ""));
}

std::optional<std::int64_t> slurm_time(const PipeTable& t, std::size_t column) {
  const std::string_view s = trim(t.field(column));
  if (s.empty() || s == "Unknown" || s == "None") return std::nullopt;
  const auto v = parse_datetime(s);
  if (!v || *v < -limits::kMaxAbsTime / kSecond || *v > limits::kMaxAbsTime / kSecond)
    t.fail(column,
           "a time 'YYYY-MM-DDTHH:MM:SS' from 1869-12-31 to 2070-01-01, or Unknown (Slurm's "
           "default time format: run sacct without SLURM_TIME_FORMAT)");
  return v;
}

std::optional<std::int64_t> parse_slurm_duration(std::string_view s) {
  s = trim(s);
  std::int64_t days = 0;
  if (const auto dash = s.find('-'); dash != std::string_view::npos) {
    if (!all_digits(s.substr(0, dash)) || dash > 6) return std::nullopt;
    days = *parse_int(s.substr(0, dash));
    s.remove_prefix(dash + 1);
  }
  if (const auto dot = s.find('.'); dot != std::string_view::npos) {
    if (!all_digits(s.substr(dot + 1))) return std::nullopt;
    s = s.substr(0, dot);
  }
  std::int64_t total = 0;
  int parts = 0;
  while (!s.empty()) {
    const auto colon = s.find(':');
    const std::string_view part = s.substr(0, colon);
    if (!all_digits(part) || part.size() > 6 || ++parts > 3) return std::nullopt;
    total = total * 60 + *parse_int(part);
    s = colon == std::string_view::npos ? std::string_view() : s.substr(colon + 1);
    if (colon != std::string_view::npos && s.empty()) return std::nullopt;
  }
  if (parts == 0) return std::nullopt;
  return days * 86400 + total;
}

std::optional<std::int64_t> slurm_duration(const PipeTable& t, std::size_t column) {
  const std::string_view s = trim(t.field(column));
  if (s.empty() || s == "UNLIMITED" || s == "Partition_Limit" || s == "INVALID")
    return std::nullopt;
  const auto v = parse_slurm_duration(s);
  if (!v || *v > limits::kMaxDuration / kSecond)
    t.fail(column, "a duration '[D-]HH:MM:SS' of at most 1e10 s, or UNLIMITED");
  return v;
}

GpuTres parse_tres(std::string_view s, std::string& error) {
  GpuTres out;
  error.clear();
  s = trim(s);
  while (!s.empty()) {
    const auto comma = s.find(',');
    const std::string_view item = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      error = "a TRES list 'name=value,...', but " + quote_input(item) + " has no '='";
      return out;
    }
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    const bool gpu = key == "gres/gpu" || key.starts_with("gres/gpu:");
    if (!gpu && key != "gres/gpushare") continue;
    const auto n = parse_int(value);
    if (!n || *n < 0 || *n > limits::kMaxClusterGpus) {
      error = "a GPU count in 0.." + std::to_string(limits::kMaxClusterGpus) + " for " +
              quote_input(key);
      return out;
    }
    if (key == "gres/gpushare") {
      out.shares = *n;
    } else if (key == "gres/gpu") {
      out.gpus = *n;
      out.has_gpus = true;
    } else {
      out.typed.emplace_back(std::string(key.substr(9)), *n);
    }
  }
  return out;
}

GpuTres slurm_tres(const PipeTable& t, std::size_t column) {
  std::string error;
  GpuTres out = parse_tres(t.field(column), error);
  if (!error.empty()) t.fail(column, error);
  return out;
}

std::vector<GresEntry> parse_gres(std::string_view s, std::string& error) {
  std::vector<GresEntry> out;
  error.clear();
  s = trim(s);
  if (s.empty() || s == "(null)") return out;
  std::size_t at = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] == '(') ++depth;
    if (i < s.size() && s[i] == ')') --depth;
    if (i < s.size() && (s[i] != ',' || depth > 0)) continue;
    std::string_view item = s.substr(at, i - at);
    at = i + 1;
    if (const auto paren = item.find('('); paren != std::string_view::npos)
      item = item.substr(0, paren);  // "(S:0-1)": socket affinity
    GresEntry e;
    const auto c1 = item.find(':');
    e.name = std::string(item.substr(0, c1));
    if (e.name.empty()) {
      error = "a GRES list 'name[:type][:count],...', got an empty entry";
      return out;
    }
    if (c1 != std::string_view::npos) {
      std::string_view rest = item.substr(c1 + 1);
      const auto c2 = rest.find(':');
      std::string_view count = rest;
      if (c2 != std::string_view::npos) {
        e.type = std::string(rest.substr(0, c2));
        count = rest.substr(c2 + 1);
      } else if (!all_digits(rest)) {  // "gpu:a100": a type and one GPU
        e.type = std::string(rest);
        count = "1";
      }
      const auto n = parse_int(count);
      if (e.name == "gpu" && (!all_digits(count) || !n || *n > 1'000'000)) {
        error = "a GPU count in " + quote_input(item) + " (name:type:count)";
        return out;
      }
      e.count = n.value_or(1);
    }
    out.push_back(std::move(e));
  }
  return out;
}

bool is_index_gpu_type(std::string_view type) {
  return type.size() >= 2 && type[0] == 'g' && all_digits(type.substr(1));
}

}  // namespace ds
