// stream_socket::set_read_timeout: a recv() or receive() that gets no byte within the
// timeout ends with timed_out and the stream stays usable (a later send is read in full);
// a stop of the task's token still reads as operation_canceled; bytes that do come are
// returned; no timer is armed while no timeout is set.
#include "net_util.hpp"

#include <saturn/task/join_handle.hpp>
#include <saturn/task/time.hpp>

#include <gtest/gtest.h>

#include <string_view>

using namespace net_test;
using saturn::result;
using saturn::runtime;
using namespace std::chrono_literals;

namespace {

using net_test::bytes_of;

// Checks the timeout on `reader` (peer `writer` sends nothing first), then that the
// stream still works: `writer` sends a message and `reader` gets all of it through recv.
task<void> recv_times_out_then_works(net::stream_socket& reader, net::stream_socket& writer) {
  reader.set_read_timeout(30ms);
  for (int i = 0; i < 3; ++i) {
    std::byte buf[64];
    auto rx = reader.recv(buf);
    auto r = co_await rx;
    CO_ASSERT_TRUE(!r.has_value());
    EXPECT_EQ(r.err(), std::errc::timed_out) << r.err().message();
    EXPECT_STREQ(r.err().operation, "recv (read timeout)");
  }
  const std::string_view msg = "after the timeouts";
  auto tx = writer.send(bytes_of(msg));
  auto w = co_await tx;
  CO_ASSERT_OK(w);
  auto got = co_await read_exactly(reader, msg.size());
  CO_ASSERT_TRUE(got.size() == msg.size());
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(got.data()), got.size()), msg);
}

}  // namespace

TEST(ReadTimeout, TcpRecvTimesOutAndStaysUsable) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = co_await connect_tcp_pair();
    CO_ASSERT_OK(p);
    co_await recv_times_out_then_works(p->server, p->client);
    // Both directions: the client side times out the same way.
    co_await recv_times_out_then_works(p->client, p->server);
  }());
}

TEST(ReadTimeout, UnixRecvTimesOutAndStaysUsable) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = net::unix_stream::pair();
    CO_ASSERT_OK(p);
    co_await recv_times_out_then_works(p->first, p->second);
  }());
}

TEST(ReadTimeout, ReceiveTimesOutAndLosesNoBytes) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = co_await connect_tcp_pair();
    CO_ASSERT_OK(p);
    p->server.set_read_timeout(30ms);
    for (int i = 0; i < 2; ++i) {
      auto rx = p->server.receive();
      auto r = co_await rx;
      CO_ASSERT_TRUE(!r.has_value());
      EXPECT_EQ(r.err(), std::errc::timed_out) << r.err().message();
      EXPECT_STREQ(r.err().operation, "recv (read timeout)");
    }
    // The multishot receive stayed armed: a large message arrives whole and in order.
    auto msg = pattern(200000, 5);
    auto tx = p->client.send(msg);
    auto w = co_await tx;
    CO_ASSERT_OK(w);
    std::vector<std::byte> got;
    while (got.size() < msg.size()) {
      auto rx = p->server.receive();
      auto r = co_await rx;
      CO_ASSERT_OK(r);
      CO_ASSERT_TRUE(!r->empty());
      got.insert(got.end(), r->begin(), r->end());
    }
    EXPECT_EQ(got, msg);
  }());
}

TEST(ReadTimeout, BytesBeforeTheDeadlineAreReturned) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = co_await connect_tcp_pair();
    CO_ASSERT_OK(p);
    p->server.set_read_timeout(10s);
    saturn::task_context& root = co_await saturn::this_task::context();
    auto sender = saturn::spawn_in(root, [](net::tcp_stream* c) -> task<void> {
      auto s = co_await saturn::sleep_for(20ms);
      (void)s;
      auto tx = c->send(bytes_of("x"));
      auto w = co_await tx;
      EXPECT_TRUE(w.has_value());
    }(&p->client));
    std::byte buf[16];
    auto rx = p->server.recv(buf);
    auto r = co_await rx;
    CO_ASSERT_OK(r);
    EXPECT_EQ(*r, 1u);
    // The recv completed: its timer is disarmed (only the sender's sleep may remain).
    co_await sender;
    EXPECT_EQ(saturn::event_loop::current()->timer_count(), 0u);
  }());
}

TEST(ReadTimeout, StopTokenStillReadsAsCancelled) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = co_await connect_tcp_pair();
    CO_ASSERT_OK(p);
    p->server.set_read_timeout(10s);
    saturn::error inner{};
    auto timed = co_await saturn::with_timeout(20ms, [](net::tcp_stream* s, saturn::error* e) -> task<result<std::size_t>> {
      std::byte buf[16];
      auto rx = s->recv(buf);
      auto r = co_await rx;
      if (!r)
        *e = r.err();
      co_return r;
    }(&p->server, &inner));
    CO_ASSERT_TRUE(!timed.has_value());
    EXPECT_EQ(inner, std::errc::operation_canceled) << inner.message();
    EXPECT_STREQ(inner.operation, "recv");
    EXPECT_EQ(saturn::event_loop::current()->timer_count(), 0u);
  }());
}

// The common path arms nothing: while a recv without a timeout waits, the loop holds no
// timer; with one set, exactly one.
TEST(ReadTimeout, NoTimerWithoutATimeout) {
  runtime rt;
  rt.block_on([]() -> task<> {
    auto p = co_await connect_tcp_pair();
    CO_ASSERT_OK(p);
    saturn::task_context& root = co_await saturn::this_task::context();
    for (std::chrono::milliseconds timeout : {0ms, 10000ms}) {
      p->server.set_read_timeout(timeout);
      auto reader = saturn::spawn_in(root, [](net::tcp_stream* s) -> task<void> {
        std::byte buf[16];
        auto rx = s->recv(buf);
        auto r = co_await rx;
        EXPECT_TRUE(r.has_value()) << r.err().message();
      }(&p->server));
      // Let the reader submit its recv (one ring round trip is plenty on one thread).
      for (int i = 0; i < 3; ++i) {
        auto n = co_await saturn::nop();
        (void)n;
      }
      EXPECT_EQ(saturn::event_loop::current()->timer_count(), timeout.count() > 0 ? 1u : 0u);
      auto tx = p->client.send(bytes_of("y"));
      auto w = co_await tx;
      CO_ASSERT_OK(w);
      co_await reader;
    }
  }());
}
