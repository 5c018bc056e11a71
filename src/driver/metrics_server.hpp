// A minimal HTTP/1.0 server for the Prometheus endpoint: plain sockets, one thread, GET of
// any path answers the text from `body()`. Binds only the given address (127.0.0.1 unless
// configured: expose it through a proxy, or configure 0.0.0.0:PORT, if Prometheus runs
// elsewhere).
//
// Concurrent scrapes: one poll() loop multiplexes every connection (non-blocking sockets),
// so a client that connects and sends nothing, or reads slowly, never delays another; an
// idle connection is closed after `idle_timeout_ms`, and at most `max_clients` are open at
// once (more are closed at accept: a flood cannot exhaust descriptors).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace ds::driver {

class MetricsServer {
 public:
  // "host:port" or "port" (host defaults to 127.0.0.1); throws InputError when it cannot bind.
  MetricsServer(const std::string& address, std::function<std::string()> body,
                int idle_timeout_ms = 10000, int max_clients = 64);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] const std::string& host() const { return host_; }

 private:
  void serve();
  std::function<std::string()> body_;
  int fd_ = -1;
  int port_ = 0;
  std::string host_;
  int idle_timeout_ms_;
  int max_clients_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ds::driver
