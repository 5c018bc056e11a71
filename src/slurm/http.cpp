#include "slurm/http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "core/error.hpp"

namespace ds::slurm {

MetricsServer::MetricsServer(const std::string& address, std::function<std::string()> body)
    : body_(std::move(body)) {
  std::string host = "127.0.0.1";
  std::string port = address;
  if (auto c = address.rfind(':'); c != std::string::npos) {
    if (c > 0) host = address.substr(0, c);
    port = address.substr(c + 1);
  }
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(std::atoi(port.c_str())));
  if (inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1)
    throw InputError("metrics address '" + address + "': not an IPv4 address");
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::listen(fd_, 16) != 0) {
    const std::string err = std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    throw InputError("metrics address '" + address + "': " + err);
  }
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

void MetricsServer::serve() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) continue;
    char buf[2048];
    pollfd pc{c, POLLIN, 0};
    if (::poll(&pc, 1, 1000) > 0) (void)::recv(c, buf, sizeof buf, 0);
    const std::string text = body_();
    const std::string resp =
        "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
        std::to_string(text.size()) + "\r\nConnection: close\r\n\r\n" + text;
    std::size_t off = 0;
    while (off < resp.size()) {
      ssize_t n = ::send(c, resp.data() + off, resp.size() - off, MSG_NOSIGNAL);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    ::close(c);
  }
}

}  // namespace ds::slurm
