// A small, fast CSV reader that always knows where it is, and the matching writer.
//
// Reads the whole file into memory (traces are megabytes, not gigabytes; a file over
// limits::kMaxInputBytes is refused), splits RFC 4180 records (quoted fields may hold
// commas, quotes and newlines) and keeps the line and column of every field, so that
// importers report bad input as file:line:column plus the field's name.
// Rows are strict: once the header is read, a record with more or fewer fields than the
// header is an error (a decimal comma, "1,5", must not shift the columns silently), and
// a header that names a column twice is an error.
// Typed getters with a range (get_int_in, get_double_in, get_seconds) are how importers
// read every number: a value outside the range is an error that names the range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"

namespace ds {

class CsvReader {
 public:
  // Throws InputError when the file cannot be read.
  static CsvReader open(const std::string& path);
  CsvReader(std::string name, std::string content);

  // Reads the header row; throws InputError when the input is empty.
  void read_header();
  [[nodiscard]] const std::vector<std::string>& header() const { return header_; }
  [[nodiscard]] std::optional<std::size_t> find_column(std::string_view name) const;
  // Throws InputError naming the file and the missing column.
  [[nodiscard]] std::size_t require_column(std::string_view name) const;
  // "a,b,c" for messages (cut after 200 bytes).
  [[nodiscard]] std::string header_list() const;

  // Advances to the next non-blank record; false at the end of the input.
  bool next();
  [[nodiscard]] std::size_t size() const { return fields_.size(); }
  [[nodiscard]] std::string_view field(std::size_t i) const { return fields_[i].text; }
  [[nodiscard]] long line() const { return record_line_; }
  [[nodiscard]] SourceLocation where(std::size_t i) const;
  [[nodiscard]] const std::string& name() const { return name_; }

  // Typed access: throws InputError "file:line:col: field 'x': expected ..., got '...'".
  [[nodiscard]] std::int64_t get_int(std::size_t i) const;
  [[nodiscard]] double get_double(std::size_t i) const;
  // Accepts integers written as decimals ("13229141.0") when the fraction is zero.
  [[nodiscard]] std::int64_t get_int_lenient(std::size_t i) const;
  // The same within [lo, hi]; the error names `what` and the range, e.g.
  // "field 'gpu_num': expected a GPU count in 0..100000, got '3000000000'".
  [[nodiscard]] std::int64_t get_int_in(std::size_t i, std::int64_t lo, std::int64_t hi,
                                        std::string_view what, bool lenient = true) const;
  [[nodiscard]] double get_double_in(std::size_t i, double lo, double hi,
                                     std::string_view what) const;
  // Seconds (decimals allowed) -> milliseconds, rounded; the range is in milliseconds and
  // the message shows it in seconds.
  // The messages are built only when a value is refused (1M-row traces: issue #27).
  [[nodiscard]] Time get_seconds(std::size_t i, Time lo, Time hi, std::string_view what) const;
  [[nodiscard]] bool empty_field(std::size_t i) const { return fields_[i].text.empty(); }
  [[noreturn]] void fail(std::size_t i, const std::string& expected) const;

 private:
  struct Field {
    std::string_view text;
    long line;
    long column;
    int quoted = -1;  // index into unquoted_ when the field was quoted
  };
  bool parse_record();

  std::string name_;
  std::string content_;
  std::vector<std::string> header_;
  std::vector<Field> fields_;
  std::vector<std::string> unquoted_;  // storage for fields that contained "" escapes
  std::size_t expected_fields_ = 0;    // the header's width, once read
  std::size_t pos_ = 0;
  long line_ = 1;
  std::size_t line_start_ = 0;
  long record_line_ = 0;
};

// The whole content of an input file, at most limits::kMaxInputBytes; throws InputError
// naming the file when it cannot be read or is larger.
std::string read_input_file(const std::string& path);

// Parses a whole string as a number; nullopt when it is not one.
std::optional<std::int64_t> parse_int(std::string_view s);
std::optional<double> parse_double(std::string_view s);

// "lo..hi" for messages: integers as they are, other numbers with 6 significant digits.
std::string range_text(double lo, double hi);

// RFC 4180 writing: the field as is, or in double quotes (inner quotes doubled) when it
// holds a comma, a quote, CR or LF, or starts with a UTF-8 byte-order mark, so that
// CsvReader reads back exactly the text written.
void append_csv_field(std::string& out, std::string_view field);
// One record: fields joined by commas, then '\n'. A record of one empty field is written
// as "" (an empty line would be read as no record at all).
void append_csv_row(std::string& out, const std::vector<std::string>& fields);

}  // namespace ds
