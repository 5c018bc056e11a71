#include "k8s/errors.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace ds::k8s {

bool ApiError::retryable() const {
  if (kind == ErrorKind::Transport) return true;
  if (kind != ErrorKind::Api) return false;
  return http_status == 429 || http_status == 500 || http_status == 502 || http_status == 503 ||
         http_status == 504;
}

std::string ApiError::str() const {
  std::string s = method;
  s.append(" ").append(path).append(": ");
  switch (kind) {
    case ErrorKind::Transport:
      s.append("no answer: ");
      break;
    case ErrorKind::Decode:
      s.append("bad answer: ");
      break;
    case ErrorKind::Stopped:
      s.append("stopped: ");
      break;
    case ErrorKind::Api:
      s.append(std::to_string(http_status)).append(" ");
      if (!reason.empty()) s.append(reason).append(": ");
      break;
  }
  return s.append(message);
}

ApiError status_error(int http_status, std::string_view body, std::string method,
                      std::string path) {
  ApiError e;
  e.kind = ErrorKind::Api;
  e.http_status = http_status;
  e.method = std::move(method);
  e.path = std::move(path);
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.value("kind", "") == "Status") {
    if (j.contains("reason") && j["reason"].is_string()) e.reason = j["reason"].get<std::string>();
    if (j.contains("message") && j["message"].is_string())
      e.message = j["message"].get<std::string>();
    if (j.contains("details") && j["details"].is_object()) {
      const auto& d = j["details"];
      if (d.contains("retryAfterSeconds") && d["retryAfterSeconds"].is_number_integer())
        e.retry_after_seconds = d["retryAfterSeconds"].get<int>();
    }
  }
  // Not a Status (a proxy's page, an empty body): keep what there is, bounded.
  if (e.message.empty()) e.message = body.empty() ? "(empty body)" : quote_input(body, 200);
  return e;
}

}  // namespace ds::k8s
