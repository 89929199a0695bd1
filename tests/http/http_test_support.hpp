// A saturn HTTP server on a thread_pool for the tests, and a blocking POSIX client (the
// client side is plain sockets on the test thread, so it is independent of saturn), and
// the checks and small helpers the server and client tests share.
#pragma once

#include "support/run_program.hpp"

#include <saturn/http/client.hpp>
#include <saturn/http/serve.hpp>
#include <saturn/http/server.hpp>
#include <saturn/net/address.hpp>
#include <saturn/sched/thread_pool.hpp>
#include <saturn/task/time.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <future>
#include <thread>
#include <cstdio>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace http_test {

using saturn::http::request;
using saturn::http::response;
using saturn::http::route_params;

inline saturn::task<response> plaintext(const request&, const route_params&) {
  co_return response::with_static_body(200, "text/plain", "Hello, World!");
}
inline saturn::task<response> seq(const request&, const route_params& p) {
  co_return response(200, "text/plain", std::string(p.get("n")));
}
inline saturn::task<response> echo(const request& r, const route_params&) {
  co_return response(200, "application/octet-stream", std::string(r.body().view()));
}
/// How many delay handlers are sleeping now (a test waits for its request to be in flight).
inline std::atomic<int> delays_in_flight{0};
inline saturn::task<response> delay(const request&, const route_params& p) {
  int ms = std::stoi(std::string(p.get("ms")));
  auto s = saturn::sleep_for(std::chrono::milliseconds(ms));
  delays_in_flight.fetch_add(1);
  auto slept = co_await s;
  delays_in_flight.fetch_sub(1);
  if (!slept)
    co_return response(503, "text/plain", "cancelled");
  co_return response(200, "text/plain", std::string(p.get("ms")));
}

/// Serves the test routes on 127.0.0.1:<ephemeral> until destroyed.
class test_server {
 public:
  /// `listeners` > 1: that many SO_REUSEPORT listeners on one port, one serve() each.
  /// `multishot_accept`: listen_options::multishot.
  explicit test_server(saturn::http::server_options opts = {}, unsigned threads = 2, unsigned listeners = 1,
                       bool multishot_accept = true)
      : m_pool({.threads = threads, .mode = saturn::pool_mode::io}) {
    std::signal(SIGPIPE, SIG_IGN);
    m_routes.get("/plaintext", plaintext);
    m_routes.get("/seq/{n}", seq);
    m_routes.get("/delay/{ms}", delay);
    m_routes.add("POST", "/echo", echo);
    m_server.emplace(m_routes, std::move(opts));
    for (unsigned i = 0; i < listeners; ++i) {
      auto l = saturn::net::tcp_listener::bind(saturn::net::address::loopback_v4(m_port), {.reuse_port = listeners > 1, .multishot = multishot_accept});
      if (!l)
        throw std::runtime_error("test_server: " + l.err().message());
      m_port = l->local_address()->port();
      m_listeners.push_back(std::move(*l));
    }
    for (auto& l : m_listeners)
      m_done.push_back(m_pool.spawn(run(*m_server, l)));
  }
  ~test_server() { stop(); }
  /// Stops the server and waits until every serve() has returned. Idempotent.
  void stop() {
    if (m_done.empty())
      return;
    m_server->stop();
    for (auto& h : m_done)
      m_pool.block_on(join(std::move(h)));
    m_done.clear();
  }
  std::uint16_t port() const { return m_port; }
  saturn::http::server& server() { return *m_server; }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(m_port) + path; }

 private:
  static saturn::task<bool> run(saturn::http::server& s, saturn::net::tcp_listener& l) {
    auto r = co_await s.serve(l);
    co_return r.has_value();
  }
  static saturn::task<bool> join(saturn::join_handle<bool> h) { co_return co_await std::move(h); }

  saturn::thread_pool m_pool;
  saturn::http::router m_routes;
  std::optional<saturn::http::server> m_server;
  std::vector<saturn::net::tcp_listener> m_listeners;
  std::uint16_t m_port = 0;
  std::vector<saturn::join_handle<bool>> m_done;
};

/// Runs serve() on a thread; its result through a future, its port once listening.
struct running {
  std::promise<std::uint16_t> port_p;
  std::future<std::uint16_t> port_f = port_p.get_future();
  std::stop_source stop;
  std::future<saturn::result<void>> done;
  std::thread th;

