// http-asio: the `http` suite's HTTP/1.1 server (docs/workloads.md) on Boost.Asio,
// with Boost.Beast for HTTP, the way Asio users write an HTTP server (see README.md).
//
//   http-asio --port P [--threads W]
//
// Threads as in echo-asio: one io_context per thread (concurrency hint 1), each with
// its own SO_REUSEPORT acceptor on 127.0.0.1:P; a connection stays on its thread.
//
// A connection is Beast's async HTTP server session (its http_server_async example,
// minus the file serving): http::async_read of one request into a flat_buffer, a
// routed http::response<string_body>, http::async_write, read the next one. Pipelined
// requests wait in the flat_buffer and are answered one by one, in order. Keep-alive
// is Beast's reading of the request (HTTP/1.1 default, `Connection` honoured).
//
//   GET /plaintext  200 text/plain        Hello, World!
//   GET /json       200 application/json  {"message":"Hello, World!"}
//   GET /delay/MS   200 text/plain        MS, after a steady_timer of MS milliseconds
//   anything else   404
// Every response: Server: asio, Date (formatted once a second per thread),
// Content-Type, Content-Length (prepare_payload).
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "asio_server.hpp"
#include "peer_bench.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr const char* kUsage = "http-asio --port P [--threads W]";

/// The Date header value, formatted again only when the second changes. Per thread.
std::string_view http_date() {
  thread_local time_t shown = 0;
  thread_local char text[40];
  thread_local std::size_t length = 0;
  const time_t now = time(nullptr);
  if (now != shown) {
    tm utc;
    gmtime_r(&now, &utc);
    length = strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
    shown = now;
  }
  return {text, length};
}

/// MS of a "/delay/MS" path, or -1.
long delay_ms(std::string_view path) {
  constexpr std::string_view prefix = "/delay/";
  if (path.substr(0, prefix.size()) != prefix || path.size() == prefix.size() || path.size() > prefix.size() + 9)
    return -1;
  long ms = 0;
  for (char c : path.substr(prefix.size())) {
    if (c < '0' || c > '9') return -1;
    ms = ms * 10 + (c - '0');
  }
  return ms;
}

class session : public std::enable_shared_from_this<session> {
 public:
  explicit session(tcp::socket socket) : m_socket(std::move(socket)), m_timer(m_socket.get_executor()) {}

  void read() {
    m_request = {};
    http::async_read(m_socket, m_buffer, m_request, [self = shared_from_this()](error_code ec, std::size_t) {
      if (ec) return self->close();  // end_of_stream, reset, or a request Beast rejects
      self->route();
    });
  }

 private:
  void route() {
    std::string_view target(m_request.target().data(), m_request.target().size());
    std::string_view path = target.substr(0, target.find('?'));
    if (path == "/plaintext") return respond(http::status::ok, "text/plain", "Hello, World!");
    if (path == "/json") return respond(http::status::ok, "application/json", R"({"message":"Hello, World!"})");
    if (long ms = delay_ms(path); ms >= 0) {
      m_timer.expires_after(std::chrono::milliseconds(ms));
      m_timer.async_wait([self = shared_from_this(), ms](error_code ec) {
        if (!ec) self->respond(http::status::ok, "text/plain", std::to_string(ms));
      });
      return;
    }
    respond(http::status::not_found, "text/plain", "Not Found");
  }

  void respond(http::status status, const char* type, std::string body) {
    m_response = {status, m_request.version()};
    m_response.set(http::field::server, "asio");
    m_response.set(http::field::date, beast::string_view(http_date().data(), http_date().size()));
    m_response.set(http::field::content_type, type);
    m_response.keep_alive(m_request.keep_alive());
    m_response.body() = std::move(body);
    m_response.prepare_payload();
    http::async_write(m_socket, m_response, [self = shared_from_this()](error_code ec, std::size_t) {
      if (ec) return self->close();
      if (!self->m_response.keep_alive()) return self->close();
      self->read();
    });
  }

  void close() {
    error_code ignored;
    m_socket.shutdown(tcp::socket::shutdown_send, ignored);
    m_socket.close(ignored);
  }

  tcp::socket m_socket;
  asio::steady_timer m_timer;
  beast::flat_buffer m_buffer;
  http::request<http::string_body> m_request;
  http::response<http::string_body> m_response;
};

}  // namespace

int main(int argc, char** argv) { return peer::asio_server::run<session>(argc, argv, kUsage, "http-asio"); }
