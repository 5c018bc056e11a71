// HTTPS to one API server over libcurl, with the kubeconfig's CA and client certificate
// (handed to curl from memory: nothing written to disk).
//
// send(): one request, the whole answer in memory; requests reuse one connection (one curl
// handle, serialized by a mutex). stream(): a long request (a watch) on its own handle, its
// body handed over chunk by chunk as it arrives; a stop token or the callback ends it.
// Timeouts: connect_timeout for every call; request_timeout for send(); a stream gets the
// timeout its request names (the watch's timeoutSeconds plus a margin).
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>

#include "k8s/errors.hpp"
#include "k8s/kubeconfig.hpp"

namespace ds::k8s {

struct TransportOptions {
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds request_timeout{30000};
  std::string user_agent = "deepshare";
};

struct HttpRequest {
  std::string method = "GET";
  std::string target;        // path and query: "/api/v1/pods?watch=1"
  std::string body;          // sent when not empty
  std::string content_type;  // of the body: "application/json", "application/merge-patch+json"
  std::chrono::milliseconds timeout{0};  // 0: TransportOptions::request_timeout
};

struct HttpResponse {
  int status = 0;
  std::string body;
  int retry_after_seconds = 0;  // the Retry-After header, when the server sent one
};

class Transport {
 public:
  Transport(Kubeconfig config, TransportOptions options);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Any HTTP status is a value here; only "no answer" is an error (kind Transport/Stopped).
  Result<HttpResponse> send(const HttpRequest& request);
  // Streams the body of a 2xx answer to on_data (return false to stop, which is no error);
  // a non-2xx answer is collected and returned whole, like send(). Returns the status.
  Result<HttpResponse> stream(const HttpRequest& request,
                              const std::function<bool(std::string_view)>& on_data,
                              std::stop_token stop = {});
  [[nodiscard]] const Kubeconfig& config() const { return config_; }
  struct Call;  // what one transfer's curl callbacks share (transport.cpp)

 private:
  Result<HttpResponse> perform(void* curl, const HttpRequest& request, Call& call);
  void setup(void* curl, const HttpRequest& request, Call& call, void* headers) const;
  Kubeconfig config_;
  TransportOptions options_;
  std::mutex mu_;           // guards handle_
  void* handle_ = nullptr;  // CURL*, reused by send() (keep-alive)
};

}  // namespace ds::k8s
