#include "driver/journal.hpp"

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace ds::driver {
namespace {

std::string clock_line(const DriverClock& c) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "clock %lld %lld %.17g", static_cast<long long>(c.wall0_ms),
                static_cast<long long>(c.origin), c.scale);
  return buf;
}

}  // namespace

Journal::~Journal() {
  if (out_) std::fclose(out_);
}

bool Journal::open(const std::string& path, DriverClock& clock) {
  if (path.empty()) return false;
  path_ = path;
  std::ifstream in(path);
  std::string word;
  bool restored = false;
  if (in >> word && word == "clock") {
    DriverClock c;
    if (in >> c.wall0_ms >> c.origin >> c.scale) {
      clock = c;
      restored = true;
    }
  }
  out_ = std::fopen(path.c_str(), "a");
  if (!out_) throw InputError(path + ": cannot open the journal for appending");
  if (in.tellg() <= 0 && word != "clock") {
    std::fprintf(out_, "%s\n", clock_line(clock).c_str());
    std::fflush(out_);
  }
  return restored;
}

void Journal::line(const std::string& text) {
  if (!out_) return;
  std::fprintf(out_, "%lld %lld %s\n", static_cast<long long>(wall_), static_cast<long long>(now_),
               text.c_str());
  std::fflush(out_);
}

void start_marked_journal(const std::string& path, const DriverClock& clock,
                          const std::string& marker) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec) || fs::is_symlink(path, ec)) {
    std::ifstream in(path);
    std::string first, second;
    std::getline(in, first);
    std::getline(in, second);
    if (!fs::is_regular_file(fs::symlink_status(path, ec)) || second != marker)
      throw InputError(path +
                       ": exists and was not written by a replay; a replay never replaces "
                       "such a file (choose another --out, or move the file away)");
    fs::remove(path, ec);
  }
  std::ofstream out(path, std::ios::trunc);
  out << clock_line(clock) << '\n' << marker << '\n';
  if (!out) throw InputError(path + ": cannot write the replay's journal");
}

}  // namespace ds::driver
