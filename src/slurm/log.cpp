#include "slurm/log.hpp"

#include <chrono>
#include <ctime>
#include <mutex>

namespace ds::slurm {

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

void Log::write(const char* level, const char* event, std::initializer_list<Field> fields) {
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
  std::string line = std::string("{\"ts\":\"") + ts + "." +
                     std::to_string(1000 + ms % 1000).substr(1) + "Z\",\"level\":\"" + level +
                     "\",\"event\":\"" + event + "\"";
  for (const auto& [k, v] : fields)
    line += std::string(",\"") + k + "\":\"" + json_escape(v) + "\"";
  line += "}\n";
  std::lock_guard<std::mutex> lock(mu);
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

}  // namespace ds::slurm
