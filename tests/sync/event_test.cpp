// saturn::event: set/reset semantics, FIFO wake order, wakes from plain threads, and
// cancellation (with_timeout, an own stop token, and cancellation racing set()).
#include "sync_test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

using namespace std::chrono_literals;
using sync_test::failed_with;
using sync_test::settle;

namespace {

saturn::task<> wait_into(saturn::event& ev, std::optional<saturn::result<void>>& out) {
  out.emplace(co_await ev.wait());
}

}  // namespace

TEST(sync_event, set_reset_is_set) {
  saturn::event ev;
  EXPECT_FALSE(ev.is_set());
  ev.set();
  EXPECT_TRUE(ev.is_set());
  ev.set();  // idempotent
  EXPECT_TRUE(ev.is_set());
  ev.reset();
  EXPECT_FALSE(ev.is_set());
  EXPECT_TRUE(saturn::event(true).is_set());
}

TEST(sync_event, wait_on_a_set_event_completes_at_once) {
  saturn::runtime rt;
  saturn::event ev(true);
  auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> { co_return co_await ev.wait(); }());
  EXPECT_TRUE(r.has_value());
}

TEST(sync_event, set_wakes_every_waiter_in_fifo_order) {
  saturn::runtime rt;
  saturn::event ev;
  std::vector<int> order;
  auto waiter = [&](int i) -> saturn::task<> {
    auto r = co_await ev.wait();
    EXPECT_TRUE(r.has_value());
    order.push_back(i);
  };
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 50; ++i)
      hs.push_back(rt.spawn(waiter(i)));
    co_await settle();
    EXPECT_TRUE(order.empty());
    ev.set();
    for (auto& h : hs)
      co_await std::move(h);
  }());
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(order[i], i);
}

TEST(sync_event, reset_makes_waits_suspend_again) {
  saturn::runtime rt;
  saturn::event ev;
  std::optional<saturn::result<void>> out;
  rt.block_on([&]() -> saturn::task<> {
    ev.set();
    ev.reset();
    auto h = rt.spawn(wait_into(ev, out));
    co_await settle();
    EXPECT_FALSE(out.has_value());
    ev.set();
    co_await std::move(h);
  }());
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->has_value());
}

TEST(sync_event, set_from_plain_threads_wakes_the_runtime) {
  saturn::runtime rt;
  for (int round = 0; round < sync_test::race_rounds; ++round) {
    saturn::event ev;
    std::atomic<bool> waiting{false};
    std::optional<std::thread> t;
    auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
      t.emplace([&] {
        sync_test::spin_until(waiting);
        ev.set();
      });
      waiting.store(true, std::memory_order_release);
      co_return co_await ev.wait();
    }());
    t->join();
    ASSERT_TRUE(r.has_value()) << "round " << round;
  }
}

TEST(sync_event, many_waiters_woken_from_a_plain_thread) {
  saturn::runtime rt;
  saturn::event ev;
  int woken = 0;
  auto waiter = [&]() -> saturn::task<> {
    if (co_await ev.wait())
      ++woken;
  };
  std::optional<std::thread> t;
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 200; ++i)
      hs.push_back(rt.spawn(waiter()));
    co_await settle();
    t.emplace([&] { ev.set(); });
    for (auto& h : hs)
      co_await std::move(h);
  }());
  t->join();
  EXPECT_EQ(woken, 200);
}

TEST(sync_event, with_timeout_cancels_the_wait) {
  saturn::runtime rt;
  saturn::event ev;
  std::optional<saturn::result<void>> inner;
  auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(2ms, wait_into(ev, inner));
  }());
  EXPECT_TRUE(failed_with(r, std::errc::timed_out));
  ASSERT_TRUE(inner.has_value());
  EXPECT_TRUE(failed_with(*inner, std::errc::operation_canceled));
  EXPECT_EQ(inner->err().message().rfind("event::wait", 0), 0u) << inner->err().message();
  // The cancelled waiter left the event: a later set() and wait still work.
  ev.set();
  EXPECT_TRUE(rt.block_on([&]() -> saturn::task<saturn::result<void>> { co_return co_await ev.wait(); }()).has_value());
}

