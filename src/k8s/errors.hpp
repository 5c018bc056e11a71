// Typed outcomes of Kubernetes API calls.
//
// Every call of the client returns Result<T>: a value, or an ApiError that says whether the
// API server answered (its HTTP status and its own Status object: reason and message, which
// is what a user or operator must see) or not (connection, TLS, timeout: curl's message).
// Callers branch on the predicates (conflict(), gone(), retryable()), never on message text.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ds::k8s {

enum class ErrorKind {
  Transport,  // no HTTP answer: connect, TLS, timeout (message: curl's)
  Api,        // the API server answered with a status >= 300 (its Status object)
  Decode,     // a 2xx answer whose body is not the JSON the call expects
  Stopped,    // the caller's stop token ended the call
};

struct ApiError {
  ErrorKind kind = ErrorKind::Api;
  int http_status = 0;  // 0 unless kind == Api
  std::string reason;   // Status.reason: NotFound, AlreadyExists, Conflict, Expired, Forbidden...
  std::string message;  // Status.message (the API's words), or curl's / the decoder's
  std::string method;   // of the call, for messages: "POST"
  std::string path;     // "/api/v1/namespaces/a/pods"
  int retry_after_seconds = 0;  // Status.details.retryAfterSeconds or Retry-After (429, 503)

  [[nodiscard]] bool not_found() const { return kind == ErrorKind::Api && http_status == 404; }
  [[nodiscard]] bool conflict() const { return kind == ErrorKind::Api && http_status == 409; }
  [[nodiscard]] bool already_exists() const { return conflict() && reason == "AlreadyExists"; }
  [[nodiscard]] bool forbidden() const { return kind == ErrorKind::Api && http_status == 403; }
  [[nodiscard]] bool invalid() const { return kind == ErrorKind::Api && http_status == 422; }
  // The resourceVersion asked for is compacted away: list again (watch ERROR events carry
  // the same Status with code 410).
  [[nodiscard]] bool gone() const { return kind == ErrorKind::Api && http_status == 410; }
  // Worth retrying unchanged after a pause: no answer, too many requests, server trouble.
  [[nodiscard]] bool retryable() const;
  // "POST /api/v1/namespaces/a/pods: 409 AlreadyExists: pods \"x\" already exists"
  [[nodiscard]] std::string str() const;
};

// The error for an answer with status `http_status` and body `body`: the API's Status
// object when the body is one, else the status line and the start of the body.
ApiError status_error(int http_status, std::string_view body, std::string method, std::string path);

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(ApiError error) : v_(std::move(error)) {}  // NOLINT: implicit by design
  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  [[nodiscard]] const ApiError& error() const { return std::get<1>(v_); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, ApiError> v_;
};

}  // namespace ds::k8s
