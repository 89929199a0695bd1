// echo-asio: the `echo` suite's TCP echo server (docs/workloads.md) on Boost.Asio.
//
//   echo-asio --port P [--threads W]
//
// The layout Asio's own documentation recommends for a server that scales with
// cores without sharing: one io_context per thread (constructed with concurrency
// hint 1, so it takes no internal locks), each with its own acceptor on
// 127.0.0.1:P opened with SO_REUSEPORT; the kernel spreads connections over the
// acceptors and a connection lives on its thread for good.
//
// A connection is the classic Asio echo session (the library's
// async_tcp_echo_server example): async_read_some into a 16 KiB buffer, async_write
// of what arrived, read again; the session object lives as long as a handler holds
// its shared_ptr. TCP_NODELAY on every accepted socket.
#include <boost/asio.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "peer_bench.hpp"

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr const char* kUsage = "echo-asio --port P [--threads W]";

class session : public std::enable_shared_from_this<session> {
 public:
  explicit session(tcp::socket socket) : m_socket(std::move(socket)) {}

  void read() {
    m_socket.async_read_some(asio::buffer(m_buffer), [self = shared_from_this()](error_code ec, std::size_t n) {
      if (!ec) self->write(n);
    });
  }

 private:
  void write(std::size_t n) {
    asio::async_write(m_socket, asio::buffer(m_buffer.data(), n),
                      [self = shared_from_this()](error_code ec, std::size_t) {
                        if (!ec) self->read();
                      });
  }

  tcp::socket m_socket;
  std::array<char, 16 * 1024> m_buffer;
};

/// One thread's listener: accepts forever; on an error (EMFILE, ...) retries after
/// 10 ms rather than spinning.
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
      std::make_shared<session>(std::move(socket))->read();
      accept();
    });
  }

 private:
  tcp::acceptor m_acceptor;
  asio::steady_timer m_retry;
};

}  // namespace

int main(int argc, char** argv) {
  peer::options o = peer::parse_options(argc, argv, kUsage, {"port"});
  const long long port = peer::parse_count(kUsage, "--port", o.value_of("port", "").c_str());
  if (port > 65535) peer::usage_error(kUsage, "--port must be below 65536");
  const tcp::endpoint at(asio::ip::address_v4::loopback(), static_cast<unsigned short>(port));

  std::vector<std::unique_ptr<asio::io_context>> loops;
  std::vector<std::unique_ptr<listener>> listeners;
  try {
    for (int i = 0; i < o.threads; ++i) {
      loops.push_back(std::make_unique<asio::io_context>(1));
      listeners.push_back(std::make_unique<listener>(*loops.back(), at));
      listeners.back()->accept();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "echo-asio: listen on 127.0.0.1:%lld: %s\n", port, e.what());
    return 1;
  }
  std::vector<std::thread> threads;
  for (int i = 1; i < o.threads; ++i) threads.emplace_back([&loops, i] { loops[std::size_t(i)]->run(); });
  loops[0]->run();
  for (auto& t : threads) t.join();
  return 0;
}