  running(saturn::thread_pool& pool, const saturn::http::router& routes, bool signals) {
    saturn::http::serve_options o;
    o.stop_on_signals = signals;
    o.stop = stop.get_token();
    o.on_listening = [this](const saturn::net::address& a) { port_p.set_value(a.port()); };
    std::packaged_task<saturn::result<void>()> job(
        [&pool, &routes, o] { return saturn::http::serve(pool, routes, saturn::net::address::loopback_v4(0), o); });
    done = job.get_future();
    th = std::thread(std::move(job));
  }
  std::uint16_t port() {
    if (port_f.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
      throw std::runtime_error("serve did not start listening");
    return port_f.get();
  }
  ~running() {
    stop.request_stop();
    if (th.joinable())
      th.join();
  }
};

/// A blocking client socket connected to 127.0.0.1:port.
class client {
 public:
  explicit client(std::uint16_t port) {
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      throw std::runtime_error("client: connect failed");
  }
  ~client() {
    if (m_fd >= 0)
      ::close(m_fd);
  }
  void send(const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(m_fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0)
        return;  // the server may close first (errors are the test's to check)
      off += static_cast<std::size_t>(n);
    }
  }
  /// Waits up to `timeout` for bytes: appended to the buffer; false on timeout; sets eof.
  bool read_some(std::chrono::milliseconds timeout) {
    pollfd p{m_fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0)
      return false;
    char tmp[65536];
    ssize_t n = ::recv(m_fd, tmp, sizeof tmp, 0);
    if (n <= 0) {
      eof = true;
      return true;
    }
    buffer.append(tmp, static_cast<std::size_t>(n));
    return true;
  }
  /// Reads until the peer closes (or `timeout` of silence); true if it closed.
  bool read_until_close(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    while (!eof)
      if (!read_some(timeout))
        return false;
    return true;
  }
  /// One response off the front of the buffer (reading as needed): status and body.
  struct resp {
    int status = 0;
    std::string head, body;
  };
  std::optional<resp> read_response(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    for (;;) {
      std::size_t end = buffer.find("\r\n\r\n");
      if (end != std::string::npos) {
        resp r;
        r.head = buffer.substr(0, end + 4);
        r.status = std::stoi(r.head.substr(9, 3));
        std::size_t cl = r.head.find("Content-Length: ");
        std::size_t len = cl == std::string::npos ? 0 : std::stoul(r.head.substr(cl + 16));
        if (buffer.size() >= end + 4 + len) {
          r.body = buffer.substr(end + 4, len);
          buffer.erase(0, end + 4 + len);
          return r;
        }
      }
      if (eof || !read_some(timeout))
        return std::nullopt;
    }
  }
  int fd() const { return m_fd; }
  std::string buffer;
  bool eof = false;

 private:
  int m_fd = -1;
};

/// Sends `req` on a new connection and expects one response with `status`, then the
/// connection closed by the server.
inline void expect_answer_then_close(std::uint16_t port, const std::string& req, int status) {
  client c(port);
  c.send(req);
  auto r = c.read_response();
  ASSERT_TRUE(r) << req.substr(0, 80);
  EXPECT_EQ(r->status, status) << req.substr(0, 80);
  EXPECT_NE(r->head.find("Connection: close"), std::string::npos) << req.substr(0, 80);
  EXPECT_TRUE(c.read_until_close()) << "the server kept the connection open after " << status;
}

using saturn_test::run_command;

inline bool have_program(const char* name) {
  return run_command(std::string("command -v ") + name + " >/dev/null 2>&1 && echo yes").first == "yes\n";
}

/// The value of header field `name` in a response head ("" if absent).
inline std::string field(const std::string& head, const std::string& name) {
  std::size_t at = head.find("\r\n" + name + ": ");
  if (at == std::string::npos)
    return "";
  at += name.size() + 4;
  return head.substr(at, head.find("\r\n", at) - at);
}

/// One GET of `path` (plus the `extra` header lines) on a new connection to `port`.
inline std::optional<client::resp> get(std::uint16_t port, const std::string& path, const std::string& extra = "") {
  client c(port);
  c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n");
  return c.read_response();
}

/// The resident set of this process, in KiB (-1 if /proc says nothing).
inline long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

/// A request built outside any co_await operand (g++ 12 destroys an aggregate built in
/// one twice).
inline saturn::http::client_request make_req(std::string method, std::string url, std::string body = {}) {
  saturn::http::client_request r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.body = std::move(body);
  return r;
}

/// Runs `t` to its end on a two-worker io pool that lives for the whole test process.
template <class T>
T run_on_pool(saturn::task<T> t) {
  static saturn::thread_pool* pool = new saturn::thread_pool({.threads = 2, .mode = saturn::pool_mode::io});
  return pool->block_on(std::move(t));
}

}  // namespace http_test
