// The HTTP/1.1 server scenario (scenarios.hpp).
#include "sim/http_harness.hpp"
#include "sim/scenarios.hpp"

#include <saturn/http.hpp>
#include <saturn/net.hpp>
#include <saturn/task.hpp>

#include <sys/socket.h>

#include <charconv>
#include <exception>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace saturn::sim_scenarios {
namespace {

using namespace std::chrono_literals;

[[noreturn]] void http_fail(const std::string& what) { throw std::runtime_error("http scenario: " + what); }

/// Under injected faults (the http-faults scenario) a connection may fail at any step:
/// a client then gives up quietly. A wrong answer is a failure either way.
bool g_tolerant = false;

/// Uploads and downloads past the sockets' buffers (http-bulk): their progress then waits
/// for TCP's own acknowledgements, some of which the kernel delays on a real-time timer,
/// so such a run is not bit-for-bit a function of the seed (docs/decisions/simulation.md).
/// Without it every transfer fits in the buffers and the trace replays exactly.
bool g_bulk = false;

/// A connection-level failure: fails the run, or (tolerant) tells the client to stop.
bool lost(const std::string& what) {
  if (!g_tolerant)
    http_fail(what);
  return true;
}

/// Reads one response from `c` (status and body by Content-Length) into `status`/`body`,
/// keeping bytes past it in `rest`. False at end of stream or error before a whole one.
task<bool> read_response(net::tcp_stream& c, std::string& rest, int& status, std::string& body) {
  for (;;) {
    const std::size_t end = rest.find("\r\n\r\n");
    if (end != std::string::npos) {
      if (rest.compare(0, 9, "HTTP/1.1 ") != 0)
        http_fail("not a status line: " + rest.substr(0, 40));
      std::from_chars(rest.data() + 9, rest.data() + 12, status);
      std::size_t len = 0;
      const std::size_t cl = rest.find("content-length: ");
      const std::size_t cl2 = rest.find("Content-Length: ");
      const std::size_t at = cl < end ? cl : cl2;
      if (at == std::string::npos || at > end)
        http_fail("no Content-Length in: " + rest.substr(0, end));
      std::from_chars(rest.data() + at + 16, rest.data() + end, len);
      if (rest.size() >= end + 4 + len) {
        body = rest.substr(end + 4, len);
        rest.erase(0, end + 4 + len);
        co_return true;
      }
    }
    std::byte buf[16384];
    auto n = co_await c.recv(buf);
    if (!n || *n == 0)
      co_return false;
    rest.append(reinterpret_cast<const char*>(buf), *n);
  }
}

/// Keep-alive client: `count` requests, pipelined in seed-chosen batches.
task<void> pipelining_client(sim::world& w, std::uint16_t port, int id) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  if (!c && lost("connect: " + c.err().message()))
    co_return;
  const int count = 1 + static_cast<int>(w.random_below(6));
  std::string rest;
  std::vector<std::size_t> asked;
  int sent = 0, got = 0;
  while (got < count) {
    const int batch = 1 + static_cast<int>(w.random_below(static_cast<std::uint64_t>(count - sent > 0 ? count - sent : 1)));
    std::string reqs;
    for (int i = 0; i < batch && sent < count; ++i, ++sent) {
      const std::size_t n = w.random_below(3000);
      asked.push_back(n);
      reqs += "GET /data?n=" + std::to_string(n) + "&c=" + std::to_string(id) + " HTTP/1.1\r\nHost: sim\r\n\r\n";
    }
    // Split the batch at a seed-chosen point: request heads arrive in pieces too.
    const std::size_t cut = w.random_below(reqs.size());
    auto a = co_await c->send(std::as_bytes(std::span(reqs.data(), cut)));
    auto b = co_await c->send(std::as_bytes(std::span(reqs.data() + cut, reqs.size() - cut)));
    if ((!a || !b) && lost("send failed"))
      co_return;
    for (; got < sent; ++got) {
      int status = 0;
      std::string body;
      const bool ok = co_await read_response(*c, rest, status, body);
      if (!ok && lost("connection " + std::to_string(id) + " ended before response " + std::to_string(got + 1)))
        co_return;
      if (status != 200)
        http_fail("status " + std::to_string(status));
      // Each answer is the body its request asked for, in request order.
      if (body != body_of(asked[static_cast<std::size_t>(got)]))
        http_fail("response " + std::to_string(got + 1) + " on connection " + std::to_string(id) + " is not the body its "
             "request asked for (" + std::to_string(body.size()) + " bytes, expected " +
             std::to_string(asked[static_cast<std::size_t>(got)]) + ")");
    }
  }
  co_await c->close();
}

