// The decision journal of an online driver: an append-only text file with one line per
// action, "<wall ms> <driver ms> <what>", whose first line holds the driver's clock
// ("clock <wall0 ms> <origin> <scale>"). A restarted driver reads the clock back, so that its
// time goes on where it was (a time-scaled replay keeps its scale). No path: no journal.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "driver/clock.hpp"

namespace ds::driver {

class Journal {
 public:
  Journal() = default;
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  // Opens `path` for appending (empty: no journal). When its first line holds a clock, that
  // clock replaces `clock` and true is returned; a new file gets `clock` as its first line.
  // Throws InputError when the file cannot be opened.
  bool open(const std::string& path, DriverClock& clock);
  // The times stamped on the lines that follow (set once per cycle).
  void set_time(std::int64_t wall_ms, Time now) {
    wall_ = wall_ms;
    now_ = now;
  }
  void line(const std::string& text);
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::FILE* out_ = nullptr;
  std::string path_;
  std::int64_t wall_ = 0;
  Time now_ = 0;
};

// Starts a journal at `path` afresh with the given clock and a marker line (a replay's own
// journal). An existing file is replaced only if it carries that marker (an earlier replay
// into the same folder wrote it); any other file is left alone and InputError thrown: a replay
// deletes no file it did not create.
void start_marked_journal(const std::string& path, const DriverClock& clock,
                          const std::string& marker);

}  // namespace ds::driver
