// Structured logs: one JSON object per line on stderr (or a file), e.g.
//   {"ts":"2026-11-29T10:00:00.123Z","level":"info","event":"start","job":"12","gpus":2,
//    "borrowed":true,"user":"alice","account":"research"}
// Values are typed: numbers and booleans are written as JSON numbers and booleans (a log
// pipeline can filter on them), text as strings. Job ids stay strings ("123_4").
// Assumption: log volume is small (one line per action), so a mutex and fprintf suffice.
#pragma once

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace ds::driver {

// One typed log value.
struct LogValue {
  enum class Kind : std::uint8_t { Text, Int, Real, Bool };
  Kind kind = Kind::Text;
  std::string text;
  long long i = 0;
  double d = 0;
  LogValue(const char* v) : text(v ? v : "") {}         // NOLINT(google-explicit-constructor)
  LogValue(std::string v) : text(std::move(v)) {}       // NOLINT(google-explicit-constructor)
  LogValue(bool v) : kind(Kind::Bool), i(v ? 1 : 0) {}  // NOLINT(google-explicit-constructor)
  LogValue(double v) : kind(Kind::Real), d(v) {}        // NOLINT(google-explicit-constructor)
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) LogValue(T v)
      : kind(Kind::Int), i(static_cast<long long>(v)) {}  // NOLINT
  [[nodiscard]] std::string json() const;
};

class Log {
 public:
  explicit Log(std::FILE* out = stderr, bool quiet = false) : out_(out), quiet_(quiet) {}
  using Field = std::pair<const char*, LogValue>;
  using Fields = std::vector<Field>;
  void info(const char* event, std::initializer_list<Field> fields = {}) {
    write("info", event, {}, fields);
  }
  void warn(const char* event, std::initializer_list<Field> fields = {}) {
    write("warn", event, {}, fields);
  }
  void error(const char* event, std::initializer_list<Field> fields = {}) {
    write("error", event, {}, fields);
  }
  // With context fields, written after `fields` (e.g. a job's user and account).
  void info(const char* event, const Fields& context, std::initializer_list<Field> fields) {
    write("info", event, context, fields);
  }
  void warn(const char* event, const Fields& context, std::initializer_list<Field> fields) {
    write("warn", event, context, fields);
  }
  void error(const char* event, const Fields& context, std::initializer_list<Field> fields) {
    write("error", event, context, fields);
  }

 private:
  void write(const char* level, const char* event, const Fields& context,
             std::initializer_list<Field> fields);
  std::FILE* out_;
  bool quiet_;
};

std::string json_escape(const std::string& s);
// The log line of one event (without the timestamp's variability: `ts` is given).
std::string log_line(const std::string& ts, const char* level, const char* event,
                     const Log::Fields& context, std::initializer_list<Log::Field> fields);

}  // namespace ds::driver
