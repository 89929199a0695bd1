// The HTTP/1.1 server over TLS (server::serve(listener, tls::context)) against a blocking
// OpenSSL client on the test thread (independent of saturn's TLS code on the client side)
// and saturn's own TLS client: keep-alive, pipelining, a large body both ways, close with
// close_notify, a 101 refused over TLS, the header timeout bounding a silent handshake
// while others are served, stop() with TLS connections open, and http::serve with a plain
// and an HTTPS endpoint side by side.
#include "http_test_support.hpp"
#include "tls/tls_test_support.hpp"

#include <saturn/http/client.hpp>
#include <saturn/http/serve.hpp>
#include <saturn/http/websocket.hpp>
#include <saturn/task/join_handle.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using saturn::http::request;
using saturn::http::response;
using saturn::http::route_params;

namespace {

int connect_tcp(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

/// A blocking OpenSSL client that trusts the test CA and checks the name "localhost".
class blocking_tls {
 public:
  explicit blocking_tls(std::uint16_t port) {
    m_ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_load_verify_locations(m_ctx, tls_test::pki::get().pem("ca").c_str(), nullptr);
    SSL_CTX_set_verify(m_ctx, SSL_VERIFY_PEER, nullptr);
    m_fd = connect_tcp(port);
    m_ssl = SSL_new(m_ctx);
    SSL_set_fd(m_ssl, m_fd);
    SSL_set_tlsext_host_name(m_ssl, "localhost");
    SSL_set1_host(m_ssl, "localhost");
    m_ok = SSL_connect(m_ssl) == 1;
  }
  ~blocking_tls() {
    SSL_free(m_ssl);
    SSL_CTX_free(m_ctx);
    if (m_fd >= 0)
      ::close(m_fd);
  }
  bool ok() const { return m_ok; }
  bool send(const std::string& s) { return SSL_write(m_ssl, s.data(), static_cast<int>(s.size())) == static_cast<int>(s.size()); }
  /// One response: its head and body (Content-Length framing); empty head at end/error.
  std::pair<std::string, std::string> response() {
    for (;;) {
      auto end = m_buf.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::string head = m_buf.substr(0, end);
        std::size_t len = 0;
        auto cl = head.find("Content-Length: ");
        if (cl != std::string::npos)
          len = std::stoul(head.substr(cl + 16));
        if (m_buf.size() >= end + 4 + len) {
          std::string body = m_buf.substr(end + 4, len);
          m_buf.erase(0, end + 4 + len);
          return {head, body};
        }
      }
      if (!fill())
        return {};
    }
  }
  /// Exactly `n` bytes after what response() took (fewer at end of stream).
  std::string take(std::size_t n) {
    while (m_buf.size() < n && fill()) {
    }
    std::string out = m_buf.substr(0, n);
    m_buf.erase(0, out.size());
    return out;
  }
  /// Reads to the end: 0 (close_notify), or the SSL error code.
  int read_to_end() {
    char buf[4096];
    for (;;) {
      int n = SSL_read(m_ssl, buf, sizeof buf);
      if (n > 0)
        continue;
      int e = SSL_get_error(m_ssl, n);
      ERR_clear_error();
      return e == SSL_ERROR_ZERO_RETURN ? 0 : e;
    }
  }

 private:
  bool fill() {
    char buf[16384];
    int n = SSL_read(m_ssl, buf, sizeof buf);
    if (n <= 0)
      return false;
    m_buf.append(buf, static_cast<std::size_t>(n));
    return true;
  }
  SSL_CTX* m_ctx = nullptr;
  SSL* m_ssl = nullptr;
  int m_fd = -1;
  bool m_ok = false;
  std::string m_buf;
};

saturn::task<response> switcher(const request&, const route_params&) {
  response r(101, "text/plain", "");
  r.set_upgrade([](saturn::net::tcp_stream&, std::span<const std::byte>) -> saturn::task<void> { co_return; });
  co_return r;
}

/// Echoes WebSocket messages over either kind of session.
template <class Session>
saturn::task<void> ws_echo(Session& s) {
  for (;;) {
    auto m = co_await s.receive();
    if (!m || m->kind == saturn::http::websocket::message_kind::close)
      break;
    auto sent = co_await s.echo(*m);
    if (!sent)
      break;
  }
}
saturn::task<response> ws_route(const request& req, const route_params&) {
  co_return saturn::http::websocket::accept(req, [](auto& s) { return ws_echo(s); });
}
saturn::task<response> ws_plain_only(const request& req, const route_params&) {
  co_return saturn::http::websocket::accept(
      req, [](saturn::http::websocket::session<saturn::net::tcp_stream&>& s) { return ws_echo(s); });
}

/// An HTTPS server (the test CA's localhost certificate) on 127.0.0.1:<ephemeral>.
class https_server {
 public:
  explicit https_server(saturn::http::server_options opts = {})
      : m_pool({.threads = 2, .mode = saturn::pool_mode::io}), m_ctx(tls_test::server_ctx({"http/1.1"})) {
    std::signal(SIGPIPE, SIG_IGN);
    m_routes.get("/plaintext", http_test::plaintext);
    m_routes.get("/seq/{n}", http_test::seq);
    m_routes.add("POST", "/echo", http_test::echo);
    m_routes.get("/switch", switcher);
    m_routes.get("/ws", ws_route);
    m_routes.get("/ws-plain", ws_plain_only);
    m_server.emplace(m_routes, std::move(opts));
    auto l = saturn::net::tcp_listener::bind(saturn::net::address::loopback_v4(0));
    if (!l)
      throw std::runtime_error(l.err().message());
    m_port = l->local_address()->port();
    m_listener.emplace(std::move(*l));
    m_done.emplace(m_pool.spawn(run(*m_server, *m_listener, m_ctx)));
  }
  ~https_server() { stop(); }
  /// Stops the server; how long serve() took to return.
  std::chrono::milliseconds stop() {
    if (!m_done)
      return 0ms;
    const auto t0 = std::chrono::steady_clock::now();
    m_server->stop();
    m_pool.block_on(join(std::move(*m_done)));
    m_done.reset();
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  }
  std::uint16_t port() const { return m_port; }
  saturn::http::server& server() { return *m_server; }
  saturn::thread_pool& pool() { return m_pool; }

