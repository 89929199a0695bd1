// CancelRequest (the v3 protocol's cancel): on a second socket to the same server, the
// backend's pid and secret; then wait until the server closes that socket, which it does
// once the signal has been delivered (connection.cpp's cancellation uses it).
#include "pg/state.hpp"

#include "pg/text.hpp"

#include <saturn/net/connect.hpp>
#include <saturn/net/unix_socket.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <span>

namespace saturn::pg::detail {

task<void> send_cancel(config cfg, std::int32_t pid, std::int32_t secret) {
  std::optional<net::stream_socket> sock;
  if (cfg.is_unix()) {
    auto u = co_await net::unix_stream::connect(cfg.socket_path());
    if (u)
      sock.emplace(std::move(*u));
  } else {
    std::string hp = cfg.host.find(':') != std::string::npos ? cat({"[", cfg.host, "]"}) : cfg.host;
    hp.append(":").append(std::to_string(cfg.port));
    auto t = co_await net::connect(hp);
    if (t)
      sock.emplace(std::move(*t));
  }
  if (!sock)
    co_return;
  char msg[16];
  const std::int32_t words[4] = {16, 80877102, pid, secret};
  for (int i = 0; i < 4; ++i) {
    const auto u = static_cast<std::uint32_t>(words[i]);
    msg[i * 4] = char(u >> 24);
    msg[i * 4 + 1] = char(u >> 16);
    msg[i * 4 + 2] = char(u >> 8);
    msg[i * 4 + 3] = char(u);
  }
  auto sent = co_await sock->send(std::as_bytes(std::span(msg, 16)));
  if (sent) {
    const std::chrono::milliseconds limit{2000};
    sock->set_read_timeout(cfg.cancel_timeout.count() > 0 ? std::min(cfg.cancel_timeout, limit) : limit);
    std::byte b[16];
    for (;;) {
      auto n = co_await sock->recv(b);
      if (!n || *n == 0)
        break;
    }
  }
  co_await sock->close();
}

}  // namespace saturn::pg::detail
