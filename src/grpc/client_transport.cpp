// grpc::channel's transport: TCP, or TLS with h2 by ALPN (client_transport.hpp).
#include "grpc/client_transport.hpp"

#include <saturn/net/connect.hpp>
#include <saturn/task/time.hpp>
#include <saturn/tls/error.hpp>

#include <utility>

namespace saturn::grpc::detail {

std::string host_of(const std::string& target) {
  if (!target.empty() && target.front() == '[') {
    const auto close = target.find(']');
    return close == std::string::npos ? target : target.substr(1, close - 1);
  }
  const auto colon = target.rfind(':');
  return colon == std::string::npos ? target : target.substr(0, colon);
}

namespace {

/// Why a TLS handshake failed, in the words a user can act on.
std::string handshake_failure(const error& e, std::chrono::milliseconds timeout) {
  if (e == std::errc::timed_out)
    return "the TLS handshake did not finish within " + std::to_string(timeout.count()) + " ms";
  if (e.code.category() == tls::verify_category())
    return "the server's certificate failed verification: " + e.code.message();
  return e.message();
}

}  // namespace

task<client_transport::opened> client_transport::open(const std::string& target, const channel_options& opts) {
  opened out;
  net::connect_options co;
  co.attempt_timeout = opts.connect_timeout;
  auto connecting = net::connect(target, co);
  auto sock = co_await with_timeout(opts.connect_timeout, std::move(connecting));
  if (!sock) {
    out.why = "connect " + target + ": " + sock.err().message();
    co_return out;
  }
  (void)sock->set_nodelay(true);
  client_transport t;
  if (!opts.tls) {
    t.m_tcp.emplace(std::move(*sock));
    out.io.emplace(std::move(t));
    co_return out;
  }
  const channel_tls& cfg = *opts.tls;
  const std::string name = cfg.server_name.empty() ? host_of(target) : cfg.server_name;
  const std::string who = "TLS to " + target + (name == host_of(target) ? "" : " (server name " + name + ")") + ": ";
  auto made = tls::stream::client(cfg.context, std::move(*sock), name);
  if (!made) {
    out.why = who + made.err().message();
    co_return out;
  }
  t.m_tls.emplace(std::move(*made));
  auto hs = t.m_tls->handshake(cfg.handshake_timeout);
  auto shaken = co_await std::move(hs);
  if (!shaken) {
    out.why = who + handshake_failure(shaken.err(), cfg.handshake_timeout);
    auto cl = t.close();
    co_await std::move(cl);
    co_return out;
  }
  if (t.m_tls->alpn() != "h2") {
    const std::string_view chose = t.m_tls->alpn();
    out.why = who +
              (chose.empty() ? std::string("the server chose no ALPN protocol")
                             : "the server chose ALPN \"" + std::string(chose) + "\"") +
              ", not h2: gRPC needs HTTP/2 (the client context must offer it: tls::client_config::alpn = {\"h2\"})";
    auto cl = t.close();
    co_await std::move(cl);
    co_return out;
  }
  out.io.emplace(std::move(t));
  co_return out;
}

task<std::size_t> client_transport::wait(std::span<std::byte> buf) {
  if (m_tls) {
    auto w = m_tls->wait_readable();
    auto ready = co_await std::move(w);
    co_return ready ? 1 : 0;
  }
  auto rv = m_tcp->recv(buf);
  auto got = co_await rv;
  co_return got ? *got : 0;
}

task<result<std::size_t>> client_transport::take(std::span<std::byte> buf, std::size_t n) {
  if (!m_tls)
    co_return n;
  auto rd = m_tls->read(buf);
  co_return co_await std::move(rd);
}

task<result<void>> client_transport::send(std::span<const std::byte> bytes) {
  if (m_tls) {
    auto wr = m_tls->write(bytes);
    auto sent = co_await std::move(wr);
    if (!sent)
      co_return sent.err();
    co_return result<void>{};
  }
  auto sent = co_await m_tcp->send(bytes);
  if (!sent)
    co_return sent.err();
  co_return result<void>{};
}

task<void> client_transport::close() {
  if (m_tls) {
    auto cl = m_tls->close();
    (void)co_await cl;
  } else if (m_tcp) {
    auto cl = m_tcp->close();
    (void)co_await cl;
  }
}

}  // namespace saturn::grpc::detail
