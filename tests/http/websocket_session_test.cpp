// websocket::session over loopback TCP: a saturn server task that reads the upgrade with
// the request parser, answers 101 and echoes through a session, against a client written
// with blocking POSIX sockets and the test's masked-frame builder on its own thread.
#include "http_test_support.hpp"
#include "websocket_test_support.hpp"

#include <saturn/http/parser.hpp>
#include <saturn/net.hpp>
#include <saturn/task/runtime.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <thread>

using namespace ws_test;
using saturn::task;
namespace net = saturn::net;
using namespace std::chrono_literals;

namespace {

struct server_log {
  std::vector<std::size_t> capacities;  // buffer size when each message was received
  std::optional<std::uint16_t> close_code;
  std::string close_reason;
  std::error_code error;
  bool upgraded = false;
};

enum class mode { echo, greet_and_close };

using ws_test::as_span;

task<void> serve_one(net::tcp_listener& l, mode how, server_log& log) {
  auto c = co_await l.accept();
  if (!c) {
    ADD_FAILURE() << c.err().message();
    co_return;
  }
  std::string buf(4096, '\0');
  std::size_t len = 0;
  saturn::http::request_parser p;
  for (;;) {
    auto rd = c->recv(std::as_writable_bytes(std::span<char>(buf.data() + len, buf.size() - len)));
    auto n = co_await rd;
    if (!n || *n == 0) {
      ADD_FAILURE() << "the upgrade request did not arrive";
      co_return;
    }
    len += *n;
    const auto st = p.parse(buf.data(), len);
    if (st == saturn::http::parse_status::complete)
      break;
    if (st == saturn::http::parse_status::error) {
      ADD_FAILURE() << "bad upgrade request: " << p.error_reason();
      co_return;
    }
  }
  const ws::upgrade_check chk = ws::check_upgrade(p.get());
  if (!chk) {
    ADD_FAILURE() << chk.reason;
    co_return;
  }
  const std::string answer = ws::handshake_response(chk.key);
  auto tx = c->send(as_span(answer));
  auto w = co_await tx;
  if (!w)
    co_return;
  log.upgraded = true;
  const std::span<const std::byte> leftover = as_span(std::string_view(buf).substr(p.consumed(), len - p.consumed()));
  ws::session<net::tcp_stream> s(std::move(*c), leftover);
  for (;;) {
    auto m = co_await s.receive();
    if (!m) {
      log.error = m.err().code;
      break;
    }
    if (m->kind == ws::message_kind::close) {
      log.close_code = m->code;
      log.close_reason = std::string(m->text());
      break;
    }
    log.capacities.push_back(s.buffer_capacity());
    if (how == mode::greet_and_close) {
      auto g = co_await s.send_text("greetings");
      EXPECT_TRUE(g.has_value());
      auto cl = co_await s.close(ws::close_code::going_away, "going");
      EXPECT_TRUE(cl.has_value());
      log.close_code = ws::close_code::going_away;
      break;
    }
    auto e = co_await s.echo(*m);
    if (!e) {
      log.error = e.err().code;
      break;
    }
  }
  auto cl = s.stream().close();
  (void)co_await cl;
}

/// Runs `client_side(port)` on a thread against one connection served with `how`.
server_log run(mode how, const std::function<void(std::uint16_t)>& client_side) {
  server_log log;
  saturn::runtime rt;
  auto l = net::tcp_listener::bind(net::address::loopback_v4(0));
  if (!l) {
    ADD_FAILURE() << l.err().message();
    return log;
  }
  const std::uint16_t port = l->local_address()->port();
  std::thread client([&] { client_side(port); });
  rt.block_on(serve_one(*l, how, log));
  client.join();
  return log;
}

const std::string k_upgrade =
    "GET /ws HTTP/1.1\r\nHost: localhost:8080\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

/// Sends the upgrade (and `first`, in the same write) and checks the 101 answer.
bool upgrade(http_test::client& c, const std::string& first = {}) {
  c.send(k_upgrade + first);
  for (;;) {
    const std::size_t end = c.buffer.find("\r\n\r\n");
    if (end != std::string::npos) {
      const std::string head = c.buffer.substr(0, end + 4);
      c.buffer.erase(0, end + 4);
      EXPECT_EQ(head.rfind("HTTP/1.1 101 ", 0), 0u) << head;
      EXPECT_NE(head.find("\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), std::string::npos) << head;
      return head.rfind("HTTP/1.1 101 ", 0) == 0;
    }
    if (c.eof || !c.read_some(5000ms)) {
      ADD_FAILURE() << "no 101 answer";
      return false;
    }
  }
}

std::optional<server_frame> read_frame(http_test::client& c) {
  for (;;) {
    auto f = take_server_frame(c.buffer);
    if (f) {
      EXPECT_FALSE(f->masked) << "a server frame must not be masked";
      EXPECT_EQ(f->rsv, 0);
      return f;
    }
    if (c.eof || !c.read_some(5000ms))
      return std::nullopt;
  }
}

void expect_frame(http_test::client& c, std::uint8_t op, const std::string& payload, const char* what) {
  auto f = read_frame(c);
  ASSERT_TRUE(f) << what << ": no frame";
  EXPECT_TRUE(f->fin) << what;
  EXPECT_EQ(f->op, op) << what;
  EXPECT_EQ(f->payload.size(), payload.size()) << what;
  EXPECT_TRUE(f->payload == payload) << what;
}

void expect_close_then_eof(http_test::client& c, std::uint16_t code, const char* what) {
  expect_frame(c, 0x8, close_payload(code), what);
  EXPECT_TRUE(c.read_until_close()) << what << ": the server kept the connection open";
  EXPECT_TRUE(c.buffer.empty()) << what << ": bytes after the close";
}

}  // namespace

TEST(WebsocketSession, IdleStateIsSmall) {
  // The per-connection cost while idle is this plus session_options::initial_buffer.
  EXPECT_LE(sizeof(ws::session<net::tcp_stream>), 256u);
  EXPECT_EQ(ws::session_options{}.initial_buffer, 512u);
}

TEST(WebsocketSession, EchoesEveryKindOfMessageAndClosesCleanly) {
  const std::string bin256 = pattern(256, 5), big = pattern(70000, 6);
  auto log = run(mode::echo, [&](std::uint16_t port) {
    http_test::client c(port);
    ASSERT_TRUE(upgrade(c, text("first")));  // a frame in the same packet as the upgrade
    expect_frame(c, 0x1, "first", "leftover frame");
    c.send(text("hello"));
    expect_frame(c, 0x1, "hello", "text");
    c.send(binary(bin256));
    expect_frame(c, 0x2, bin256, "256-byte binary (16-bit length)");
    c.send(binary(big));
    expect_frame(c, 0x2, big, "70 KB binary (64-bit length)");
    c.send(text("small after big"));
    expect_frame(c, 0x1, "small after big", "after a big one");
    c.send(text("Hel\xce", false) + ping("pi") + cont("\xba" "lo"));
    expect_frame(c, 0xA, "pi", "pong inside a fragmented message");
    expect_frame(c, 0x1, "Hel\xce\xbalo", "fragmented text");
    c.send(ping("x"));
    expect_frame(c, 0xA, "x", "pong");
    c.send(pong("unsolicited") + text("after pong"));
    expect_frame(c, 0x1, "after pong", "a pong gets no answer");
    std::string five;
    for (int i = 0; i < 5; ++i)
      five += text("msg-" + std::to_string(i));
    c.send(five);
    for (int i = 0; i < 5; ++i)
      expect_frame(c, 0x1, "msg-" + std::to_string(i), "back to back");
    c.send(ws_test::close(1000, "done"));
    expect_close_then_eof(c, 1000, "close handshake");
  });
  EXPECT_TRUE(log.upgraded);
  ASSERT_TRUE(log.close_code);
  EXPECT_EQ(*log.close_code, 1000);
  EXPECT_EQ(log.close_reason, "done");
  EXPECT_FALSE(log.error) << log.error.message();
  ASSERT_EQ(log.capacities.size(), 12u);
  EXPECT_EQ(log.capacities[0], 512u);
  EXPECT_GE(log.capacities[3], 70000u);
  EXPECT_EQ(log.capacities[4], 512u) << "the buffer shrinks back after a large message";
  EXPECT_EQ(log.capacities.back(), 512u);
}

TEST(WebsocketSession, ProtocolErrorsAreClosedWithTheirCode) {
  struct row {
    std::string frames;
    std::uint16_t code;
    const char* what;
  } rows[] = {
      {client_frame(0x81, "hello", false), 1002, "unmasked client frame"},
      {text("\xed\xa0\x80"), 1007, "invalid UTF-8"},
      {text("\xe2\x82", false) + cont("\xac\xc0\xaf"), 1007, "invalid UTF-8 across fragments"},
      {cont("x"), 1002, "continuation without a start"},
      {client_frame(0xC1, "x"), 1002, "RSV1 without extension"},
      {client_frame(0x88, "\x03"), 1002, "close with a 1-byte payload"},
      {ws_test::close(1005), 1002, "close with a reserved code"},
      {binary(std::string(2u << 20, 'x')).substr(0, 14), 1009, "a message over 1 MiB"},
  };
  for (const row& r : rows) {
    auto log = run(mode::echo, [&](std::uint16_t port) {
      http_test::client c(port);
      ASSERT_TRUE(upgrade(c));
      c.send(text("ok") + r.frames);
      expect_frame(c, 0x1, "ok", r.what);
      expect_close_then_eof(c, r.code, r.what);
    });
    EXPECT_EQ(log.error.value(), r.code) << r.what;
    EXPECT_EQ(&log.error.category(), &ws::error_category()) << r.what;
  }
}

TEST(WebsocketSession, EmptyCloseIsAnsweredWith1000) {
  auto log = run(mode::echo, [&](std::uint16_t port) {
    http_test::client c(port);
    ASSERT_TRUE(upgrade(c));
    c.send(client_frame(0x88, ""));
    expect_close_then_eof(c, 1000, "empty close");
  });
  ASSERT_TRUE(log.close_code);
  EXPECT_EQ(*log.close_code, ws::close_code::no_status);
}

TEST(WebsocketSession, EndOfStreamWithoutCloseIs1006) {
  auto log = run(mode::echo, [&](std::uint16_t port) {
    http_test::client c(port);
    ASSERT_TRUE(upgrade(c));
    c.send(text("bye", false));  // half a message, then the socket goes
  });
  EXPECT_EQ(log.error.value(), ws::close_code::abnormal);
  EXPECT_EQ(&log.error.category(), &ws::error_category());
}

TEST(WebsocketSession, ServerInitiatedCloseWaitsForThePeersClose) {
  auto log = run(mode::greet_and_close, [&](std::uint16_t port) {
    http_test::client c(port);
    ASSERT_TRUE(upgrade(c));
    c.send(text("hi"));
    expect_frame(c, 0x1, "greetings", "sent by the server");
    expect_frame(c, 0x8, close_payload(1001, "going"), "the server's close");
    c.send(text("late data is dropped") + ws_test::close(1001));
    EXPECT_TRUE(c.read_until_close());
    EXPECT_TRUE(c.buffer.empty()) << "nothing after the server's close";
  });
  ASSERT_TRUE(log.close_code);
  EXPECT_EQ(*log.close_code, 1001);
  EXPECT_FALSE(log.error) << log.error.message();
}
