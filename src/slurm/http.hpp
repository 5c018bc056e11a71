// A minimal HTTP/1.0 server for the Prometheus endpoint: plain sockets, one thread,
// GET of any path answers the text from `body()`. Binds only the given address
// (127.0.0.1 by default: expose it through a proxy if Prometheus runs elsewhere).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace ds::slurm {

class MetricsServer {
 public:
  // "host:port" (host defaults to 127.0.0.1); throws InputError when it cannot bind.
  MetricsServer(const std::string& address, std::function<std::string()> body);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  [[nodiscard]] int port() const { return port_; }

 private:
  void serve();
  std::function<std::string()> body_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ds::slurm
