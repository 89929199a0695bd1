// tls-beast: the `tls` suite's TLS echo server (docs/workloads.md) on Boost.Beast's
// ssl_stream over Boost.Asio's ssl (OpenSSL 3).
//
//   tls-beast --port P [--threads W] --tls-cert CERT.pem --tls-key KEY.pem
//
// One io_context per thread (concurrency hint 1), each with its own SO_REUSEPORT
// acceptor on 127.0.0.1:P (bench/peers/common/cxx/asio_server.hpp, as echo-asio), and
// one ssl::context shared by all of them, set up the way Beast's examples do
// (ssl::context::tls_server; default_workarounds | no_sslv2 | no_sslv3 | single_dh_use;
// use_certificate_chain_file / use_private_key_file) plus TLS 1.2 as the floor. OpenSSL's
// defaults decide the rest: TLS 1.3 session tickets on, ciphers, groups.
//
// A connection is a beast::ssl_stream<beast::tcp_stream>: async_handshake under a 10 s
// expires_after (saturn-echo --tls gives a handshake 10 s too), then expires_never and
// the classic echo: async_read_some into a 64 KiB buffer (as Go and saturn-echo), async_write
// of what arrived, read again; at the peer's close_notify (ssl::error::stream_truncated or
// eof), async_shutdown. TCP_NODELAY on every accepted socket. See README.md.
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/ssl.h>

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
namespace beast = boost::beast;
namespace ssl = boost::asio::ssl;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr const char* kUsage = "tls-beast --port P [--threads W] --tls-cert CERT.pem --tls-key KEY.pem";

ssl::context* g_ctx = nullptr;  // set once in main before any thread runs; read-only after

class session : public std::enable_shared_from_this<session> {
 public:
  explicit session(tcp::socket socket) : m_stream(std::move(socket), *g_ctx) {}

  /// Called by the listener: the TLS handshake first, then the echo.
  void read() {
    beast::get_lowest_layer(m_stream).expires_after(std::chrono::seconds(10));
    m_stream.async_handshake(ssl::stream_base::server, [self = shared_from_this()](error_code ec) {
      if (ec)
        return;
      beast::get_lowest_layer(self->m_stream).expires_never();
      self->echo();
    });
  }

 private:
  void echo() {
    m_stream.async_read_some(asio::buffer(m_buffer), [self = shared_from_this()](error_code ec, std::size_t n) {
      if (ec) {
        if (ec == asio::error::eof || ec == ssl::error::stream_truncated)
          self->close();
        return;
      }
      asio::async_write(self->m_stream, asio::buffer(self->m_buffer.data(), n), [self](error_code ec, std::size_t) {
        if (!ec)
          self->echo();
      });
    });
  }

  void close() {
    beast::get_lowest_layer(m_stream).expires_after(std::chrono::seconds(10));
    m_stream.async_shutdown([self = shared_from_this()](error_code) {});
  }

  beast::ssl_stream<beast::tcp_stream> m_stream;
  std::array<char, 64 * 1024> m_buffer;
};

}  // namespace

int main(int argc, char** argv) {
  peer::options o = peer::parse_options(argc, argv, kUsage, {"port", "tls-cert", "tls-key"});
  const long long port = peer::parse_count(kUsage, "--port", o.value_of("port", "").c_str());
  if (port > 65535)
    peer::usage_error(kUsage, "--port must be below 65536");
  const std::string cert = o.value_of("tls-cert", ""), key = o.value_of("tls-key", "");
  if (cert.empty() || key.empty())
    peer::usage_error(kUsage, "--tls-cert and --tls-key are required");

  ssl::context ctx(ssl::context::tls_server);
  try {
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                    ssl::context::single_dh_use);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    ctx.use_certificate_chain_file(cert);
    ctx.use_private_key_file(key, ssl::context::pem);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tls-beast: %s / %s: %s\n", cert.c_str(), key.c_str(), e.what());
    return 1;
  }
  g_ctx = &ctx;

  const tcp::endpoint at(asio::ip::address_v4::loopback(), static_cast<unsigned short>(port));
  std::vector<std::unique_ptr<asio::io_context>> loops;
  std::vector<std::unique_ptr<peer::asio_server::listener<session>>> listeners;
  try {
    for (int i = 0; i < o.threads; ++i) {
      loops.push_back(std::make_unique<asio::io_context>(1));
      listeners.push_back(std::make_unique<peer::asio_server::listener<session>>(*loops.back(), at));
      listeners.back()->accept();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tls-beast: listen on 127.0.0.1:%lld: %s\n", port, e.what());
    return 1;
  }
  std::vector<std::thread> threads;
  for (int i = 1; i < o.threads; ++i)
    threads.emplace_back([&loops, i] { loops[std::size_t(i)]->run(); });
  loops[0]->run();
  for (auto& t : threads)
    t.join();
  return 0;
}
