// Structured logs: one JSON object per line on stderr (or a file), e.g.
//   {"ts":"2026-11-29T10:00:00.123Z","level":"info","event":"start","job":12,"nodes":"node1"}
// Assumption: log volume is small (one line per action), so a mutex and fprintf suffice.
#pragma once

#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>

namespace ds::slurm {

class Log {
 public:
  explicit Log(std::FILE* out = stderr, bool quiet = false) : out_(out), quiet_(quiet) {}
  using Field = std::pair<const char*, std::string>;
  void info(const char* event, std::initializer_list<Field> fields = {}) {
    write("info", event, fields);
  }
  void warn(const char* event, std::initializer_list<Field> fields = {}) {
    write("warn", event, fields);
  }
  void error(const char* event, std::initializer_list<Field> fields = {}) {
    write("error", event, fields);
  }

 private:
  void write(const char* level, const char* event, std::initializer_list<Field> fields);
  std::FILE* out_;
  bool quiet_;
};

std::string json_escape(const std::string& s);

}  // namespace ds::slurm
