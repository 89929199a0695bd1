// asio_server.hpp — the serving skeleton the Asio peers share (echo-asio, http-asio): one
// io_context per thread, each with its own SO_REUSEPORT listener on 127.0.0.1:port (the
// kernel spreads connections over them), the way Asio's own multi-threaded examples run
// a server without a shared acceptor. `Session` is constructed from an accepted socket
// (TCP_NODELAY set), owned through shared_ptr, and started with read().
#pragma once

#include <boost/asio.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "peer_bench.hpp"

namespace peer::asio_server {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

/// One thread's listener: accepts forever; on an error (EMFILE, ...) retries after
/// 10 ms rather than spinning.
template <class Session>
class listener {
 public:
  listener(asio::io_context& io, const tcp::endpoint& at) : m_acceptor(io), m_retry(io) {
    m_acceptor.open(at.protocol());
    m_acceptor.set_option(asio::socket_base::reuse_address(true));
    m_acceptor.set_option(asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true));
    m_acceptor.bind(at);
    m_acceptor.listen(asio::socket_base::max_listen_connections);
  }

  void accept() {
    m_acceptor.async_accept([this](error_code ec, tcp::socket socket) {
      if (ec) {
        m_retry.expires_after(std::chrono::milliseconds(10));
        m_retry.async_wait([this](error_code) { accept(); });
        return;
      }
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<Session>(std::move(socket))->read();
      accept();
    });
  }

 private:
  tcp::acceptor m_acceptor;
  asio::steady_timer m_retry;
};

/// Parses `--port P [--threads W]` (usage text `usage`), serves `Session`s on W threads
/// until killed. Returns main's exit status: 1 if the port cannot be bound (`name` in
/// the message), 2 on bad flags (through peer::usage_error).
template <class Session>
int run(int argc, char** argv, const char* usage, const char* name) {
  peer::options o = peer::parse_options(argc, argv, usage, {"port"});
  const long long port = peer::parse_count(usage, "--port", o.value_of("port", "").c_str());
  if (port > 65535) peer::usage_error(usage, "--port must be below 65536");
  const tcp::endpoint at(asio::ip::address_v4::loopback(), static_cast<unsigned short>(port));

  std::vector<std::unique_ptr<asio::io_context>> loops;
  std::vector<std::unique_ptr<listener<Session>>> listeners;
  try {
    for (int i = 0; i < o.threads; ++i) {
      loops.push_back(std::make_unique<asio::io_context>(1));
      listeners.push_back(std::make_unique<listener<Session>>(*loops.back(), at));
      listeners.back()->accept();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: listen on 127.0.0.1:%lld: %s\n", name, port, e.what());
    return 1;
  }
  std::vector<std::thread> threads;
  for (int i = 1; i < o.threads; ++i) threads.emplace_back([&loops, i] { loops[std::size_t(i)]->run(); });
  loops[0]->run();
  for (auto& t : threads) t.join();
  return 0;
}

}  // namespace peer::asio_server
