#include "k8s/watch_stream.hpp"

#include "core/error.hpp"

namespace ds::k8s {

std::string WatchEvent::resource_version() const {
  if (!object.is_object() || !object.contains("metadata")) return "";
  const auto& m = object["metadata"];
  if (!m.is_object() || !m.contains("resourceVersion") || !m["resourceVersion"].is_string())
    return "";
  return m["resourceVersion"].get<std::string>();
}

Result<WatchEvent> parse_watch_event(std::string_view line) {
  auto bad = [&](const std::string& why) {
    ApiError e;
    e.kind = ErrorKind::Decode;
    e.message = "watch event " + quote_input(line, 120) + ": " + why;
    return e;
  };
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) return bad("not JSON");
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return bad("no type");
  if (!j.contains("object") || !j["object"].is_object()) return bad("no object");
  const auto type = j["type"].get<std::string>();
  WatchEvent ev;
  if (type == "ADDED") {
    ev.type = WatchEventType::Added;
  } else if (type == "MODIFIED") {
    ev.type = WatchEventType::Modified;
  } else if (type == "DELETED") {
    ev.type = WatchEventType::Deleted;
  } else if (type == "BOOKMARK") {
    ev.type = WatchEventType::Bookmark;
  } else if (type == "ERROR") {
    ev.type = WatchEventType::Error;
  } else {
    return bad("unknown type " + quote_input(type));
  }
  ev.object = std::move(j["object"]);
  return ev;
}

ApiError error_of(const WatchEvent& event, const std::string& path) {
  const auto& o = event.object;
  const int code = o.contains("code") && o["code"].is_number_integer() ? o["code"].get<int>() : 500;
  return status_error(code, o.dump(), "WATCH", path);
}

bool LineSplitter::feed(std::string_view chunk,
                        const std::function<bool(std::string_view)>& on_line) {
  while (!chunk.empty()) {
    const auto nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      if (buffer_.size() + chunk.size() > max_line_) return false;
      buffer_.append(chunk);
      return true;
    }
    std::string_view line = chunk.substr(0, nl);
    chunk.remove_prefix(nl + 1);
    if (!buffer_.empty()) {
      if (buffer_.size() + line.size() > max_line_) return false;
      buffer_.append(line);
      line = buffer_;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool go_on = line.empty() || on_line(line);
    buffer_.clear();
    if (!go_on) return false;
  }
  return true;
}

}  // namespace ds::k8s
