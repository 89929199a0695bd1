// saturn::semaphore: counting, FIFO hand-off of released units, a concurrency bound,
// releases from plain threads, and cancellation (with_timeout, both orders, racing
// release) with the units conserved.
#include "sync_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <vector>

using namespace std::chrono_literals;
using sync_test::failed_with;
using sync_test::settle;

namespace {

saturn::task<> acquire_into(saturn::semaphore& s, std::optional<saturn::result<void>>& out) {
  out.emplace(co_await s.acquire());
}

}  // namespace

TEST(sync_semaphore, counts) {
  saturn::semaphore s(2);
  EXPECT_EQ(s.available(), 2u);
  EXPECT_TRUE(s.try_acquire());
  EXPECT_TRUE(s.try_acquire());
  EXPECT_FALSE(s.try_acquire());
  s.release(3);
  EXPECT_EQ(s.available(), 3u);
  s.release(0);
  EXPECT_EQ(s.available(), 3u);
}

TEST(sync_semaphore, release_hands_units_to_the_oldest_waiters) {
  saturn::runtime rt;
  saturn::semaphore s(0);
  std::vector<int> order;
  auto waiter = [&](int i) -> saturn::task<> {
    auto r = co_await s.acquire();
    EXPECT_TRUE(r.has_value());
    order.push_back(i);
  };
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 5; ++i)
      hs.push_back(rt.spawn(waiter(i)));
    co_await settle();
    s.release(3);
    EXPECT_EQ(s.available(), 0u);  // all three handed over, none counted
    co_await settle();
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
    s.release(4);  // two waiters left: they take two, two stay
    EXPECT_EQ(s.available(), 2u);
    for (auto& h : hs)
      co_await std::move(h);
  }());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(sync_semaphore, bounds_concurrency) {
  saturn::runtime rt;
  saturn::semaphore s(4);
  int inside = 0, most = 0, done = 0;
  auto worker = [&]() -> saturn::task<> {
    for (int r = 0; r < 5; ++r) {
      auto a = co_await s.acquire();
      EXPECT_TRUE(a.has_value());
      most = std::max(most, ++inside);
      co_await saturn::yield();
      co_await saturn::yield();
      --inside;
      s.release();
    }
    ++done;
  };
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 100; ++i)
      hs.push_back(rt.spawn(worker()));
    for (auto& h : hs)
      co_await std::move(h);
  }());
  EXPECT_EQ(done, 100);
  EXPECT_EQ(most, 4);
  EXPECT_EQ(s.available(), 4u);
}

TEST(sync_semaphore, releases_from_plain_threads) {
  saturn::runtime rt;
  saturn::semaphore s(0);
  constexpr int per_thread = 500, threads = 4;
  int acquired = 0;
  std::vector<std::thread> ts;
  rt.block_on([&]() -> saturn::task<> {
    for (int t = 0; t < threads; ++t)
      ts.emplace_back([&] {
        for (int i = 0; i < per_thread; ++i)
          s.release();
      });
    for (int i = 0; i < per_thread * threads; ++i) {
      auto r = co_await s.acquire();
      EXPECT_TRUE(r.has_value());
      ++acquired;
    }
  }());
  for (auto& t : ts)
    t.join();
  EXPECT_EQ(acquired, per_thread * threads);
  EXPECT_EQ(s.available(), 0u);
}

TEST(sync_semaphore, with_timeout_cancels_and_takes_no_unit) {
  saturn::runtime rt;
  saturn::semaphore s(0);
  std::optional<saturn::result<void>> inner;
  auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(2ms, acquire_into(s, inner));
  }());
  EXPECT_TRUE(failed_with(r, std::errc::timed_out));
  EXPECT_TRUE(failed_with(*inner, std::errc::operation_canceled));
  s.release();
  EXPECT_EQ(s.available(), 1u);  // went to the count, not to the departed waiter
}

TEST(sync_semaphore, cancel_and_release_in_both_orders) {
  saturn::runtime rt;
  for (bool release_first : {true, false}) {
    sync_test::stoppable stop(rt);
    saturn::semaphore s(0);
    std::optional<saturn::result<void>> out;
    rt.block_on([&]() -> saturn::task<> {
      auto h = saturn::spawn_in(stop.ctx, acquire_into(s, out));
      co_await settle();
      if (release_first) {
        s.release();
        stop.source.request_stop();
      } else {
        stop.source.request_stop();
        s.release();
      }
      co_await std::move(h);
    }());
    EXPECT_EQ(out->has_value(), release_first);
    EXPECT_EQ(s.available(), release_first ? 0u : 1u);
  }
}

TEST(sync_semaphore, cancel_races_release_on_plain_threads) {
  saturn::runtime rt;
  int ok = 0, canceled = 0;
  for (int round = 0; round < sync_test::race_rounds; ++round) {
    saturn::semaphore s(0);
    std::optional<saturn::result<void>> out;
    sync_test::race_cancel_once(
        rt, [&] { return acquire_into(s, out); }, [&] { s.release(); }, round);
    ASSERT_TRUE(out.has_value());
    // Conservation: the one released unit is either owned by the waiter or still counted.
    if (out->has_value()) {
      ++ok;
      ASSERT_EQ(s.available(), 0u) << "round " << round;
    } else {
      ++canceled;
      ASSERT_TRUE(failed_with(*out, std::errc::operation_canceled));
      ASSERT_EQ(s.available(), 1u) << "round " << round;
    }
  }
  std::printf("[ info     ] semaphore race: %d acquired, %d cancelled\n", ok, canceled);
}
