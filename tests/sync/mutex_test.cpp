// saturn::mutex: try_lock and guards, FIFO hand-off, an invariant under 1,000 contending
// tasks that yield inside the critical section, plain threads using try_lock/unlock, and
// cancellation of lock() (with_timeout, both orders, racing unlock).
#include "sync_test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

using namespace std::chrono_literals;
using sync_test::failed_with;
using sync_test::settle;

namespace {

/// Locks `m`, records the outcome; holds the lock for one yield when it got it.
saturn::task<> lock_into(saturn::mutex& m, std::optional<bool>& got) {
  auto g = co_await m.lock();
  got = g.has_value();
  if (!g.has_value()) {
    EXPECT_TRUE(failed_with(g, std::errc::operation_canceled)) << g.err().message();
  }
  co_await saturn::yield();
}

}  // namespace

TEST(sync_mutex, try_lock_and_guard) {
  saturn::mutex m;
  EXPECT_FALSE(m.is_locked());
  auto g = m.try_lock();
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(g->owns_lock());
  EXPECT_TRUE(m.is_locked());
  EXPECT_FALSE(m.try_lock().has_value());
  saturn::mutex::guard moved = std::move(*g);
  EXPECT_FALSE(g->owns_lock());
  EXPECT_TRUE(moved.owns_lock());
  moved.unlock();
  moved.unlock();  // idempotent
  EXPECT_FALSE(m.is_locked());
  { auto g2 = m.try_lock(); }
  EXPECT_FALSE(m.is_locked());
}

TEST(sync_mutex, lock_when_free_completes_at_once) {
  saturn::runtime rt;
  saturn::mutex m;
  rt.block_on([&]() -> saturn::task<> {
    auto g = co_await m.lock();
    EXPECT_TRUE(g.has_value());
    EXPECT_TRUE(m.is_locked());
  }());
  EXPECT_FALSE(m.is_locked());
}

TEST(sync_mutex, unlock_hands_the_lock_to_waiters_in_fifo_order) {
  saturn::runtime rt;
  saturn::mutex m;
  std::vector<int> order;
  auto locker = [&](int i) -> saturn::task<> {
    auto g = co_await m.lock();
    EXPECT_TRUE(g.has_value());
    order.push_back(i);
    co_await saturn::yield();
  };
  rt.block_on([&]() -> saturn::task<> {
    auto held = m.try_lock();
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 20; ++i)
      hs.push_back(rt.spawn(locker(i)));
    co_await settle();
    EXPECT_TRUE(order.empty());
    held->unlock();
    // No barging: the lock went to waiter 0, so a try_lock now fails.
    EXPECT_FALSE(m.try_lock().has_value());
    for (auto& h : hs)
      co_await std::move(h);
  }());
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(order[i], i);
  EXPECT_FALSE(m.is_locked());
}

TEST(sync_mutex, thousand_tasks_keep_the_invariant_with_yields_inside) {
  constexpr int tasks = 1000, rounds = 3;
  saturn::runtime rt;
  saturn::mutex m;
  long counter = 0;  // deliberately not atomic: only the mutex protects it
  int inside = 0;
  int violations = 0;
  auto worker = [&]() -> saturn::task<> {
    for (int r = 0; r < rounds; ++r) {
      auto g = co_await m.lock();
      if (!g) {
        ++violations;
        co_return;
      }
      if (++inside != 1)
        ++violations;
      long v = counter;
      co_await saturn::yield();  // everyone else runs here and must queue on the lock
      counter = v + 1;
      co_await saturn::yield();
      --inside;
    }
  };
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    hs.reserve(tasks);
    for (int i = 0; i < tasks; ++i)
      hs.push_back(rt.spawn(worker()));
    for (auto& h : hs)
      co_await std::move(h);
  }());
  EXPECT_EQ(violations, 0);
  EXPECT_EQ(counter, long{tasks} * rounds);
  EXPECT_FALSE(m.is_locked());
}

TEST(sync_mutex, tasks_and_plain_threads_share_the_lock) {
  saturn::runtime rt;
  saturn::mutex m;
  long counter = 0;  // protected by m only
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      int done = 0;
      while (done < 2000 && !stop.load(std::memory_order_relaxed)) {
        if (auto g = m.try_lock()) {
          ++counter;
          ++done;
        } else {
          std::this_thread::yield();
        }
      }
    });
  auto worker = [&]() -> saturn::task<> {
    for (int r = 0; r < 200; ++r) {
      auto g = co_await m.lock();
      EXPECT_TRUE(g.has_value());
      long v = counter;
      co_await saturn::yield();
      counter = v + 1;
    }
  };
  rt.block_on([&]() -> saturn::task<> {
    std::vector<saturn::join_handle<void>> hs;
    for (int i = 0; i < 10; ++i)
      hs.push_back(rt.spawn(worker()));
    for (auto& h : hs)
      co_await std::move(h);
  }());
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(counter, 10 * 200 + 2 * 2000);
}

TEST(sync_mutex, with_timeout_cancels_a_waiting_lock) {
  saturn::runtime rt;
  saturn::mutex m;
  std::optional<bool> got;
  auto held = m.try_lock();
  auto r = rt.block_on([&]() -> saturn::task<saturn::result<void>> {
    co_return co_await saturn::with_timeout(2ms, lock_into(m, got));
  }());
  EXPECT_TRUE(failed_with(r, std::errc::timed_out));
  ASSERT_TRUE(got.has_value());
  EXPECT_FALSE(*got);
  // The cancelled waiter is gone: unlocking frees the mutex instead of handing it over.
  held->unlock();
  EXPECT_FALSE(m.is_locked());
}

TEST(sync_mutex, cancel_and_unlock_in_both_orders) {
  saturn::runtime rt;
  for (bool unlock_first : {true, false}) {
    sync_test::stoppable stop(rt);
    saturn::mutex m;
    std::optional<bool> got;
    rt.block_on([&]() -> saturn::task<> {
      auto held = m.try_lock();
      auto h = saturn::spawn_in(stop.ctx, lock_into(m, got));
      co_await settle();
      if (unlock_first) {
        held->unlock();
        stop.source.request_stop();
      } else {
        stop.source.request_stop();
        held->unlock();
      }
      co_await std::move(h);
    }());
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, unlock_first);
    EXPECT_FALSE(m.is_locked()) << "the lock leaked (unlock_first=" << unlock_first << ")";
  }
}

TEST(sync_mutex, cancel_races_unlock_on_plain_threads) {
  saturn::runtime rt;
  int ok = 0, canceled = 0;
  for (int round = 0; round < sync_test::race_rounds; ++round) {
    saturn::mutex m;
    auto held = m.try_lock();
    std::optional<bool> got;
    sync_test::race_cancel_once(
        rt, [&] { return lock_into(m, got); }, [&] { held->unlock(); }, round);
    ASSERT_TRUE(got.has_value());
    (*got ? ok : canceled)++;
    // Whoever won, the lock is free again: never leaked, never held twice.
    ASSERT_FALSE(m.is_locked()) << "round " << round;
  }
  std::printf("[ info     ] mutex race: %d got the lock, %d cancelled\n", ok, canceled);
}
