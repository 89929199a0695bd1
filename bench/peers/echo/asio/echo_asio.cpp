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

#include "asio_server.hpp"
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

}  // namespace

int main(int argc, char** argv) { return peer::asio_server::run<session>(argc, argv, kUsage, "echo-asio"); }
