// saturn's TLS client against other TLS servers: Python's ssl module (always: python3 is a
// test dependency) and nginx (scripts/deps test installs it). Each
// server runs as a child process on 127.0.0.1 with the test CA's localhost certificate;
// the client verifies it, sends a request and reads the answer to the server's end.
#include "tls_test_support.hpp"
#include "support/child_server.hpp"

#include <saturn/task/runtime.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

using namespace tls_test;
using namespace std::chrono_literals;
using saturn_test::child_server;

namespace {

std::uint16_t free_port() {
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  return l->local_address()->port();  // closed at return: free again (nothing else binds it here)
}

/// GET / over saturn's TLS client; the body after the head, or the error.
struct conn_info {
  std::string alpn;
  bool resumed = false;
};

task<void> get(std::uint16_t port, const tls::context* ctx, std::string host, std::string* out, conn_info* info) {
  auto tcp = co_await net::tcp_stream::connect(net::address::loopback_v4(port), 5s);
  if (!tcp) {
    *out = tcp.err().message();
    co_return;
  }
  auto s = tls::stream::client(*ctx, std::move(*tcp), host);
  auto hs = s->handshake(5s);
  auto ok = co_await std::move(hs);
  if (!ok) {
    *out = ok.err().message();
    co_return;
  }
  info->alpn = std::string(s->alpn());
  info->resumed = s->resumed();
  std::string req = "GET / HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  auto w = s->write(std::as_bytes(std::span(req)));
  auto wr = co_await std::move(w);
  if (!wr) {
    *out = wr.err().message();
    co_return;
  }
  std::vector<std::byte> buf(8192);
  std::string all;
  for (;;) {
    auto rd = s->read(buf);
    auto n = co_await std::move(rd);
    if (!n) {
      // Python's http.server closes without close_notify: the end is reported as
      // truncation, the bytes before it are still there.
      if (!tls::is(n.err(), tls::errc::truncated))
        all += "\n[error: " + n.err().message() + "]";
      break;
    }
    if (*n == 0)
      break;
    all.append(reinterpret_cast<const char*>(buf.data()), *n);
  }
  const auto body = all.find("\r\n\r\n");
  *out = body == std::string::npos ? all : all.substr(body + 4);
}

}  // namespace

TEST(tls_peers, saturn_client_against_python_ssl_server) {
  const pki& p = pki::get();
  const std::string script = p.dir() + "/https_server.py";
  std::ofstream(script) << R"(import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello from python"
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
ctx.set_alpn_protocols(["http/1.1"])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print(srv.server_address[1], flush=True)
srv.serve_forever()
)";
  child_server py({"python3", script, p.pem("localhost"), p.key("localhost")});
  const std::string port = py.first_line();
  ASSERT_FALSE(port.empty()) << "the Python server did not start";
  saturn::runtime rt;
  auto ctx = tls::context::client({.ca_file = p.pem("ca"), .alpn = {"http/1.1"}});
  ASSERT_TRUE(ctx.has_value());
  std::string body;
  conn_info info;
  rt.block_on(get(static_cast<std::uint16_t>(std::stoi(port)), &*ctx, "localhost", &body, &info));
  EXPECT_EQ(body, "hello from python");
  EXPECT_EQ(info.alpn, "http/1.1");
  // The same server, checked under a name its certificate does not carry.
  std::string wrong;
  conn_info ignored;
  rt.block_on(get(static_cast<std::uint16_t>(std::stoi(port)), &*ctx, "example.com", &wrong, &ignored));
  EXPECT_NE(wrong.find("hostname mismatch"), std::string::npos) << wrong;
}

TEST(tls_peers, saturn_client_against_nginx) {
  if (saturn_test::nginx_binary().empty())
    GTEST_SKIP() << "nginx is not installed (Debian package nginx; scripts/deps test installs it)";
  const pki& p = pki::get();
  const std::uint16_t port = free_port();
  child_server ngx(saturn_test::nginx_config(
      p.dir() + "/nginx", "  server { listen 127.0.0.1:" + std::to_string(port) + " ssl;\n" +
                              "    ssl_certificate " + p.pem("localhost") + ";\n" +
                              "    ssl_certificate_key " + p.key("localhost") + ";\n" +
                              "    location / { return 200 'hello from nginx'; } }"));
  saturn::runtime rt;
  auto ctx = tls::context::client({.ca_file = p.pem("ca")});
  ASSERT_TRUE(ctx.has_value());
  std::string body;
  conn_info info;
  for (int attempt = 0; attempt < 50; ++attempt) {  // nginx takes a moment to listen
    body.clear();
    rt.block_on(get(port, &*ctx, "localhost", &body, &info));
    if (body.find("refused") == std::string::npos)
      break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(body, "hello from nginx");
  // Resumption against nginx (TLS 1.2 with Debian's nginx 1.22 defaults): the ticket it
  // sent is offered and taken on the next connection, although the client closed without
  // close_notify.
  std::string again;
  conn_info second;
  rt.block_on(get(port, &*ctx, "localhost", &again, &second));
  EXPECT_EQ(again, "hello from nginx");
  EXPECT_TRUE(second.resumed);
}
