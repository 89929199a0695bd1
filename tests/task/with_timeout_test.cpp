// with_timeout's outcome rules, task by task type: a plain T (int, void) never reports
// success after the deadline fired, even when the child returned a value after its stop;
// a result<U> child is flattened (result<U>, not result<result<U>>), keeps its own error
// when it ended in time, and keeps a value it still produced after the stop; the
// awaitable overload (a socket recv, a sleep, an event wait, a join handle) cancels the
// awaited operation in the kernel and leaves the descriptor usable; the caller's own stop
// token cancels too, reported as operation_canceled rather than timed_out.
#include <gtest/gtest.h>
#include <saturn/saturn.hpp>

#include <memory>
#include <stop_token>
#include <string>
#include <type_traits>

namespace {

using namespace std::chrono_literals;
using saturn::result;
using saturn::task;
namespace net = saturn::net;

/// A child that ignores its stop: whatever its sleep says, it returns `v`.
task<int> stubborn_int(std::chrono::milliseconds sleep, int v, bool* ended) {
  auto s = co_await saturn::sleep_for(sleep);
  (void)s;
  *ended = true;
  co_return v;
}

task<result<int>> stubborn_result(std::chrono::milliseconds sleep, int v) {
  auto s = co_await saturn::sleep_for(sleep);
  (void)s;
  co_return v;
}

/// Passes its sleep's error up, as well-behaved children do.
task<result<int>> dutiful_result(std::chrono::milliseconds sleep, int v) {
  auto s = co_await saturn::sleep_for(sleep);
  if (!s)
    co_return s.err();
  co_return v;
}

task<result<int>> failing_result() {
  co_await saturn::yield();
  co_return saturn::error{std::make_error_code(std::errc::io_error), "parse"};
}

bool is_error(const saturn::error& e, std::errc c, const char* op) {
  return e == c && std::string(e.operation) == op;
}

static_assert(std::is_same_v<decltype(saturn::with_timeout(1s, std::declval<task<int>>())), task<result<int>>>);
static_assert(std::is_same_v<decltype(saturn::with_timeout(1s, std::declval<task<>>())), task<result<void>>>);
static_assert(std::is_same_v<decltype(saturn::with_timeout(1s, std::declval<task<result<int>>>())), task<result<int>>>,
              "a result<U> task is flattened");
static_assert(std::is_same_v<decltype(saturn::with_timeout(1s, saturn::sleep_for(1s))), task<result<void>>>);
static_assert(std::is_same_v<decltype(saturn::with_timeout(1s, std::declval<saturn::join_handle<int>>())),
                             task<result<int>>>);

}  // namespace

// The child's sleep is cancelled by the deadline, and the child still returns 7: the
// outcome is timed_out, not 7.
TEST(task_with_timeout, an_int_task_past_its_deadline_is_timed_out_even_if_it_returns_a_value) {
  saturn::runtime rt;
  bool ended = false;
  auto r = rt.block_on([](bool* e) -> task<result<int>> { co_return co_await saturn::with_timeout(2ms, stubborn_int(10s, 7, e)); }(&ended));
  EXPECT_TRUE(ended) << "with_timeout returned before its child ended";
  ASSERT_FALSE(r.has_value()) << "a value after the deadline: " << *r;
  EXPECT_TRUE(is_error(r.err(), std::errc::timed_out, "with_timeout")) << r.err().message();
}

TEST(task_with_timeout, an_int_task_that_finishes_first_gives_its_value) {
  saturn::runtime rt;
  bool ended = false;
  auto r = rt.block_on([](bool* e) -> task<result<int>> { co_return co_await saturn::with_timeout(10s, stubborn_int(1ms, 7, e)); }(&ended));
  ASSERT_TRUE(r.has_value()) << r.err().message();
  EXPECT_EQ(*r, 7);
  EXPECT_EQ(rt.loop().timer_count(), 0u);  // the deadline was disarmed
}

TEST(task_with_timeout, a_void_task_in_time_and_past_its_deadline) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    auto quick = co_await saturn::with_timeout(10s, []() -> task<> {
      auto s = co_await saturn::sleep_for(100us);
      EXPECT_TRUE(s.has_value());
    }());
    EXPECT_TRUE(quick.has_value());
    auto slow = co_await saturn::with_timeout(2ms, []() -> task<> {
      auto s = co_await saturn::sleep_for(10s);
      EXPECT_FALSE(s.has_value());
    }());
    EXPECT_FALSE(slow.has_value());
    if (!slow) {
      EXPECT_TRUE(is_error(slow.err(), std::errc::timed_out, "with_timeout")) << slow.err().message();
    }
  }());
}

TEST(task_with_timeout, a_result_task_is_flattened_and_keeps_its_own_outcome_in_time) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    auto v = co_await saturn::with_timeout(10s, dutiful_result(1ms, 11));
    EXPECT_TRUE(v.has_value());
    if (v) {
      EXPECT_EQ(*v, 11);
    }
    // its own error, before the deadline: as is, not timed_out
    auto e = co_await saturn::with_timeout(10s, failing_result());
    EXPECT_FALSE(e.has_value());
    if (!e) {
      EXPECT_TRUE(is_error(e.err(), std::errc::io_error, "parse")) << e.err().message();
    }
  }());
}

