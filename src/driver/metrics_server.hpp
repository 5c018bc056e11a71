// A minimal HTTP/1.0 server for the Prometheus endpoint: plain sockets, one thread, GET of
// any path answers the text from `body()`. Binds only the given address (127.0.0.1 unless
// configured: expose it through a proxy, or configure 0.0.0.0:PORT, if Prometheus runs
// elsewhere).
//
// Concurrent scrapes: one poll() loop multiplexes every connection (non-blocking sockets),
// so a client that connects and sends nothing, or reads slowly, never delays another. Any
// local user can connect, so every connection's time is bounded: its request must arrive
// within `request_timeout_ms` (a scraper sends it at once) and the answer be read within
// `idle_timeout_ms`; at most `max_clients` are open at once, and a new connection beyond
// that closes the oldest one still waiting for its request (a flood of idle connections
// only ever pushes out its own oldest; a scrape's request arrives right after its connect
// and is answered in the same turn of the loop, before the next accept).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace ds::driver {

class MetricsServer {
 public:
  // "host:port" or "port" (host defaults to 127.0.0.1); throws InputError when it cannot bind.
  MetricsServer(const std::string& address, std::function<std::string()> body,
                int idle_timeout_ms = 10000, int max_clients = 64, int request_timeout_ms = 2000);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] const std::string& host() const { return host_; }

 public:
  struct Client {  // one open connection (metrics_server.cpp)
    int fd = -1;
    std::string in;
    std::string out;
    std::size_t sent = 0;
    bool answering = false;
    std::int64_t deadline = 0;  // closed when passed (0: now)
    std::int64_t accepted = 0;
  };

 private:
  void serve();
  void on_readable(Client& c, std::int64_t now);
  void accept_some(std::vector<Client>& clients, std::int64_t now);
  std::function<std::string()> body_;
  int fd_ = -1;
  int port_ = 0;
  std::string host_;
  int idle_timeout_ms_;
  int max_clients_;
  int request_timeout_ms_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ds::driver
