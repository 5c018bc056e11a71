#include "driver/log.hpp"

#include <chrono>
#include <cmath>
#include <ctime>
#include <mutex>

namespace ds::driver {

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\', o += c;
    else if (c == '\n')
      o += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20)
      o += ' ';
    else
      o += c;
  }
  return o;
}

std::string LogValue::json() const {
  switch (kind) {
    case Kind::Int:
      return std::to_string(i);
    case Kind::Bool:
      return i ? "true" : "false";
    case Kind::Real: {
      if (!std::isfinite(d)) return "null";  // JSON has no NaN/Inf
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", d);
      return buf;
    }
    case Kind::Text:
      break;
  }
  return "\"" + json_escape(text) + "\"";
}

std::string log_line(const std::string& ts, const char* level, const char* event,
                     const Log::Fields& context, std::initializer_list<Log::Field> fields) {
  std::string line =
      "{\"ts\":\"" + ts + "\",\"level\":\"" + level + "\",\"event\":\"" + json_escape(event) + "\"";
  auto add = [&](const Log::Field& f) {
    line += std::string(",\"") + json_escape(f.first) + "\":" + f.second.json();
  };
  for (const auto& f : fields) add(f);
  for (const auto& f : context) add(f);
  return line + "}\n";
}

void Log::write(const char* level, const char* event, const Fields& context,
                std::initializer_list<Field> fields) {
  if (quiet_ && level[0] == 'i') return;
  static std::mutex mu;
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
  const std::string line =
      log_line(std::string(ts) + "." + std::to_string(1000 + ms % 1000).substr(1) + "Z", level,
               event, context, fields);
  std::lock_guard<std::mutex> lock(mu);
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

}  // namespace ds::driver