/// An upload in pieces (Content-Length), answered with the byte count.
task<void> upload_client(sim::world& w, std::uint16_t port) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  if (!c && lost("connect: " + c.err().message()))
    co_return;
  const std::size_t n = 1 + w.random_below(g_bulk ? 200'000 : 30'000);
  const std::string body = body_of(n);
  const std::string head = "POST /upload HTTP/1.1\r\nHost: sim\r\nContent-Length: " + std::to_string(n) + "\r\n\r\n";
  auto h = co_await c->send(std::as_bytes(std::span(head)));
  if (!h && lost("send head"))
    co_return;
  std::size_t off = 0;
  while (off < n) {
    const std::size_t piece = 1 + w.random_below(std::min<std::size_t>(n - off, 65536));
    auto s = co_await c->send(std::as_bytes(std::span(body.data() + off, piece)));
    if (!s && lost("send body: " + s.err().message()))
      co_return;
    off += piece;
    if (w.random_below(4) == 0)
      co_await sleep_for(std::chrono::microseconds(w.random_below(2000)));
  }
  std::string rest, answer;
  int status = 0;
  const bool answered = co_await read_response(*c, rest, status, answer);
  if (!answered && lost("no answer to the upload"))
    co_return;
  if (status != 200 || answer != std::to_string(n))
    http_fail("upload answer " + std::to_string(status) + " " + answer + ", expected " + std::to_string(n));
  co_await c->close();
}

/// Half a request, then a reset (SO_LINGER 0): the server must drop the connection.
task<void> reset_client(sim::world& w, std::uint16_t port) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  if (!c && lost("connect: " + c.err().message()))
    co_return;
  const std::string part = std::string("GET /data?n=10 HTTP/1.1\r\nHost: si").substr(0, 1 + w.random_below(30));
  (void)co_await c->send(std::as_bytes(std::span(part)));
  co_await sleep_for(std::chrono::microseconds(w.random_below(500)));
  ::linger lg{1, 0};
  ::setsockopt(c->fd(), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  co_await c->close();
}

/// Connects and says nothing: the header timeout must close it.
task<void> silent_client(std::uint16_t port, std::chrono::milliseconds header_timeout) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  if (!c && lost("connect: " + c.err().message()))
    co_return;
  const auto t0 = clock::now();
  std::byte buf[256];
  auto n = co_await c->recv(buf);
  const auto waited = clock::now() - t0;
  // A 408 or a plain close, once the timeout has passed (never before it).
  if (n && *n > 0 && std::string_view(reinterpret_cast<const char*>(buf), 12) != "HTTP/1.1 408")
    http_fail("a silent connection got " + std::string(reinterpret_cast<const char*>(buf), std::min<std::size_t>(*n, 40)));
  if (waited < header_timeout && !g_tolerant)
    http_fail("a silent connection was closed before the header timeout");
  co_await c->close();
}

/// Asks for a big answer and reads it slowly (or not at all, then leaves).
task<void> slow_reader(sim::world& w, std::uint16_t port) {
  auto c = co_await net::tcp_stream::connect(net::address::loopback_v4(port));
  if (!c && lost("connect: " + c.err().message()))
    co_return;
  // Not a tiny SO_RCVBUF: below two segments the receiver's window updates stop and TCP
  // falls back to its persist timer, real time the simulation does not own.
  const std::size_t want = g_bulk ? 300'000 : 30'000;
  const std::string req = "GET /data?n=" + std::to_string(want) + " HTTP/1.1\r\nHost: sim\r\n\r\n";
  (void)co_await c->send(std::as_bytes(std::span(req)));
  std::size_t total = 0;
  const bool gives_up = w.random_below(2) == 0;
  for (int i = 0; i < 400; ++i) {
    co_await sleep_for(std::chrono::microseconds(200 + w.random_below(3000)));
    std::byte buf[8192];
    auto n = co_await c->recv(buf);
    if (!n || *n == 0)
      break;
    total += *n;
    if (gives_up && i == 3)
      break;
    if (total >= want)
      break;
  }
  co_await c->close();
}

}  // namespace

namespace {

task<void> http_run(sim::world& w, bool tolerant, bool bulk) {
  g_tolerant = tolerant;
  g_bulk = bulk;
  return serve_scenario(
      w,
      [&w](std::uint16_t port) {
        std::vector<join_handle<void>> clients;
        const int n = 2 + static_cast<int>(w.random_below(6));
        for (int i = 0; i < n; ++i) {
          switch (w.random_below(6)) {
            case 0: case 1: clients.push_back(spawn(pipelining_client(w, port, i))); break;
            case 2: clients.push_back(spawn(upload_client(w, port))); break;
            case 3: clients.push_back(spawn(reset_client(w, port))); break;
            case 4: clients.push_back(spawn(silent_client(port, 200ms))); break;
            default: clients.push_back(spawn(slow_reader(w, port)));
          }
        }
        return clients;
      },
      "http scenario");
}

}  // namespace

task<void> http_server_scenario(sim::world& w) { return http_run(w, false, false); }

task<void> http_bulk_scenario(sim::world& w) { return http_run(w, false, true); }

task<void> http_faults_scenario(sim::world& w) { return http_run(w, true, false); }

}  // namespace saturn::sim_scenarios
