// A line-echo server with an idle timeout, and two clients, in one program on one runtime
// (127.0.0.1, a free port). The server reads lines with a buffered_reader and answers each
// with "echo: <line>"; a connection silent for longer than its read timeout is told so and
// closed. One client talks and hangs up; the other connects and says nothing. Ends by
// itself in well under a second.
#include <saturn/net.hpp>
#include <saturn/task/join_handle.hpp>
#include <saturn/task/runtime.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

using saturn::task;
namespace net = saturn::net;
using namespace std::chrono_literals;

std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

// One connection: echo lines until the client hangs up, goes idle, or sends a line too long.
task<void> serve(net::tcp_stream s, int* idle_closed) {
  s.set_read_timeout(100ms);  // every recv waits at most this long for a byte
  net::buffered_reader in(s);
  for (;;) {
    auto line = co_await in.read_line(1024);
    if (!line) {
      if (line.err() == std::errc::timed_out) {
        ++*idle_closed;
        auto sent = co_await s.send(bytes_of("idle: closing\n"));
        (void)sent;
      }
      break;  // timed out, too long a line, or a recv error: drop the connection
    }
    if (!*line)
      break;  // the client hung up
    std::string reply = "echo: ";
    reply += **line;  // the view is valid until the next read: use it (or copy it) now
    reply += '\n';
    auto sent = co_await s.send(bytes_of(reply));
    if (!sent)
      break;
  }
  auto closed = co_await s.close();
  (void)closed;
}

task<void> accept_n(net::tcp_listener* l, int n, int* idle_closed) {
  for (int i = 0; i < n; ++i) {
    auto c = co_await l->accept();
    if (!c)
      co_return;
    saturn::spawn(serve(std::move(*c), idle_closed)).detach();
  }
}

// Sends three lines (LF and CRLF), reads the three echoes, hangs up: the count right.
task<int> talker(net::address to) {
  auto c = co_await net::tcp_stream::connect(to, 1s);
  if (!c)
    co_return 0;
  auto sent = co_await c->send(bytes_of("hello\nline two\r\nbye\n"));
  if (!sent)
    co_return 0;
  net::buffered_reader in(*c);
  int good = 0;
  for (std::string_view want : {"echo: hello", "echo: line two", "echo: bye"}) {
    auto line = co_await in.read_line();
    if (!line || !*line)
      break;
    good += **line == want ? 1 : 0;
  }
  co_return good;
}

// Connects and stays silent: the server's idle timeout closes it after a notice.
task<bool> sleeper(net::address to) {
  auto c = co_await net::tcp_stream::connect(to, 1s);
  if (!c)
    co_return false;
  net::buffered_reader in(*c);
  auto notice = co_await in.read_line();
  auto end = co_await in.read_line();
  co_return notice && *notice && **notice == "idle: closing" && end && !*end;
}

task<int> run() {
  auto listener = net::tcp_listener::bind(net::address::loopback_v4(0));
  if (!listener) {
    std::fprintf(stderr, "%s\n", listener.err().message().c_str());
    co_return 1;
  }
  const auto addr = *listener->local_address();
  int idle_closed = 0;
  auto server = saturn::spawn(accept_n(&*listener, 2, &idle_closed));
  auto quiet = saturn::spawn(sleeper(addr));
  const int echoed = co_await talker(addr);
  auto told = co_await quiet;
  co_await server;
  const bool ok = echoed == 3 && told && idle_closed == 1;
  std::printf("echoed %d/3 lines; idle connections closed: %d (%s)\n", echoed, idle_closed, ok ? "ok" : "FAILED");
  co_return ok ? 0 : 1;
}

int main() {
  saturn::runtime rt;
  return rt.block_on(run());
}
