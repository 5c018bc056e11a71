#include "core/csv.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/checked.hpp"
#include "core/limits.hpp"

namespace ds {

std::string read_input_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLocation{path}, "cannot open file for reading");
  // Read in chunks up to the cap (the size of a pipe or device is not known up front).
  std::string content;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    content.append(buf, static_cast<std::size_t>(in.gcount()));
    if (content.size() > limits::kMaxInputBytes)
      throw InputError(SourceLocation{path}, "file is larger than " +
                                                 std::to_string(limits::kMaxInputBytes >> 30) +
                                                 " GiB, the most one input file may hold");
  }
  if (in.bad()) throw InputError(SourceLocation{path}, "read error");
  return content;
}

CsvReader CsvReader::open(const std::string& path) {
  return CsvReader(path, read_input_file(path));
}

CsvReader::CsvReader(std::string name, std::string content)
    : name_(std::move(name)), content_(std::move(content)) {
  if (content_.starts_with("\xEF\xBB\xBF")) pos_ = line_start_ = 3;  // UTF-8 byte-order mark
}

void CsvReader::read_header() {
  expected_fields_ = 0;
  if (!next()) throw InputError(SourceLocation{name_}, "file is empty: expected a header row");
  header_.clear();
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    for (std::size_t k = 0; k < header_.size(); ++k)
      if (header_[k] == fields_[i].text)
        throw InputError(where(i), "column " + quote_input(fields_[i].text) +
                                       " appears twice in the header (columns " +
                                       std::to_string(k + 1) + " and " + std::to_string(i + 1) +
                                       ")");
    header_.emplace_back(fields_[i].text);
  }
  expected_fields_ = header_.size();
}

std::optional<std::size_t> CsvReader::find_column(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return i;
  return std::nullopt;
}

std::size_t CsvReader::require_column(std::string_view name) const {
  if (auto i = find_column(name)) return *i;
  throw InputError(SourceLocation{name_, 1},
                   "missing column " + quote_input(name) + " (header has: " + header_list() + ")");
}

std::string CsvReader::header_list() const {
  std::string have;
  for (const auto& h : header_) {
    if (!have.empty()) have += ',';
    have += h;
    if (have.size() > 200) break;
  }
  const std::string q = quote_input(have, 200);
  return q.substr(1, q.rfind('\'') - 1) + (have.size() > 200 ? "..." : "");
}

bool CsvReader::next() {
  while (pos_ < content_.size()) {
    if (!parse_record()) continue;  // blank line
    if (expected_fields_ > 0 && fields_.size() != expected_fields_) {
      const bool more = fields_.size() > expected_fields_;
      const std::size_t at = more ? expected_fields_ : fields_.size() - 1;
      throw InputError(
          more ? where(at) : SourceLocation{name_, record_line_, 0},
          "row has " + std::to_string(fields_.size()) + " fields, the header has " +
              std::to_string(expected_fields_) +
              (more ? " (a value with a comma, such as a decimal comma, must be quoted: "
                      "\"1,5\")"
                    : ""));
    }
    return true;
  }
  return false;
}

// Long on purpose: the per-record state machine of every importer's hot path, in one pass.
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
      while (q < n && content_[q] != ',' && content_[q] != '\n') {
        // RFC 4180: a field holding a quote is quoted as a whole ("a""b"); a stray quote in
        // an unquoted field is a broken file (a quote lost in an edit), not data.
        if (content_[q] == '"')
          throw InputError(
              SourceLocation{name_, line_, static_cast<long>(q - line_start_ + 1)},
              "a double quote inside an unquoted field (write the whole field in quotes, "
              "with the quote doubled: \"a\"\"b\")");
        ++q;
      }
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
    throw InputError(where(i), "field " + quote_input(field_name) + ": missing (row has " +
                                   std::to_string(fields_.size()) + " fields, header has " +
                                   std::to_string(header_.size()) + ")");
  throw InputError(where(i), "field " + quote_input(field_name) + ": expected " + expected +
                                 ", got " + quote_input(fields_[i].text));
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

std::int64_t CsvReader::get_int_in(std::size_t i, std::int64_t lo, std::int64_t hi,
                                   std::string_view what, bool lenient) const {
  auto refuse = [&] {
    fail(i,
         std::string(what) + " in " + range_text(static_cast<double>(lo), static_cast<double>(hi)));
  };
  if (i >= fields_.size()) refuse();
  std::optional<std::int64_t> v = parse_int(fields_[i].text);
  if (!v && lenient) {
    if (const auto d = parse_double(fields_[i].text); d && std::floor(*d) == *d)
      v = round_in_range(*d, lo, hi);
  }
  if (!v || *v < lo || *v > hi) refuse();
  return *v;
}

double CsvReader::get_double_in(std::size_t i, double lo, double hi, std::string_view what) const {
  auto refuse = [&] { fail(i, std::string(what) + " in " + range_text(lo, hi)); };
  if (i >= fields_.size()) refuse();
  const auto v = parse_double(fields_[i].text);
  if (!v || !(*v >= lo && *v <= hi)) refuse();
  return *v;
}

Time CsvReader::get_seconds(std::size_t i, Time lo, Time hi, std::string_view what) const {
  auto refuse = [&] {
    fail(i, std::string(what) + " in seconds, " +
                range_text(static_cast<double>(lo) / kSecond, static_cast<double>(hi) / kSecond));
  };
  if (i >= fields_.size()) refuse();
  const auto v = parse_double(fields_[i].text);
  const auto ms = v ? seconds_to_ms(*v, lo, hi) : std::nullopt;
  if (!ms) refuse();
  return *ms;
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

std::string range_text(double lo, double hi) {
  auto one = [](double v) {
    char buf[64];
    if (std::fabs(v) < 9e15 && std::floor(v) == v)
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else
      std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  return one(lo) + ".." + one(hi);
}

void append_csv_field(std::string& out, std::string_view field) {
  const bool quote =
      field.find_first_of(",\"\r\n") != std::string_view::npos || field.starts_with("\xEF\xBB\xBF");
  if (!quote) {
    out += field;
    return;
  }
  out += '"';
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void append_csv_row(std::string& out, const std::vector<std::string>& fields) {
  if (fields.size() == 1 && fields[0].empty()) {
    out += "\"\"\n";
    return;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    append_csv_field(out, fields[i]);
  }
  out += '\n';
}

}  // namespace ds
