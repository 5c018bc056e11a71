// The body of a watch: one JSON object per line, {"type": ..., "object": ...}, arriving in
// chunks that split lines anywhere (even inside a UTF-8 character).
//
// LineSplitter reassembles lines across chunks; parse_watch_event() reads one line. An
// ERROR event carries a Status (code 410 when the resourceVersion is too old): error_of()
// turns it into the same ApiError a refused request gives, so callers test gone() alike.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "k8s/errors.hpp"

namespace ds::k8s {

enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };

struct WatchEvent {
  WatchEventType type = WatchEventType::Added;
  nlohmann::json object;  // the resource; for Bookmark only its metadata.resourceVersion
  // object.metadata.resourceVersion ("" for Error): where a later watch resumes
  [[nodiscard]] std::string resource_version() const;
};

// One watch line; a line that is not an event is a Decode error quoting it.
Result<WatchEvent> parse_watch_event(std::string_view line);

// The ApiError in an ERROR event (its Status: code, reason, message).
ApiError error_of(const WatchEvent& event, const std::string& path);

class LineSplitter {
 public:
  // A line longer than max_line bytes is an error (feed() returns false): a broken or
  // hostile server must not grow the buffer without bound.
  explicit LineSplitter(std::size_t max_line = std::size_t{64} << 20) : max_line_(max_line) {}
  // Calls on_line for every line completed by `chunk` (without its '\n'; empty lines are
  // skipped); stops early when on_line returns false. Returns false when a line is too long
  // or on_line asked to stop.
  bool feed(std::string_view chunk, const std::function<bool(std::string_view)>& on_line);
  [[nodiscard]] std::size_t pending() const { return buffer_.size(); }

 private:
  std::string buffer_;
  std::size_t max_line_;
};

}  // namespace ds::k8s
