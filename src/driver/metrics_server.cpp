#include "driver/metrics_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "core/error.hpp"

namespace ds::driver {
namespace {

std::int64_t mono_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

using Client = MetricsServer::Client;

// Writes what the client will take now; false when the answer is done or the socket broke.
bool send_some(Client& c) {
  const ssize_t n =
      ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n > 0) c.sent += static_cast<std::size_t>(n);
  return c.sent < c.out.size() && !(n < 0 && errno != EAGAIN && errno != EINTR);
}

}  // namespace

MetricsServer::MetricsServer(const std::string& address, std::function<std::string()> body,
                             int idle_timeout_ms, int max_clients, int request_timeout_ms)
    : body_(std::move(body)),
      idle_timeout_ms_(idle_timeout_ms),
      max_clients_(std::max(1, max_clients)),
      request_timeout_ms_(request_timeout_ms) {
  std::string host = "127.0.0.1";
  std::string port = address;
  if (auto c = address.rfind(':'); c != std::string::npos) {
    if (c > 0) host = address.substr(0, c);
    port = address.substr(c + 1);
  }
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535)
    throw InputError("metrics address '" + address + "': the port must be 0..65535");
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(p));
  if (inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1)
    throw InputError("metrics address '" + address + "': not an IPv4 address");
  host_ = host;
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd_ >= 0) ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::listen(fd_, 64) != 0) {
    const std::string err = std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    throw InputError("metrics address '" + address + "': " + err);
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  socklen_t len = sizeof sa;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&sa), &len);
  port_ = ntohs(sa.sin_port);
  thread_ = std::thread([this] { serve(); });
}

MetricsServer::~MetricsServer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

// Reads what a client sent; once its request header is complete (or 8 KiB arrived: the path
// does not matter) the answer is made and written as far as the socket takes it. Marks the
// client for closing (deadline 0) when it is done, closed or broken.
void MetricsServer::on_readable(Client& c, std::int64_t now) {
  char buf[2048];
  const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
  if (n <= 0) {
    if (!(n < 0 && (errno == EAGAIN || errno == EINTR))) c.deadline = 0;
    return;
  }
  c.in.append(buf, static_cast<std::size_t>(n));
  if (c.in.find("\r\n\r\n") == std::string::npos && c.in.find("\n\n") == std::string::npos &&
      c.in.size() < 8192)
    return;
  const std::string text = body_();
  c.out = "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
          std::to_string(text.size()) + "\r\nConnection: close\r\n\r\n" + text;
  c.answering = true;
  c.deadline = send_some(c) ? now + idle_timeout_ms_ : 0;  // most answers go at once
}

// New connections, at most half the limit per turn (the open ones get their turn between):
// each is read at once (a scraper's request comes with its connect); beyond the limit the
// oldest connection still waiting for its request is closed.
void MetricsServer::accept_some(std::vector<Client>& clients, std::int64_t now) {
  for (int k = 0; k < std::max(1, max_clients_ / 2); ++k) {
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (static_cast<int>(clients.size()) >= max_clients_) {
      auto oldest = clients.end();
      for (auto it = clients.begin(); it != clients.end(); ++it)
        if (!it->answering && (oldest == clients.end() || it->accepted < oldest->accepted))
          oldest = it;
      if (oldest == clients.end()) {  // all are being answered: refuse this one
        ::close(fd);
        continue;
      }
      ::close(oldest->fd);
      clients.erase(oldest);
    }
    clients.push_back({fd, {}, {}, 0, false, now + request_timeout_ms_, now});
    on_readable(clients.back(), now);
    if (clients.back().deadline == 0) {
      ::close(fd);
      clients.pop_back();
    }
  }
}

// One loop over the listening socket and every open connection.
void MetricsServer::serve() {
  std::vector<Client> clients;
  std::vector<pollfd> fds;
  while (!stop_) {
    fds.clear();
    fds.push_back({fd_, POLLIN, 0});
    for (const auto& c : clients)
      fds.push_back({c.fd, static_cast<short>(c.answering ? POLLOUT : POLLIN), 0});
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) break;
    const std::int64_t now = mono_ms();
    for (std::size_t k = 1; k < fds.size(); ++k) {
      Client& c = clients[k - 1];
      const short ev = fds[k].revents;
      if (!c.answering && (ev & (POLLIN | POLLHUP | POLLERR))) {
        on_readable(c, now);
      } else if (c.answering && (ev & (POLLOUT | POLLHUP | POLLERR))) {
        if (!send_some(c)) c.deadline = 0;  // done (or broken): close
      }
    }
    // Close finished, broken and timed-out connections.
    std::erase_if(clients, [&](const Client& c) {
      if (c.deadline > now) return false;
      ::close(c.fd);
      return true;
    });
    if (fds[0].revents & POLLIN) accept_some(clients, now);
  }
  for (const auto& c : clients) ::close(c.fd);
}

}  // namespace ds::driver