TEST(sync_event, stopped_token_cancels_only_a_wait_that_would_suspend) {
  saturn::runtime rt;
  sync_test::stoppable stop(rt);
  stop.source.request_stop();
  saturn::event ev;
  std::optional<saturn::result<void>> out;
  rt.block_on([&]() -> saturn::task<> { co_await saturn::spawn_in(stop.ctx, wait_into(ev, out)); }());
  EXPECT_TRUE(failed_with(*out, std::errc::operation_canceled));
  ev.set();  // completes at once: no cancellation needed
  rt.block_on([&]() -> saturn::task<> { co_await saturn::spawn_in(stop.ctx, wait_into(ev, out)); }());
  EXPECT_TRUE(out->has_value());
}

TEST(sync_event, cancel_and_set_in_both_orders) {
  saturn::runtime rt;
  for (bool set_first : {true, false}) {
    sync_test::stoppable stop(rt);
    saturn::event ev;
    std::optional<saturn::result<void>> out;
    rt.block_on([&]() -> saturn::task<> {
      auto h = saturn::spawn_in(stop.ctx, wait_into(ev, out));
      co_await settle();
      if (set_first) {
        ev.set();
        stop.source.request_stop();
      } else {
        stop.source.request_stop();
        ev.set();
      }
      co_await std::move(h);
    }());
    ASSERT_TRUE(out.has_value());
    if (set_first)
      EXPECT_TRUE(out->has_value());
    else
      EXPECT_TRUE(failed_with(*out, std::errc::operation_canceled));
  }
}

TEST(sync_event, cancel_races_set_on_plain_threads) {
  saturn::runtime rt;
  int ok = 0, canceled = 0;
  for (int round = 0; round < sync_test::race_rounds; ++round) {
    saturn::event ev;
    std::optional<saturn::result<void>> out;
    sync_test::race_cancel_once(
        rt, [&] { return wait_into(ev, out); }, [&] { ev.set(); }, round);
    ASSERT_TRUE(out.has_value());
    if (out->has_value())
      ++ok;
    else if (failed_with(*out, std::errc::operation_canceled))
      ++canceled;
    else
      FAIL() << out->err().message();
  }
  EXPECT_EQ(ok + canceled, sync_test::race_rounds);
  std::printf("[ info     ] event race: %d woken by set, %d cancelled\n", ok, canceled);
}

TEST(sync_event, with_timeout_races_set_from_a_plain_thread) {
  saturn::runtime rt;
  for (int round = 0; round < sync_test::race_rounds / 4; ++round) {
    saturn::event ev;
    std::optional<saturn::result<void>> inner;
    std::optional<std::thread> t;
    auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
      t.emplace([&] { ev.set(); });
      co_return co_await saturn::with_timeout(std::chrono::microseconds(round % 50), wait_into(ev, inner));
    }());
    t->join();
    ASSERT_TRUE(inner.has_value());
    // Consistent outcomes only: the inner wait succeeded or was cancelled.
    EXPECT_TRUE(inner->has_value() || failed_with(*inner, std::errc::operation_canceled));
    if (!inner->has_value()) {
      EXPECT_TRUE(failed_with(r, std::errc::timed_out));
    }
  }
}

TEST(sync_event, destroyed_runtime_with_a_waiting_task_is_safe_in_either_order) {
  // The event outlives the runtime: ~waiter unlinks the destroyed frame's waiter.
  saturn::event outer;
  {
    saturn::runtime rt;
    std::optional<saturn::result<void>> out;
    rt.block_on([&]() -> saturn::task<> {
      (void)rt.spawn(wait_into(outer, out));
      co_await settle();
    }());
  }
  outer.set();  // must not touch the destroyed frame
  // The runtime outlives the event: ~waiter_list detaches the waiter.
  saturn::runtime rt;
  std::optional<saturn::result<void>> out;
  {
    saturn::event inner;
    rt.block_on([&]() -> saturn::task<> {
      (void)rt.spawn(wait_into(inner, out));
      co_await settle();
    }());
  }
  EXPECT_FALSE(out.has_value());
}
