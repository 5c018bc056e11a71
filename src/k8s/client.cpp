#include "k8s/client.hpp"

#include <chrono>
#include <optional>

#include "core/error.hpp"
#include "k8s/objects.hpp"

namespace ds::k8s {
namespace {

Result<json> parse_body(const HttpResponse& r, const char* method, const std::string& path) {
  if (r.status < 200 || r.status >= 300) {
    auto e = status_error(r.status, r.body, method, path);
    if (e.retry_after_seconds == 0) e.retry_after_seconds = r.retry_after_seconds;
    return e;
  }
  auto j = json::parse(r.body, nullptr, false);
  if (j.is_discarded()) {
    ApiError e;
    e.kind = ErrorKind::Decode;
    e.method = method;
    e.path = path;
    e.message = "answer is not JSON: " + quote_input(r.body, 120);
    return e;
  }
  return j;
}

std::string with_query(const std::string& path, const std::string& q) {
  if (q.empty()) return path;
  return path + (path.find('?') == std::string::npos ? q : "&" + q.substr(1));
}

}  // namespace

Client::Client(Kubeconfig config, TransportOptions options)
    : transport_(std::move(config), std::move(options)) {}

Result<json> Client::call(const char* method, const std::string& path, const json* body,
                          const char* content_type) {
  HttpRequest r;
  r.method = method;
  r.target = path;
  if (body != nullptr && !body->is_null()) {
    r.body = body->dump();
    r.content_type = content_type;
  }
  auto answer = transport_.send(r);
  if (!answer) return answer.error();
  return parse_body(answer.value(), method, path);
}

Result<json> Client::get(const std::string& path) {
  return call("GET", path, nullptr, nullptr);
}
Result<json> Client::post(const std::string& path, const json& body) {
  return call("POST", path, &body, "application/json");
}
Result<json> Client::put(const std::string& path, const json& body) {
  return call("PUT", path, &body, "application/json");
}
Result<json> Client::del(const std::string& path, const json& options) {
  return call("DELETE", path, &options, "application/json");
}

Result<json> Client::patch(const std::string& path, const json& body, PatchType type) {
  const char* ct = type == PatchType::Merge       ? "application/merge-patch+json"
                   : type == PatchType::Strategic ? "application/strategic-merge-patch+json"
                                                  : "application/json-patch+json";
  return call("PATCH", path, &body, ct);
}

Result<json> Client::list(const std::string& path, const ListOptions& o) {
  json all;
  std::string next;
  do {
    const auto q = query({{"labelSelector", o.label_selector},
                          {"fieldSelector", o.field_selector},
                          {"resourceVersion", next.empty() ? o.resource_version : ""},
                          {"resourceVersionMatch", next.empty() ? o.resource_version_match : ""},
                          {"limit", o.page_size > 0 ? std::to_string(o.page_size) : ""},
                          {"continue", next}});
    auto page = get(with_query(path, q));
    if (!page) return page.error();
    auto& p = page.value();
    if (!p.contains("items") || !p["items"].is_array()) {
      ApiError e;
      e.kind = ErrorKind::Decode;
      e.method = "GET";
      e.path = path;
      e.message = "list answer has no items";
      return e;
    }
    if (all.is_null()) {
      all = p;
      all["items"] = json::array();
    }
    for (auto& item : p["items"]) all["items"].push_back(std::move(item));
    next = p.contains("metadata") ? p["metadata"].value("continue", "") : "";
  } while (!next.empty());
  if (all.contains("metadata") && all["metadata"].is_object()) all["metadata"].erase("continue");
  return all;
}

Result<WatchEnd> Client::watch(const std::string& path, const WatchOptions& o,
                               const std::function<bool(const WatchEvent&)>& on_event,
                               std::stop_token stop) {
  HttpRequest r;
  r.target = with_query(path, query({{"watch", "1"},
                                     {"labelSelector", o.label_selector},
                                     {"fieldSelector", o.field_selector},
                                     {"resourceVersion", o.resource_version},
                                     {"allowWatchBookmarks", o.allow_bookmarks ? "true" : ""},
                                     {"timeoutSeconds", std::to_string(o.timeout_seconds)}}));
  // The server ends the watch at timeoutSeconds; the margin covers a slow last flush.
  r.timeout = std::chrono::seconds(o.timeout_seconds + 30);
  WatchEnd end;
  std::optional<ApiError> failure;
  LineSplitter lines;
  const std::function<bool(std::string_view)> on_line = [&](std::string_view line) {
    auto ev = parse_watch_event(line);
    if (!ev) {
      failure = ev.error();
      failure->method = "WATCH";
      failure->path = path;
      return false;
    }
    if (ev->type == WatchEventType::Error) {
      failure = error_of(ev.value(), path);
      return false;
    }
    if (const auto rv = ev->resource_version(); !rv.empty()) end.resource_version = rv;
    (ev->type == WatchEventType::Bookmark ? end.bookmarks : end.events) += 1;
    if (on_event(ev.value())) return true;
    end.stopped = true;
    return false;
  };
  const std::function<bool(std::string_view)> on_data = [&](std::string_view chunk) {
    if (lines.feed(chunk, on_line)) return true;
    if (!failure && !end.stopped) {
      failure =
          ApiError{ErrorKind::Decode, 0, "", "watch line longer than the limit", "WATCH", path};
    }
    return false;
  };
  auto answer = transport_.stream(r, on_data, std::move(stop));
  if (!answer) return answer.error();
  if (failure) return *failure;
  if (answer->status < 200 || answer->status >= 300)
    return status_error(answer->status, answer->body, "WATCH", path);
  return end;
}

}  // namespace ds::k8s