TEST(task_with_timeout, a_result_task_past_its_deadline) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    // the child reports its cancelled sleep: timed_out
    auto e = co_await saturn::with_timeout(2ms, dutiful_result(10s, 1));
    EXPECT_FALSE(e.has_value());
    if (!e) {
      EXPECT_TRUE(is_error(e.err(), std::errc::timed_out, "with_timeout")) << e.err().message();
    }
    // the child still produced a value after the stop: kept (nothing computed is lost)
    auto v = co_await saturn::with_timeout(2ms, stubborn_result(10s, 5));
    EXPECT_TRUE(v.has_value());
    if (v) {
      EXPECT_EQ(*v, 5);
    }
  }());
}

// The awaitable overload around a recv that never gets data: timed_out, the recv was
// cancelled in the kernel (nothing in flight), and the socket still works: the next
// byte sent arrives at the next recv, not at a stale one.
TEST(task_with_timeout, an_awaited_recv_times_out_and_the_socket_stays_usable) {
  saturn::runtime rt;
  auto pair = net::unix_stream::pair();
  ASSERT_TRUE(pair.has_value()) << pair.err().message();
  auto& [a, b] = *pair;
  rt.block_on([](net::unix_stream* rx, net::unix_stream* tx) -> task<> {
    std::string buf(4, '\0');
    auto buffer = std::as_writable_bytes(std::span<char>(buf.data(), buf.size()));
    auto r = co_await saturn::with_timeout(3ms, rx->recv(buffer));
    EXPECT_FALSE(r.has_value());
    if (!r) {
      EXPECT_TRUE(is_error(r.err(), std::errc::timed_out, "with_timeout")) << r.err().message();
    }
    EXPECT_EQ(saturn::event_loop::current()->in_flight(), 0u);
    std::string z = "z";
    auto send = tx->send(std::as_bytes(std::span<const char>(z.data(), 1)));
    auto sent = co_await send;
    EXPECT_TRUE(sent.has_value());
    auto again = co_await saturn::with_timeout(10s, rx->recv(buffer));
    EXPECT_TRUE(again.has_value());
    if (again) {
      EXPECT_EQ(*again, 1u);
      EXPECT_EQ(buf[0], 'z');
    }
  }(&a, &b));
}

TEST(task_with_timeout, awaitables_sleep_event_wait_and_join_handle) {
  saturn::runtime rt;
  rt.block_on([]() -> task<> {
    auto short_sleep = co_await saturn::with_timeout(10s, saturn::sleep_for(100us));
    EXPECT_TRUE(short_sleep.has_value());
    auto long_sleep = co_await saturn::with_timeout(2ms, saturn::sleep_for(10s));
    EXPECT_FALSE(long_sleep.has_value());
    if (!long_sleep) {
      EXPECT_TRUE(is_error(long_sleep.err(), std::errc::timed_out, "with_timeout")) << long_sleep.err().message();
    }
    // an event nobody sets: the wait is cancelled and leaves no waiter behind
    saturn::event ev;
    static_assert(std::is_same_v<decltype(saturn::with_timeout(1s, ev.wait())), task<result<void>>>);
    auto waited = co_await saturn::with_timeout(2ms, ev.wait());
    EXPECT_FALSE(waited.has_value());
    ev.set();
    auto set_wait = co_await saturn::with_timeout(10s, ev.wait());
    EXPECT_TRUE(set_wait.has_value());
    // a join handle (move-only, awaited through its operator co_await)
    auto h = saturn::spawn([]() -> task<int> {
      co_await saturn::yield();
      co_return 42;
    }());
    auto joined = co_await saturn::with_timeout(10s, std::move(h));
    EXPECT_TRUE(joined.has_value());
    if (joined) {
      EXPECT_EQ(*joined, 42);
    }
  }());
}

// A stop on the caller's own token (not the deadline) cancels the child; the outcome says
// operation_canceled, so it cannot be mistaken for the deadline — nor, for a plain T,
// for success.
TEST(task_with_timeout, the_callers_own_stop_token_cancels) {
  saturn::runtime rt;
  std::stop_source stop;
  saturn::task_context ctx = rt.root_context();
  ctx.token = stop.get_token();
  struct outcome {
    std::optional<result<int>> plain;
    std::optional<result<int>> flattened;
    saturn::clock::duration took{};
  } out;
  rt.block_on([](saturn::task_context* c, std::stop_source* s, outcome* o) -> task<> {
    auto stopper = saturn::spawn([](std::stop_source* src) -> task<> {
      (void)co_await saturn::sleep_for(2ms);
      src->request_stop();
    }(s));
    auto h = saturn::spawn_in(*c, [](outcome* oo) -> task<> {
      const auto t0 = saturn::clock::now();
      bool ended = false;
      oo->plain = co_await saturn::with_timeout(10s, stubborn_int(10s, 7, &ended));
      oo->flattened = co_await saturn::with_timeout(10s, dutiful_result(10s, 1));  // already stopped
      oo->took = saturn::clock::now() - t0;
    }(o));
    co_await std::move(stopper);
    co_await std::move(h);
  }(&ctx, &stop, &out));
  ASSERT_TRUE(out.plain.has_value());
  ASSERT_FALSE(out.plain->has_value()) << "success after a stop: " << **out.plain;
  EXPECT_TRUE(is_error(out.plain->err(), std::errc::operation_canceled, "with_timeout")) << out.plain->err().message();
  ASSERT_TRUE(out.flattened.has_value());
  ASSERT_FALSE(out.flattened->has_value());
  EXPECT_TRUE(is_error(out.flattened->err(), std::errc::operation_canceled, "with_timeout"))
      << out.flattened->err().message();
  EXPECT_LT(out.took, 5s);
}
