// saturn::latch and saturn::wait_group: opening at zero, waking every waiter, count-downs
// from plain threads, wait_group reuse, misuse (death tests) and cancellation.
#include "sync_test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

using namespace std::chrono_literals;
using sync_test::failed_with;
using sync_test::settle;

namespace {

template <class Primitive>
saturn::task<> wait_into(Primitive& p, std::optional<saturn::result<void>>& out) {
  out.emplace(co_await p.wait());
}

}  // namespace

TEST(sync_latch, opens_when_the_count_reaches_zero) {
  saturn::runtime rt;
  saturn::latch l(3);
  int woken = 0;
  auto waiter = [&]() -> saturn::task<> {
    if (co_await l.wait())
      ++woken;
  };
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 10; ++i)
      hs.push_back(rt.spawn(waiter()));
    co_await settle();
    l.count_down();
    l.count_down();
    co_await settle();
    EXPECT_EQ(woken, 0);
    EXPECT_FALSE(l.try_wait());
    EXPECT_EQ(l.count(), 1u);
    l.count_down();
    EXPECT_TRUE(l.try_wait());
    for (auto& h : hs)
      co_await std::move(h);
    auto again = co_await l.wait();  // open: completes at once
    EXPECT_TRUE(again.has_value());
  }());
  EXPECT_EQ(woken, 10);
}

TEST(sync_latch, zero_count_is_open) {
  saturn::latch l(0);
  EXPECT_TRUE(l.try_wait());
}

TEST(sync_latch, counted_down_by_plain_threads) {
  saturn::runtime rt;
  for (int round = 0; round < sync_test::race_rounds / 10; ++round) {
    saturn::latch l(8);
    std::vector<std::thread> ts;
    auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
      for (int t = 0; t < 4; ++t)
        ts.emplace_back([&] { l.count_down(2); });
      co_return co_await l.wait();
    }());
    for (auto& t : ts)
      t.join();
    ASSERT_TRUE(r.has_value());
  }
}

TEST(sync_latch, with_timeout_cancels_the_wait) {
  saturn::runtime rt;
  saturn::latch l(1);
  std::optional<saturn::result<void>> inner;
  auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(2ms, wait_into(l, inner));
  }());
  EXPECT_TRUE(failed_with(r, std::errc::timed_out));
  EXPECT_TRUE(failed_with(*inner, std::errc::operation_canceled));
  EXPECT_EQ(inner->err().message().rfind("latch::wait", 0), 0u) << inner->err().message();
}

TEST(sync_latch_death, count_down_below_zero_aborts) {
  EXPECT_DEATH(
      {
        saturn::latch l(1);
        l.count_down(2);
      },
      "latch::count_down");
}

TEST(sync_wait_group, waits_for_every_done) {
  saturn::runtime rt;
  saturn::wait_group wg;
  int finished = 0;
  auto job = [&](int yields) -> saturn::task<> {
    for (int i = 0; i < yields; ++i)
      co_await saturn::yield();
    ++finished;
    wg.done();
  };
  rt.block_on([&]() -> saturn::task<> {
    auto now = co_await wg.wait();  // zero: at once
    EXPECT_TRUE(now.has_value());
    for (int i = 0; i < 20; ++i) {
      wg.add(1);
      (void)rt.spawn(job(i % 5));
    }
    auto r = co_await wg.wait();
    EXPECT_TRUE(r.has_value());
    EXPECT_EQ(finished, 20);
    EXPECT_EQ(wg.count(), 0);
    co_await settle();
  }());
}

TEST(sync_wait_group, can_be_reused) {
  saturn::runtime rt;
  saturn::wait_group wg;
  rt.block_on([&]() -> saturn::task<> {
    for (int round = 0; round < 5; ++round) {
      int finished = 0;
      auto job = [&]() -> saturn::task<> {
        co_await saturn::yield();
        ++finished;
        wg.done();
      };
      wg.add(3);
      for (int i = 0; i < 3; ++i)
        (void)rt.spawn(job());
      auto r = co_await wg.wait();
      EXPECT_TRUE(r.has_value());
      EXPECT_EQ(finished, 3);
      co_await settle();  // the jobs' frames end before `job` goes out of scope
    }
  }());
}

TEST(sync_wait_group, done_from_plain_threads) {
  saturn::runtime rt;
  for (int round = 0; round < sync_test::race_rounds / 10; ++round) {
    saturn::wait_group wg;
    wg.add(4);
    std::vector<std::thread> ts;
    auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
      for (int t = 0; t < 4; ++t)
        ts.emplace_back([&] { wg.done(); });
      co_return co_await wg.wait();
    }());
    for (auto& t : ts)
      t.join();
    ASSERT_TRUE(r.has_value());
  }
}

TEST(sync_wait_group, cancel_and_done_in_both_orders) {
  saturn::runtime rt;
  for (bool done_first : {true, false}) {
    sync_test::stoppable stop(rt);
    saturn::wait_group wg;
    wg.add(1);
    std::optional<saturn::result<void>> out;
    rt.block_on([&]() -> saturn::task<> {
      auto h = saturn::spawn_in(stop.ctx, wait_into(wg, out));
      co_await settle();
      if (done_first) {
        wg.done();
        stop.source.request_stop();
      } else {
        stop.source.request_stop();
        wg.done();
      }
      co_await std::move(h);
    }());
    EXPECT_EQ(out->has_value(), done_first);
  }
}

TEST(sync_wait_group, with_timeout_cancels_the_wait) {
  saturn::runtime rt;
  saturn::wait_group wg;
  wg.add(1);
  std::optional<saturn::result<void>> inner;
  auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(2ms, wait_into(wg, inner));
  }());
  EXPECT_TRUE(failed_with(r, std::errc::timed_out));
  EXPECT_TRUE(failed_with(*inner, std::errc::operation_canceled));
  wg.done();
}

TEST(sync_wait_group_death, negative_counter_aborts) {
  EXPECT_DEATH(
      {
        saturn::wait_group wg;
        wg.add(1);
        wg.done();
        wg.done();
      },
      "negative counter");
}
