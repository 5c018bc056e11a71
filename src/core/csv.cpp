#include "core/csv.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace ds {

CsvReader CsvReader::open(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path}, "cannot open file for reading");
  std::ostringstream buf;
  buf << in.rdbuf();
  return CsvReader(path, buf.str());
}

CsvReader::CsvReader(std::string name, std::string content)
    : name_(std::move(name)), content_(std::move(content)) {
  if (content_.starts_with("\xEF\xBB\xBF")) pos_ = line_start_ = 3;  // UTF-8 byte-order mark
}

void CsvReader::read_header() {
  if (!next()) throw InputError(SourceLocation{name_}, "file is empty: expected a header row");
  header_.clear();
  for (const auto& f : fields_) header_.emplace_back(f.text);
}

std::optional<std::size_t> CsvReader::find_column(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return i;
  return std::nullopt;
}

std::size_t CsvReader::require_column(std::string_view name) const {
  if (auto i = find_column(name)) return *i;
  std::string have;
  for (const auto& h : header_) have += (have.empty() ? "" : ",") + h;
  throw InputError(SourceLocation{name_, 1},
                   "missing column '" + std::string(name) + "' (header has: " + have + ")");
}

bool CsvReader::next() {
  while (pos_ < content_.size()) {
    if (!parse_record()) continue;  // blank line
    return true;
  }
  return false;
}

bool CsvReader::parse_record() {
  fields_.clear();
  unquoted_.clear();
  record_line_ = line_;
  const std::size_t n = content_.size();
  // Blank line (possibly with '\r'): skip it.
  std::size_t p = pos_;
  while (p < n && content_[p] == '\r') ++p;
  if (p >= n || content_[p] == '\n') {
    pos_ = p + 1;
    ++line_;
    line_start_ = pos_;
    return false;
  }
  for (;;) {
    Field f{{}, line_, static_cast<long>(pos_ - line_start_ + 1)};
    if (pos_ < n && content_[pos_] == '"') {
      std::string text;
      std::size_t q = pos_ + 1;
      bool closed = false;
      while (q < n) {
        char c = content_[q];
        if (c == '"') {
          if (q + 1 < n && content_[q + 1] == '"') {
            text += '"';
            q += 2;
            continue;
          }
          closed = true;
          ++q;
          break;
        }
        if (c == '\n') {
          ++line_;
          line_start_ = q + 1;
        }
        text += c;
        ++q;
      }
      if (!closed)
        throw InputError(SourceLocation{name_, f.line, f.column},
                         "unterminated quoted field (missing closing '\"')");
      unquoted_.push_back(std::move(text));
      pos_ = q;
      // The view is set once the record is complete (unquoted_ may still grow).
      f.quoted = static_cast<int>(unquoted_.size() - 1);
      fields_.push_back(f);
    } else {
      std::size_t q = pos_;
      while (q < n && content_[q] != ',' && content_[q] != '\n') ++q;
      std::size_t end = q;
      if (end > pos_ && content_[end - 1] == '\r') --end;
      f.text = std::string_view(content_.data() + pos_, end - pos_);
      fields_.push_back(f);
      pos_ = q;
    }
    if (pos_ >= n) break;
    if (content_[pos_] == ',') {
      ++pos_;
      if (pos_ >= n || content_[pos_] == '\n' || content_[pos_] == '\r') {
        fields_.push_back(Field{{}, line_, static_cast<long>(pos_ - line_start_ + 1)});
      } else {
        continue;
      }
    }
    // Skip to end of line ('\r' allowed before '\n').
    while (pos_ < n && content_[pos_] == '\r') ++pos_;
    if (pos_ < n && content_[pos_] != '\n')
      throw InputError(SourceLocation{name_, line_, static_cast<long>(pos_ - line_start_ + 1)},
                       "unexpected character after quoted field");
    if (pos_ < n) {
      ++pos_;
      ++line_;
      line_start_ = pos_;
    }
    break;
  }
  for (auto& f : fields_)
    if (f.quoted >= 0) f.text = unquoted_[static_cast<std::size_t>(f.quoted)];
  return true;
}

SourceLocation CsvReader::where(std::size_t i) const {
  if (i < fields_.size()) return SourceLocation{name_, fields_[i].line, fields_[i].column};
  return SourceLocation{name_, record_line_, 0};
}

void CsvReader::fail(std::size_t i, const std::string& expected) const {
  std::string field_name = i < header_.size() ? header_[i] : "#" + std::to_string(i + 1);
  if (i >= fields_.size())
    throw InputError(where(i), "field '" + field_name + "': missing (row has " +
                                   std::to_string(fields_.size()) + " fields, header has " +
                                   std::to_string(header_.size()) + ")");
  throw InputError(where(i), "field '" + field_name + "': expected " + expected + ", got '" +
                                 std::string(fields_[i].text) + "'");
}

std::int64_t CsvReader::get_int(std::size_t i) const {
  if (i >= fields_.size()) fail(i, "an integer");
  if (auto v = parse_int(fields_[i].text)) return *v;
  fail(i, "an integer");
}

std::int64_t CsvReader::get_int_lenient(std::size_t i) const {
  if (i >= fields_.size()) fail(i, "an integer");
  if (auto v = parse_int(fields_[i].text)) return *v;
  if (auto d = parse_double(fields_[i].text)) {
    if (std::isfinite(*d) && std::floor(*d) == *d && std::fabs(*d) < 9e15)
      return static_cast<std::int64_t>(*d);
  }
  fail(i, "an integer");
}

double CsvReader::get_double(std::size_t i) const {
  if (i >= fields_.size()) fail(i, "a number");
  if (auto v = parse_double(fields_[i].text)) return *v;
  fail(i, "a number");
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

}  // namespace ds
