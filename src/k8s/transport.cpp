#include "k8s/transport.hpp"

#include <curl/curl.h>

#include <cctype>
#include <cstdlib>
#include <string>

namespace ds::k8s {

// What one transfer's callbacks share.
struct Transport::Call {
  CURL* curl = nullptr;
  const std::function<bool(std::string_view)>* on_data = nullptr;  // null: collect the body
  std::stop_token stop;
  std::string body;
  int retry_after_seconds = 0;
  bool stopped_by_callback = false;
  char error[CURL_ERROR_SIZE] = {};
};

namespace {

// Bodies of refused stream requests are small Status objects; keep at most this much.
constexpr std::size_t kMaxErrorBody = 1 << 20;

std::size_t on_write(char* data, std::size_t size, std::size_t n, void* user) {
  auto& call = *static_cast<Transport::Call*>(user);
  const std::size_t len = size * n;
  if (call.on_data != nullptr) {
    long code = 0;
    curl_easy_getinfo(call.curl, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200 && code < 300) {
      if ((*call.on_data)(std::string_view(data, len))) return len;
      call.stopped_by_callback = true;
      return 0;  // ends the transfer (CURLE_WRITE_ERROR, which perform() reads as a stop)
    }
    if (call.body.size() + len > kMaxErrorBody) return len;
  }
  call.body.append(data, len);
  return len;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto& call = *static_cast<Transport::Call*>(user);
  const std::string_view line(data, size * n);
  constexpr std::string_view key = "retry-after:";
  if (line.size() > key.size()) {
    bool match = true;
    for (std::size_t i = 0; i < key.size() && match; ++i)
      match = static_cast<char>(std::tolower(static_cast<unsigned char>(line[i]))) == key[i];
    if (match) call.retry_after_seconds = std::atoi(std::string(line.substr(key.size())).c_str());
  }
  return size * n;
}

// Called about once a second even while no byte flows: the stop token's latency.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Transport::Call*>(user)->stop.stop_requested() ? 1 : 0;
}

void set_blob(CURL* curl, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  curl_easy_setopt(curl, option, &blob);
}

}  // namespace

Transport::Transport(Kubeconfig config, TransportOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
  // Reference-counted and thread-safe since libcurl 7.84 (Debian bookworm: 7.88).
  curl_global_init(CURL_GLOBAL_DEFAULT);
  handle_ = curl_easy_init();
}

Transport::~Transport() {
  if (handle_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(handle_));
  curl_global_cleanup();
}

void Transport::setup(void* handle, const HttpRequest& r, Call& call, void* headers) const {
  auto* curl = static_cast<CURL*>(handle);
  const std::string url = config_.server + r.target;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https,http");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  const auto timeout = r.timeout.count() > 0 ? r.timeout : options_.request_timeout;
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(headers));
  if (r.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, r.body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  }
  if (!config_.ca_pem.empty()) set_blob(curl, CURLOPT_CAINFO_BLOB, config_.ca_pem);
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!config_.client_cert_pem.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
    set_blob(curl, CURLOPT_SSLCERT_BLOB, config_.client_cert_pem);
    curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
    set_blob(curl, CURLOPT_SSLKEY_BLOB, config_.client_key_pem);
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &call);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &call);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &call);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, call.error);
}

Result<HttpResponse> Transport::perform(void* handle, const HttpRequest& r, Call& call) {
  auto* curl = static_cast<CURL*>(handle);
  call.curl = curl;
  curl_slist* headers = curl_slist_append(nullptr, "Accept: application/json");
  if (!r.content_type.empty())
    headers = curl_slist_append(headers, ("Content-Type: " + r.content_type).c_str());
  if (!config_.token.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + config_.token).c_str());
  setup(curl, r, call, headers);
  const CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && call.stopped_by_callback))
    return HttpResponse{static_cast<int>(code), std::move(call.body), call.retry_after_seconds};
  ApiError e;
  e.kind = rc == CURLE_ABORTED_BY_CALLBACK ? ErrorKind::Stopped : ErrorKind::Transport;
  e.method = r.method;
  e.path = r.target;
  e.message = call.error[0] != '\0' ? call.error : curl_easy_strerror(rc);
  return e;
}

namespace {
ApiError no_handle(const HttpRequest& r) {
  return ApiError{ErrorKind::Transport, 0, "", "curl_easy_init failed", r.method, r.target, 0};
}
}  // namespace

Result<HttpResponse> Transport::send(const HttpRequest& r) {
  const std::lock_guard lock(mu_);
  auto* curl = static_cast<CURL*>(handle_);
  if (curl == nullptr) return no_handle(r);
  curl_easy_reset(curl);  // options of the last call go; its open connection stays
  Call call;
  return perform(curl, r, call);
}

Result<HttpResponse> Transport::stream(const HttpRequest& r,
                                       const std::function<bool(std::string_view)>& on_data,
                                       std::stop_token stop) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return no_handle(r);
  Call call;
  call.on_data = &on_data;
  call.stop = std::move(stop);
  auto result = perform(curl, r, call);
  curl_easy_cleanup(curl);
  return result;
}

}  // namespace ds::k8s