 private:
  static saturn::task<bool> run(saturn::http::server& s, saturn::net::tcp_listener& l, const saturn::tls::context& c) {
    auto r = co_await s.serve(l, c);
    co_return r.has_value();
  }
  static saturn::task<bool> join(saturn::join_handle<bool> h) { co_return co_await std::move(h); }

  saturn::thread_pool m_pool;
  saturn::tls::context m_ctx;
  saturn::http::router m_routes;
  std::optional<saturn::http::server> m_server;
  std::optional<saturn::net::tcp_listener> m_listener;
  std::uint16_t m_port = 0;
  std::optional<saturn::join_handle<bool>> m_done;
};

}  // namespace

TEST(https, keep_alive_requests_on_one_connection) {
  https_server srv;
  blocking_tls c(srv.port());
  ASSERT_TRUE(c.ok());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(c.send("GET /seq/" + std::to_string(i) + " HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    auto [head, body] = c.response();
    ASSERT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
    EXPECT_EQ(body, std::to_string(i));
  }
}

TEST(https, pipelined_requests_answer_in_order) {
  https_server srv;
  blocking_tls c(srv.port());
  ASSERT_TRUE(c.ok());
  std::string batch;
  for (int i = 0; i < 16; ++i)
    batch += "GET /seq/" + std::to_string(i) + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ASSERT_TRUE(c.send(batch));
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(c.response().second, std::to_string(i));
}

TEST(https, large_body_both_ways) {
  https_server srv;
  blocking_tls c(srv.port());
  ASSERT_TRUE(c.ok());
  std::string body(300'000, '\0');
  for (std::size_t i = 0; i < body.size(); ++i)
    body[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\n\r\n" + body));
  auto [head, got] = c.response();
  ASSERT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  EXPECT_TRUE(got == body);
}

TEST(https, connection_close_ends_with_close_notify) {
  https_server srv;
  blocking_tls c(srv.port());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send("GET /plaintext HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"));
  EXPECT_EQ(c.response().second, "Hello, World!");
  EXPECT_EQ(c.read_to_end(), 0) << "the server closes with close_notify, not a bare FIN";
}

TEST(https, protocol_switch_is_refused_over_tls) {
  https_server srv;
  blocking_tls c(srv.port());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send("GET /switch HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  auto [head, body] = c.response();
  EXPECT_EQ(head.rfind("HTTP/1.1 501", 0), 0u) << head;
}

namespace {
const char* const k_upgrade_tail =
    " HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

/// A masked client text frame of `payload` (< 126 bytes).
std::string masked_text(const std::string& payload) {
  std::string f;
  f.push_back(static_cast<char>(0x81));
  f.push_back(static_cast<char>(0x80 | payload.size()));
  const char mask[4] = {0x11, 0x22, 0x33, 0x44};
  f.append(mask, 4);
  for (std::size_t i = 0; i < payload.size(); ++i)
    f.push_back(static_cast<char>(payload[i] ^ mask[i % 4]));
  return f;
}
}  // namespace

TEST(https, websocket_over_tls_echoes) {
  https_server srv;
  blocking_tls c(srv.port());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send(std::string("GET /ws") + k_upgrade_tail + masked_text("hello over wss")));
  auto [head, rest] = c.response();
  ASSERT_EQ(head.rfind("HTTP/1.1 101", 0), 0u) << head;
  EXPECT_NE(head.find("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), std::string::npos) << head;
  // The server's frame: unmasked text, 14 bytes.
  std::string frame = c.take(2 + 14);
  ASSERT_EQ(frame.size(), 16u);
  EXPECT_EQ(static_cast<unsigned char>(frame[0]), 0x81);
  EXPECT_EQ(static_cast<unsigned char>(frame[1]), 14);
  EXPECT_EQ(frame.substr(2), "hello over wss");
}

TEST(https, websocket_handler_for_plain_streams_only_is_501_over_tls) {
  https_server srv;
  blocking_tls c(srv.port());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send(std::string("GET /ws-plain") + k_upgrade_tail));
  auto [head, body] = c.response();
  EXPECT_EQ(head.rfind("HTTP/1.1 501", 0), 0u) << head;
}

TEST(https, silent_handshake_is_closed_by_the_header_timeout_while_others_are_served) {
  saturn::http::server_options o;
  o.header_timeout = 400ms;
  https_server srv(o);
  int silent = connect_tcp(srv.port());
  ASSERT_GE(silent, 0);
  const std::string header("\x16\x03\x01\x02\x00", 5);
  ASSERT_EQ(::send(silent, header.data(), header.size(), 0), 5);
  const auto t0 = std::chrono::steady_clock::now();
  {
    blocking_tls c(srv.port());  // a full handshake while the silent one waits
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.send("GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    EXPECT_EQ(c.response().second, "Hello, World!");
  }
  char b;
  const ssize_t n = ::recv(silent, &b, 1, 0);  // end of stream (or an alert) once it expires
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_LE(n, 1);
  EXPECT_GE(waited, 300ms);
  EXPECT_LT(waited, 3s);
  ::close(silent);
}

TEST(https, stop_ends_idle_tls_connections_at_once) {
  https_server srv;
  blocking_tls a(srv.port()), b(srv.port());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(a.send("GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  EXPECT_EQ(a.response().second, "Hello, World!");
  const auto took = srv.stop();
  EXPECT_LT(took, 2000ms);
  EXPECT_EQ(srv.server().connections(), 0u);
}

namespace {
saturn::task<void> saturn_client_get(std::uint16_t port, const saturn::tls::context* ctx, std::string* body) {
  auto tcp = co_await saturn::net::tcp_stream::connect(saturn::net::address::loopback_v4(port));
  if (!tcp)
    co_return;
  auto s = saturn::tls::stream::client(*ctx, std::move(*tcp), "localhost");
  auto hs = s->handshake(5s);
  auto ok = co_await std::move(hs);
  if (!ok) {
    *body = ok.err().message();
    co_return;
  }
  std::string req = "GET /plaintext HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  auto w = s->write(std::as_bytes(std::span(req)));
  (void)co_await std::move(w);
  std::vector<std::byte> buf(4096);
  std::string all;
  for (;;) {
    auto rd = s->read(buf);
    auto n = co_await std::move(rd);
    if (!n || *n == 0)
      break;
    all.append(reinterpret_cast<const char*>(buf.data()), *n);
  }
  *body = all.substr(all.find("\r\n\r\n") + 4);
}
}  // namespace

TEST(https, serve_with_plain_and_tls_endpoints) {
  saturn::thread_pool pool({.threads = 2, .mode = saturn::pool_mode::io});
  saturn::http::router routes;
  routes.get("/plaintext", http_test::plaintext);
  std::vector<saturn::http::endpoint> eps{{saturn::net::address::loopback_v4(0)},
                                          {saturn::net::address::loopback_v4(0), tls_test::server_ctx({"http/1.1"})}};
  std::promise<void> ready;
  std::vector<std::uint16_t> ports;
  std::stop_source stop;
  saturn::http::serve_options o;
  o.stop_on_signals = false;
  o.stop = stop.get_token();
  o.on_listening = [&](const saturn::net::address& a) {
    ports.push_back(a.port());
    if (ports.size() == 2)
      ready.set_value();
  };
  std::thread th([&] {
    auto r = saturn::http::serve(pool, routes, eps, o);
    EXPECT_TRUE(r.has_value()) << r.err().message();
  });
  ready.get_future().wait();
  {
    blocking_tls c(ports[1]);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.send("GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n"));
    EXPECT_EQ(c.response().second, "Hello, World!");
  }
  saturn::runtime rt;
  auto cctx = tls_test::client_ctx();
  std::string body;
  rt.block_on(saturn_client_get(ports[1], &cctx, &body));
  EXPECT_EQ(body, "Hello, World!");
  int plain = connect_tcp(ports[0]);
  const std::string req = "GET /plaintext HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(plain, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  std::string got;
  char buf[1024];
  for (ssize_t n; (n = ::recv(plain, buf, sizeof buf, 0)) > 0;)
    got.append(buf, static_cast<std::size_t>(n));
  ::close(plain);
  EXPECT_NE(got.find("Hello, World!"), std::string::npos);
  stop.request_stop();
  th.join();
}

// http::client over TLS: a name (localhost, from /etc/hosts through net::resolve), the
// test CA trusted, keep-alive on one TLS connection; the system store does not trust the
// test CA, so a client without ca_file refuses the server.
TEST(https, saturn_http_client_keeps_one_verified_tls_connection) {
  https_server srv;
  saturn::tls::client_config cc;
  cc.ca_file = tls_test::pki::get().pem("ca");
  auto ctx = saturn::tls::context::client(cc);
  ASSERT_TRUE(ctx) << ctx.err().message();
  saturn::http::client_options o;
  o.tls = &*ctx;
  saturn::http::client c(o);
  const std::string url = "https://localhost:" + std::to_string(srv.port()) + "/plaintext";
  const int ok = srv.pool().block_on([](saturn::http::client& cl, std::string u) -> saturn::task<int> {
    int n = 0;
    for (int i = 0; i < 10; ++i) {
      auto r = co_await cl.get(u);
      if (r && r->status == 200 && r->body == "Hello, World!")
        ++n;
    }
    co_return n;
  }(c, url));
  EXPECT_EQ(ok, 10);
  EXPECT_EQ(c.connections_opened(), 1u);
  saturn::http::client untrusting;
  auto refused = srv.pool().block_on(untrusting.get(url));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.err().message().find("TLS handshake"), std::string::npos) << refused.err().message();
}
